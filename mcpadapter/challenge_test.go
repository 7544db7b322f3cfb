package mcpadapter

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUnauthorizedChallenge checks the 401 of tenant and agent URLs: the challenge
// names the URL's own protected resource metadata (RFC 9728) and the scope, says
// invalid_token with the reason when a key was refused, and the body says the reason
// in plain words. Refusals that are not 401 carry no challenge.
func TestUnauthorizedChallenge(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // PublicURL https://hub.test
	tests := []struct {
		name, path, key string
		wantStatus      int
		wantChallenge   string
		wantMessage     string
	}{
		{
			name: "tenant URL without a key", path: "/mcp/acme", wantStatus: http.StatusUnauthorized,
			wantChallenge: `Bearer realm="switchboard", resource_metadata="https://hub.test/.well-known/oauth-protected-resource/mcp/acme", scope="mcp"`,
			wantMessage:   "send an API key as Authorization: Bearer <key>",
		},
		{
			name: "tenant URL with a wrong key", path: "/mcp/acme", key: "sbk_nope", wantStatus: http.StatusUnauthorized,
			wantChallenge: `Bearer realm="switchboard", resource_metadata="https://hub.test/.well-known/oauth-protected-resource/mcp/acme", scope="mcp", error="invalid_token", error_description="invalid API key"`,
			wantMessage:   "invalid API key",
		},
		{
			name: "agent URL without a key", path: "/mcp/acme/agents/agt_triage", wantStatus: http.StatusUnauthorized,
			wantChallenge: `Bearer realm="switchboard", resource_metadata="https://hub.test/.well-known/oauth-protected-resource/mcp/acme/agents/agt_triage", scope="mcp"`,
			wantMessage:   "send an API key as Authorization: Bearer <key>",
		},
		{
			name: "agent URL with a wrong key", path: "/mcp/acme/agents/agt_triage", key: "sbk_nope", wantStatus: http.StatusUnauthorized,
			wantChallenge: `Bearer realm="switchboard", resource_metadata="https://hub.test/.well-known/oauth-protected-resource/mcp/acme/agents/agt_triage", scope="mcp", error="invalid_token", error_description="invalid API key"`,
			wantMessage:   "invalid API key",
		},
		{
			name: "a quote in the path stays inside the parameter", path: `/mcp/a%22b`, wantStatus: http.StatusUnauthorized,
			wantChallenge: `Bearer realm="switchboard", resource_metadata="https://hub.test/.well-known/oauth-protected-resource/mcp/a%22b", scope="mcp"`,
			wantMessage:   "send an API key as Authorization: Bearer <key>",
		},
		{
			name: "another tenant's key is forbidden, not challenged", path: "/mcp/acme", key: "key-bob", wantStatus: http.StatusForbidden,
			wantMessage: "this API key is not valid for this MCP URL; use /mcp/beta",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequest(http.MethodPost, e.srv.URL+tt.path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.key != "" {
				req.Header.Set("Authorization", "Bearer "+tt.key)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var body struct {
				Error struct{ Message string } `json:"error"`
			}
			if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
				t.Fatalf("decode body: %v", err)
			}
			got := struct {
				Status             int
				Challenge, Message string
			}{res.StatusCode, res.Header.Get("WWW-Authenticate"), body.Error.Message}
			want := struct {
				Status             int
				Challenge, Message string
			}{tt.wantStatus, tt.wantChallenge, tt.wantMessage}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}
