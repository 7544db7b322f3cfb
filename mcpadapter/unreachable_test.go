package mcpadapter

import (
	"net"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers/github"
	"github.com/switchboard-hub/switchboard/router"
)

// TestUnreachableBaseURLNamedToTheOperator calls a GitHub tool on a deployment whose
// GitHub base URL has nothing listening: the deployment's operator, who set that URL,
// reads the address dialled and "connection refused" in the tool error; another person
// of the tenant reads that GitHub could not be reached, without the address.
func TestUnreachableBaseURLNamedToTheOperator(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	operator := alice
	operator.Operator = true
	e := newEnvWith(t, func(o *Options) {
		o.Auth = keys{"key-alice": alice, "key-operator": operator}
	}, func(o *router.Options) {
		if err := o.Registry.Register(github.Spec()); err != nil {
			t.Fatal(err)
		}
		_ = o.Registry.SetBaseURL("github", "http://"+addr)
	})
	e.conns.set(connections.Connection{ID: "con_gh", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "github", AccountLabel: "octocat", Status: connections.StatusActive})
	args := map[string]any{"owner": "octo-org", "repo": "hello", "issue_number": 7}

	c, err := e.client(t, "acme", "key-operator")
	if err != nil {
		t.Fatal(err)
	}
	res := call(t, c, "github_get_issue", args)
	if got := text(res); !res.IsError || !strings.Contains(got, "GitHub could not be reached") || !strings.Contains(got, addr) || !strings.Contains(got, "connection refused") {
		t.Errorf("the operator's call: isError %v, %q; want the address %s and connection refused", res.IsError, got, addr)
	}

	c, err = e.client(t, "acme", "key-alice")
	if err != nil {
		t.Fatal(err)
	}
	res = call(t, c, "github_get_issue", args)
	got := text(res)
	if !res.IsError || !strings.Contains(got, "GitHub could not be reached") {
		t.Errorf("a member's call: isError %v, %q; want GitHub could not be reached", res.IsError, got)
	}
	if strings.Contains(got, addr) || strings.Contains(got, "connection refused") {
		t.Errorf("a member's call answers the deployment's address: %q", got)
	}
}
