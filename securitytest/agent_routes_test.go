package securitytest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// agentRefusal is what every 403 an agent's key gets says.
const agentRefusal = "an agent's API key cannot"

// How the key of the owner's agent is answered on a route.
const (
	// agentRefused: 403, saying an agent's key cannot do that, whatever its creator's
	// role.
	agentRefused = -1
	// agentPublic: the route takes no key (probes, sign-in, webhook deliveries).
	agentPublic = 0
)

// agentAnswers is every route of the engine with what the key of the victim's (the
// owner's) agent gets on it with the request the routes table builds: agentRefused,
// agentPublic, or the status of a route an agent's key may use (its own tools, its
// own runs, the catalog, its own agent, the workflows its agent selected; another's
// run answers 404 as to anyone else). A route added without an entry fails
// TestOwnerAgentKeyOnEveryRoute.
var agentAnswers = map[string]int{
	"GET /healthz":             agentPublic,
	"HEAD /healthz":            agentPublic,
	"GET /readyz":              agentPublic,
	"HEAD /readyz":             agentPublic,
	"GET /oauth/callback":      agentPublic,
	"GET /signin/sso":          agentPublic,
	"POST /signin/sso":         agentPublic,
	"GET /signin/sso/callback": agentPublic,
	// Linking needs the browser's session and its anti-forgery token: a key is not one.
	"POST /signin/sso/link":                         agentPublic,
	"POST /hooks/workflows/:tenant/:name/:provider": agentPublic,

	"GET /api/providers":                      http.StatusOK,
	"GET /api/providers/:provider/operations": http.StatusOK,
	"GET /api/tenant":                         http.StatusOK,
	"GET /api/audit":                          http.StatusOK,
	"GET /api/usage":                          http.StatusOK,
	"GET /api/usage/chart.svg":                http.StatusOK,
	"GET /api/tools":                          http.StatusOK,
	"POST /api/tools/:tool/call":              http.StatusOK,
	"GET /api/agents/:id":                     http.StatusOK,
	"GET /api/agents":                         http.StatusOK,
	"GET /api/mcp-settings":                   http.StatusOK,
	"POST /api/runs":                          http.StatusAccepted,
	"GET /api/runs":                           http.StatusOK,
	"GET /api/runs/:id":                       http.StatusNotFound,
	"POST /api/runs/:id/cancel":               http.StatusNotFound,
	"GET /api/workflows":                      http.StatusOK,
	"GET /api/workflow-runs/:id":              http.StatusNotFound,
	"POST /api/workflow-runs/:id/cancel":      http.StatusNotFound,

	"POST /api/connections":                       agentRefused,
	"GET /api/connections":                        agentRefused,
	"GET /api/connections/:id":                    agentRefused,
	"DELETE /api/connections/:id":                 agentRefused,
	"PATCH /api/connections/:id":                  agentRefused,
	"POST /api/connections/:id/reconnect":         agentRefused,
	"POST /api/connections/:id/authorize":         agentRefused,
	"POST /api/remote-mcp":                        agentRefused,
	"POST /api/openapi-providers":                 agentRefused,
	"GET /api/openapi-providers":                  agentRefused,
	"DELETE /api/openapi-providers/:name":         agentRefused,
	"GET /api/oauth-apps":                         agentRefused,
	"PUT /api/oauth-apps/:provider":               agentRefused,
	"DELETE /api/oauth-apps/:provider":            agentRefused,
	"GET /api/sso":                                agentRefused,
	"PUT /api/sso":                                agentRefused,
	"GET /api/sso/changes":                        agentRefused,
	"POST /api/sso/changes/:id/acknowledge":       agentRefused,
	"GET /api/sso/links":                          agentRefused,
	"POST /api/sso/links/:id/approve":             agentRefused,
	"DELETE /api/sso":                             agentRefused,
	"GET /api/deployment/oauth-apps":              agentRefused,
	"PUT /api/deployment/oauth-apps/:provider":    agentRefused,
	"DELETE /api/deployment/oauth-apps/:provider": agentRefused,
	"GET /api/tenants":                            agentRefused,
	"POST /api/tenants":                           agentRefused,
	"GET /api/users":                              agentRefused,
	"POST /api/users":                             agentRefused,
	"PATCH /api/users/:id":                        agentRefused,
	"DELETE /api/users/:id":                       agentRefused,
	"GET /api/keys":                               agentRefused,
	"POST /api/keys":                              agentRefused,
	"DELETE /api/keys/:id":                        agentRefused,
	"GET /api/connected-apps":                     agentRefused,
	"DELETE /api/connected-apps/:id":              agentRefused,
	"GET /api/invitations":                        agentRefused,
	"POST /api/invitations":                       agentRefused,
	"POST /api/invitations/:id/resend":            agentRefused,
	"DELETE /api/invitations/:id":                 agentRefused,
	"POST /api/agents":                            agentRefused,
	"POST /api/agents/preview":                    agentRefused,
	"PUT /api/agents/:id":                         agentRefused,
	"DELETE /api/agents/:id":                      agentRefused,
	"GET /api/agents/:id/keys":                    agentRefused,
	"POST /api/agents/:id/keys":                   agentRefused,
	"PUT /api/mcp-settings":                       agentRefused,
	"POST /api/agents/:id/mcp":                    agentRefused,

	// Workflows: an agent's key manages none, and reads and runs only those its agent
	// selected (the owner's agent selected none).
	"POST /api/workflows":                         agentRefused,
	"POST /api/workflows/dry-run":                 agentRefused,
	"POST /api/workflows/graph.svg":               agentRefused,
	"PUT /api/workflows/:name":                    agentRefused,
	"DELETE /api/workflows/:name":                 agentRefused,
	"PUT /api/workflows/:name/webhooks/:provider": agentRefused,
	"POST /api/workflows/:name/activate":          agentRefused,
	"POST /api/workflows/:name/deactivate":        agentRefused,
	"GET /api/workflow-settings":                  agentRefused,
	"PUT /api/workflow-settings":                  agentRefused,
	"GET /api/workflows/:name":                    agentRefused,
	"GET /api/workflows/:name/graph.svg":          agentRefused,
	"POST /api/workflows/:name/dry-run":           agentRefused,
	"POST /api/workflows/:name/runs":              agentRefused,
	"GET /api/workflows/:name/runs":               agentRefused,
}

func init() {
	// An agent's key serves its own agent's URL, never the tenant's: the MCP methods
	// themselves are probed by TestMCPForeignPrincipals.
	for _, m := range mcpMethods {
		agentAnswers[m+" /mcp/:tenant"] = agentPublic
		agentAnswers[m+" /mcp/:tenant/agents/:agent"] = agentPublic
	}
}

// TestOwnerAgentKeyOnEveryRoute runs every route the engine registers with the key of
// the tenant owner's agent (bound to the owner's private connection): it never gets
// the owner's powers. Each route answers what agentAnswers says; every refusal is a
// 403 that says an agent's key cannot do it, and changes nothing of the owner's.
func TestOwnerAgentKeyOnEveryRoute(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		h := newHub(t, db)
		for _, r := range h.engine.Routes() {
			if _, ok := agentAnswers[r.Method+" "+r.Path]; !ok {
				t.Errorf("route %s %s has no entry in agentAnswers (securitytest/agent_routes_test.go): say what an agent's key gets there", r.Method, r.Path)
			}
		}
		for key := range agentAnswers {
			if _, ok := routes[key]; !ok {
				t.Errorf("agentAnswers names %s, which the engine no longer registers", key)
			}
		}
		f := h.seed()
		keys := make([]string, 0, len(agentAnswers))
		for k := range agentAnswers {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, key := range keys {
			want := agentAnswers[key]
			if want == agentPublic {
				continue
			}
			method, _, _ := strings.Cut(key, " ")
			path, body := routes[key].request(f)
			status, _, b := h.do(f.ownerAgentKey, method, path, body, nil)
			where := fmt.Sprintf("%s %s as the owner's agent", method, path)
			switch {
			case want == agentRefused && (status != http.StatusForbidden || !strings.Contains(string(b), agentRefusal)):
				t.Errorf("%s: %d %s; want 403 saying %q", where, status, b, agentRefusal)
			case want != agentRefused && status != want:
				t.Errorf("%s: %d %s; want %d", where, status, b, want)
			}
		}
		// The owner's objects are as they were.
		var wf struct {
			Version int64 `json:"version"`
		}
		h.want(f.owner, http.MethodGet, "/api/workflows/victim_flow", "", http.StatusOK, &wf)
		if wf.Version != 1 {
			t.Errorf("the owner's workflow after the agent's probes: version %d, want 1", wf.Version)
		}
		for _, p := range []string{"/api/connections/" + f.connID, "/api/agents/" + f.agentID} {
			if status, _, b := h.do(f.owner, http.MethodGet, p, "", nil); status != http.StatusOK {
				t.Errorf("the owner's %s after the agent's probes: %d %s", p, status, b)
			}
		}
		if status, _, b := h.do(f.ownerAgentKey, http.MethodGet, "/api/tools", "", nil); status != http.StatusOK || !strings.Contains(string(b), `"tool":"github_get_me"`) {
			t.Errorf("the owner's agent's key after its probes: %d %s; want it working, listing github_get_me", status, b)
		}
	})
}
