package openapis

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/feedtest"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
)

// TestFeed: adding or deleting a tenant's API is published on the change feed, and a
// node that built the API's tools drops them when it hears another node changed it, so
// its catalog shows the API as it now is (deleted, then added again with other
// operations).
func TestFeed(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	ctx := context.Background()
	a, b := newRig(t, db, nil), newRig(t, db, nil)
	b.admin = a.admin // one tenant, two nodes
	busA, busB := feedtest.New(), feedtest.New()
	a.svc.SetFeed(busA)
	b.svc.SetFeed(busB)
	add := func(ops []string) {
		t.Helper()
		if _, err := a.svc.Add(ctx, a.admin, AddInput{Name: "items", Description: []byte(describedAPI), BaseURL: "https://192.0.3.10", Operations: ops}); err != nil {
			t.Fatal(err)
		}
	}
	tools := func() []string {
		t.Helper()
		list, err := b.svc.Tools(ctx, b.admin, "items")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range list {
			names = append(names, tl.Name)
		}
		return names
	}
	add([]string{"listItems"})
	if got := tools(); len(got) != 1 || got[0] != "items_list_items" {
		t.Fatalf("node B's tools = %v", got)
	}
	if err := a.svc.Delete(ctx, a.admin, "items"); err != nil {
		t.Fatal(err)
	}
	add([]string{"listItems", "deleteItem"})
	published := busA.Published()
	if len(published) != 3 {
		t.Fatalf("node A published %v, want added, deleted, added", published)
	}
	for _, e := range published {
		if e.Kind != Changed || e.Tenant != a.admin.TenantID || e.ID != "items" {
			t.Errorf("published %+v, want %s of items in the tenant", e, Changed)
		}
		busB.Deliver(e)
	}
	if got := tools(); len(got) != 2 {
		t.Errorf("node B's tools after the feed = %v, want the API as added again", got)
	}
}

// TestNameClashesWithRemoteServer: an API may not take a name that would name its tools
// like one of the tenant's remote MCP servers' (equal, or one extending the other), and
// nothing is stored; another tenant's server is no clash.
func TestNameClashesWithRemoteServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t, testdb.SQLite(t), nil)
	if _, err := r.svc.conns.CreateExternal(ctx, r.admin, connections.Connection{Provider: remotemcp.Provider, AuthKind: providers.AuthNone,
		AccountID: "docs", AccountLabel: "docs", Meta: map[string]string{}}, connections.Credentials{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"docs", "docs_v2"} {
		_, err := r.svc.Add(ctx, r.admin, AddInput{Name: name, Description: []byte(describedAPI), BaseURL: "https://192.0.3.10"})
		if e := switchboard.AsError(err); err == nil || e.Code != switchboard.CodeConflict || e.Field != "name" || !strings.Contains(e.Message, `"docs"`) {
			t.Errorf("add %s: %v, want a conflict on name naming the server docs", name, err)
		}
	}
	if list, err := r.svc.List(ctx, r.admin); err != nil || len(list) != 0 {
		t.Errorf("stored after the clashes: %v %v", list, err)
	}
	other := newRig(t, testdb.SQLite(t), nil)
	if _, err := other.svc.Add(ctx, other.admin, AddInput{Name: "docs", Description: []byte(describedAPI), BaseURL: "https://192.0.3.10"}); err != nil {
		t.Errorf("another tenant's docs: %v", err)
	}
}

// TestRemoteServerClashesWithAPI: a remote MCP server may not be registered under a
// name that would name its tools like one of the tenant's APIs' (equal, or one
// extending the other): the registration is refused with a conflict on name before it
// reaches any server.
func TestRemoteServerClashesWithAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t, testdb.SQLite(t), nil)
	if _, err := r.svc.Add(ctx, r.admin, AddInput{Name: "docs", Description: []byte(describedAPI), BaseURL: "https://192.0.3.10"}); err != nil {
		t.Fatal(err)
	}
	remote, err := remotemcp.New(remotemcp.Options{Connections: r.svc.conns, Registry: r.svc.reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remote.Close)
	remote.SetNameCheck(r.svc.NameClash)
	for _, name := range []string{"docs", "docs_v2"} {
		_, err := remote.Register(ctx, r.admin, remotemcp.RegisterInput{Name: name, URL: "https://192.0.3.10/mcp"})
		if e := switchboard.AsError(err); err == nil || e.Code != switchboard.CodeConflict || e.Field != "name" || !strings.Contains(e.Message, `API "docs"`) {
			t.Errorf("register %s: %v, want a conflict on name naming the API docs", name, err)
		}
	}
}
