package mcpadapter

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers/github"
	"github.com/switchboard-hub/switchboard/router"
)

// TestUpstreamFieldReachesToolError: the argument an upstream names in its refusal
// (GitHub's 422 "Validation Failed" errors[].field, components/responses/validation_failed
// in its OpenAPI description) is named in the MCP tool error, so the agent knows what to fix.
func TestUpstreamFieldReachesToolError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		answer string // GitHub's 422 body
		want   []string
	}{
		{
			name:   "errors[].field is named",
			answer: `{"message":"Validation Failed","errors":[{"value":"nobody-here","resource":"Issue","field":"assignees","code":"invalid"}],"documentation_url":"https://docs.github.com/rest/issues/issues#create-an-issue","status":"422"}`,
			want:   []string{`github rejected argument "assignees"`, "Validation Failed: assignees invalid"},
		},
		{
			name:   "a refusal without a field names none",
			answer: `{"message":"Validation Failed","errors":[{"resource":"Issue","code":"custom","message":"issues are disabled"}],"documentation_url":"https://docs.github.com/rest/issues/issues#create-an-issue","status":"422"}`,
			want:   []string{"github rejected the arguments", "issues are disabled"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sent := make(chan map[string]any, 1)
			gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost || r.URL.Path != "/repos/octo-org/hello/issues" || r.Header.Get("Authorization") != "Bearer tok-con_gh" {
					t.Errorf("GitHub got %s %s with %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
				}
				b, _ := io.ReadAll(r.Body)
				var body map[string]any
				_ = json.Unmarshal(b, &body)
				sent <- body
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.WriteHeader(http.StatusUnprocessableEntity)
				_, _ = io.WriteString(w, tt.answer)
			}))
			t.Cleanup(gh.Close)
			e := newEnvWith(t, nil, func(o *router.Options) {
				if err := o.Registry.Register(github.Spec()); err != nil {
					t.Fatal(err)
				}
				_ = o.Registry.SetBaseURL("github", gh.URL)
			})
			e.conns.set(connections.Connection{ID: "con_gh", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "github", AccountLabel: "octocat", Status: connections.StatusActive})
			c, err := e.client(t, "acme", "key-alice")
			if err != nil {
				t.Fatal(err)
			}
			res := call(t, c, "github_create_issue", map[string]any{"owner": "octo-org", "repo": "hello", "title": "Bug", "assignees": []string{"nobody-here"}})
			if !res.IsError {
				t.Fatalf("isError not set; result %s", text(res))
			}
			for _, w := range tt.want {
				if !strings.Contains(text(res), w) {
					t.Errorf("message %q does not contain %q", text(res), w)
				}
			}
			want := map[string]any{"title": "Bug", "assignees": []any{"nobody-here"}}
			if diff := cmp.Diff(want, testwait.Recv(t, sent, "GitHub to receive the request")); diff != "" {
				t.Errorf("GitHub got (-want +got):\n%s", diff)
			}
		})
	}
}
