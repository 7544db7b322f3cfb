package securitytest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// How a route is probed.
const (
	// onVictim routes act on one of the victim's objects (its id in the path or the
	// body): every foreign principal is refused.
	onVictim = "victim"
	// ownScope routes list or create in the caller's own scope: a key that does not
	// authenticate is refused; another principal may succeed, but sees nothing of the
	// victim's.
	ownScope = "own scope"
	// public routes take no key (probes, the OAuth callback): never a 5xx, nothing
	// of the victim's.
	public = "public"
	// mcpRoute routes are the MCP URLs, probed per method by TestMCPForeignPrincipals.
	mcpRoute = "mcp"
)

// route says how to probe one route of the engine.
type route struct {
	mode string
	// request builds the path (with the victim's ids) and the JSON body.
	request func(f *fixture) (path, body string)
	// adminOnly and usersOnly refuse, in an own-scope route, a member and an agent's
	// key respectively.
	adminOnly, usersOnly bool
	// memberMay lets another user of the victim's tenant read an onVictim route.
	memberMay bool
	// bodyRefusal lets a refusal of a body naming the victim's ids be a 400 naming the
	// field, besides 401, 403 and 404.
	bodyRefusal bool
}

func fixed(path, body string) func(*fixture) (string, string) {
	return func(*fixture) (string, string) { return path, body }
}

// routes is every route of the engine: a route added without an entry here fails
// TestEveryRouteHasAnEntry.
var routes = map[string]route{
	"GET /healthz":        {mode: public, request: fixed("/healthz", "")},
	"HEAD /healthz":       {mode: public, request: fixed("/healthz", "")},
	"GET /readyz":         {mode: public, request: fixed("/readyz", "")},
	"HEAD /readyz":        {mode: public, request: fixed("/readyz", "")},
	"GET /oauth/callback": {mode: public, request: fixed("/oauth/callback?state=forged-state-0123456789&code=forged", "")},

	"GET /api/providers":                      {mode: ownScope, request: fixed("/api/providers", "")},
	"GET /api/providers/:provider/operations": {mode: ownScope, request: fixed("/api/providers/github/operations", "")},

	"POST /api/connections": {mode: ownScope, usersOnly: true, request: fixed("/api/connections", `{"provider":"github","token":"ghp_AttackerToken0123456789abcdefghijklmn"}`)},
	"GET /api/connections":  {mode: ownScope, request: fixed("/api/connections", "")},
	"GET /api/connections/:id": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/connections/" + f.connID, ""
	}},
	"DELETE /api/connections/:id": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/connections/" + f.connID, ""
	}},
	"PATCH /api/connections/:id": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/connections/" + f.connID, `{"rate_limit":{"per_second":0.01,"burst":1}}`
	}},
	"POST /api/connections/:id/reconnect": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/connections/" + f.connID + "/reconnect", `{"token":"ghp_AttackerToken0123456789abcdefghijklmn"}`
	}},
	"POST /api/connections/:id/authorize": {mode: ownScope, usersOnly: true, request: fixed("/api/connections/github/authorize", "")},
	"POST /api/remote-mcp":                {mode: ownScope, usersOnly: true, request: fixed("/api/remote-mcp", `{"name":"probe","url":"http://169.254.169.254/mcp"}`)},
	"POST /api/openapi-providers": {mode: ownScope, adminOnly: true, usersOnly: true,
		request: fixed("/api/openapi-providers", `{"name":"probe","url":"http://169.254.169.254/openapi.json"}`)},
	"GET /api/openapi-providers": {mode: ownScope, usersOnly: true, request: fixed("/api/openapi-providers", "")},
	"DELETE /api/openapi-providers/:name": {mode: onVictim, request: func(*fixture) (string, string) {
		return "/api/openapi-providers/" + victimAPI, ""
	}},

	"GET /api/oauth-apps":              {mode: ownScope, adminOnly: true, usersOnly: true, request: fixed("/api/oauth-apps", "")},
	"PUT /api/oauth-apps/:provider":    {mode: ownScope, adminOnly: true, usersOnly: true, request: fixed("/api/oauth-apps/slack", `{"client_id":"attacker-id","client_secret":"attacker-secret"}`)},
	"DELETE /api/oauth-apps/:provider": {mode: ownScope, adminOnly: true, usersOnly: true, request: fixed("/api/oauth-apps/slack", "")},

	"GET /api/sso":         {mode: ownScope, adminOnly: true, usersOnly: true, request: fixed("/api/sso", "")},
	"PUT /api/sso":         {mode: ownScope, adminOnly: true, usersOnly: true, request: fixed("/api/sso", `{"issuer":"http://127.0.0.1:1","client_id":"attacker-id","client_secret":"attacker-secret","local_passwords_off":true}`)},
	"DELETE /api/sso":      {mode: ownScope, adminOnly: true, usersOnly: true, request: fixed("/api/sso", "")},
	"GET /api/sso/changes": {mode: ownScope, adminOnly: true, usersOnly: true, request: fixed("/api/sso/changes", "")},
	"POST /api/sso/changes/:id/acknowledge": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/sso/changes/" + f.ssoChangeID + "/acknowledge", ""
	}},
	"GET /api/sso/links":              {mode: ownScope, adminOnly: true, usersOnly: true, request: fixed("/api/sso/links", "")},
	"POST /api/sso/links/:id/approve": {mode: ownScope, adminOnly: true, usersOnly: true, request: fixed("/api/sso/links/ssk_probe/approve", "")},
	// Linking needs the browser's session and its anti-forgery token: a key is not one.
	"POST /signin/sso/link": {mode: public, request: fixed("/signin/sso/link", "")},
	// Single sign-on's browser routes are public: starting one for the victim's
	// workspace sends the browser to its provider; a forged callback signs nobody in.
	"GET /signin/sso": {mode: public, request: func(f *fixture) (string, string) {
		return "/signin/sso?workspace=" + f.victimSlug, ""
	}},
	"POST /signin/sso": {mode: public, request: func(f *fixture) (string, string) {
		return "/signin/sso?workspace=" + f.victimSlug, ""
	}},
	"GET /signin/sso/callback": {mode: public, request: fixed("/signin/sso/callback?state=forged-state-0123456789&code=forged", "")},

	"GET /api/tenant":                             {mode: ownScope, request: fixed("/api/tenant", "")},
	"GET /api/deployment/oauth-apps":              {mode: onVictim, request: fixed("/api/deployment/oauth-apps", "")},
	"PUT /api/deployment/oauth-apps/:provider":    {mode: onVictim, request: fixed("/api/deployment/oauth-apps/slack", `{"client_id":"attacker-id","client_secret":"attacker-secret"}`)},
	"DELETE /api/deployment/oauth-apps/:provider": {mode: onVictim, request: fixed("/api/deployment/oauth-apps/slack", "")},
	"GET /api/tenants":                            {mode: onVictim, request: fixed("/api/tenants", "")},
	"POST /api/tenants":                           {mode: onVictim, request: fixed("/api/tenants", `{"slug":"probe-co","name":"Probe","owner_email":"probe@probe.test"}`)},

	"GET /api/users":  {mode: ownScope, request: fixed("/api/users", "")},
	"POST /api/users": {mode: ownScope, adminOnly: true, usersOnly: true, request: fixed("/api/users", `{"email":"new-user@probe.test"}`)},
	"PATCH /api/users/:id": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/users/" + f.ownerID, `{"role":"member"}`
	}},
	"DELETE /api/users/:id": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/users/" + f.ownerID, ""
	}},

	"GET /api/keys":  {mode: ownScope, usersOnly: true, request: fixed("/api/keys", "")},
	"POST /api/keys": {mode: ownScope, usersOnly: true, request: fixed("/api/keys", `{"name":"probe"}`)},
	"DELETE /api/keys/:id": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/keys/" + f.keyID, ""
	}},

	"GET /api/audit": {mode: ownScope, request: fixed("/api/audit", "")},
	// Figures of the caller's own calls; the victim's agent and connection are not found.
	"GET /api/usage":           {mode: ownScope, request: fixed("/api/usage?range=30d", "")},
	"GET /api/usage/chart.svg": {mode: ownScope, request: fixed("/api/usage/chart.svg?range=7d", "")},

	"GET /api/connected-apps": {mode: ownScope, usersOnly: true, request: fixed("/api/connected-apps", "")},
	"DELETE /api/connected-apps/:id": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/connected-apps/" + f.grantID, ""
	}},

	"GET /api/invitations":  {mode: ownScope, adminOnly: true, usersOnly: true, request: fixed("/api/invitations", "")},
	"POST /api/invitations": {mode: ownScope, adminOnly: true, usersOnly: true, request: fixed("/api/invitations", `{"email":"probe-invite@probe.test"}`)},
	"POST /api/invitations/:id/resend": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/invitations/" + f.invitationID + "/resend", ""
	}},
	"DELETE /api/invitations/:id": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/invitations/" + f.invitationID, ""
	}},

	"GET /api/tools": {mode: ownScope, request: fixed("/api/tools", "")},
	"POST /api/tools/:tool/call": {mode: onVictim, bodyRefusal: true, request: func(f *fixture) (string, string) {
		return "/api/tools/github_get_me/call", `{"connection_id":"` + f.connID + `","arguments":{}}`
	}},

	"GET /api/agents": {mode: ownScope, request: fixed("/api/agents", "")},
	// A preview naming the victim's connection lists nothing of it: the caller's own
	// scope decides what the draft agent's URL would serve.
	"POST /api/agents/preview": {mode: ownScope, request: func(f *fixture) (string, string) {
		return "/api/agents/preview", `{"run_tools":"off","tools":[{"tool":"github_get_me","connection_id":"` + f.connID + `"}]}`
	}},
	"POST /api/agents": {mode: onVictim, bodyRefusal: true, request: func(f *fixture) (string, string) {
		return "/api/agents", `{"name":"probe-agent","tools":[{"tool":"github_get_me","connection_id":"` + f.connID + `"}]}`
	}},
	// The tenant's users read its agents (the builder lists them); nobody else does.
	"GET /api/agents/:id": {mode: onVictim, memberMay: true, request: func(f *fixture) (string, string) {
		return "/api/agents/" + f.agentID, ""
	}},
	"PUT /api/agents/:id": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/agents/" + f.agentID, `{"name":"hijacked","version":1,"tools":[{"tool":"github_get_me","connection_id":"` + f.connID + `"}]}`
	}},
	"DELETE /api/agents/:id": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/agents/" + f.agentID, ""
	}},
	"GET /api/agents/:id/keys": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/agents/" + f.agentID + "/keys", ""
	}},
	"POST /api/agents/:id/keys": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/agents/" + f.agentID + "/keys", `{"name":"stolen"}`
	}},
	// The agent console: only the agent's creator or an admin uses the agent's URL here.
	"POST /api/agents/:id/mcp": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/agents/" + f.agentID + "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"probe","version":"1"}}}}`
	}},
	"GET /api/mcp-settings": {mode: ownScope, request: fixed("/api/mcp-settings", "")},
	"PUT /api/mcp-settings": {mode: ownScope, adminOnly: true, usersOnly: true, request: fixed("/api/mcp-settings", `{"tool_mode":"all"}`)},

	"POST /api/runs": {mode: onVictim, bodyRefusal: true, request: func(f *fixture) (string, string) {
		return "/api/runs", `{"tool":"github_get_me","connection_id":"` + f.connID + `","arguments":{}}`
	}},
	"GET /api/runs": {mode: ownScope, request: fixed("/api/runs", "")},

	// Workflows are the tenant's; a step on the victim's private connection is refused
	// to anyone else at save, dry run and start (a 400 naming the step's connection).
	"GET /api/workflows": {mode: ownScope, request: fixed("/api/workflows", "")},
	"POST /api/workflows": {mode: onVictim, bodyRefusal: true, request: func(f *fixture) (string, string) {
		return "/api/workflows", workflowBody(victimWorkflow(f))
	}},
	"POST /api/workflows/dry-run": {mode: onVictim, bodyRefusal: true, request: func(f *fixture) (string, string) {
		return "/api/workflows/dry-run", workflowBody(victimWorkflow(f))
	}},
	"GET /api/workflows/:name": {mode: ownScope, request: fixed("/api/workflows/victim_flow", "")},
	"PUT /api/workflows/:name": {mode: onVictim, bodyRefusal: true, request: func(f *fixture) (string, string) {
		return "/api/workflows/victim_flow", workflowBody(victimWorkflow(f))
	}},
	"DELETE /api/workflows/:name":       {mode: onVictim, request: fixed("/api/workflows/victim_flow", "")},
	"POST /api/workflows/:name/dry-run": {mode: onVictim, bodyRefusal: true, request: fixed("/api/workflows/victim_flow/dry-run", `{"parameters":{}}`)},
	"POST /api/workflows/:name/runs":    {mode: onVictim, bodyRefusal: true, request: fixed("/api/workflows/victim_flow/runs", `{"parameters":{}}`)},
	"GET /api/workflows/:name/runs":     {mode: ownScope, request: fixed("/api/workflows/victim_flow/runs", "")},
	"POST /api/workflows/graph.svg": {mode: ownScope, request: func(f *fixture) (string, string) {
		return "/api/workflows/graph.svg", workflowBody(victimWorkflow(f))
	}},
	"GET /api/workflows/:name/graph.svg": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/workflows/victim_flow/graph.svg?run=" + f.wfRunID, ""
	}},
	"PUT /api/workflows/:name/webhooks/:provider": {mode: onVictim, request: fixed("/api/workflows/victim_flow/webhooks/github", `{"secret":"attacker-secret-0123456789"}`)},
	"POST /api/workflows/:name/activate":          {mode: onVictim, request: fixed("/api/workflows/victim_flow/activate", "")},
	"POST /api/workflows/:name/deactivate":        {mode: onVictim, request: fixed("/api/workflows/victim_flow/deactivate", "")},
	"GET /api/workflow-settings":                  {mode: ownScope, usersOnly: true, request: fixed("/api/workflow-settings", "")},
	"PUT /api/workflow-settings":                  {mode: ownScope, usersOnly: true, adminOnly: true, request: fixed("/api/workflow-settings", `{"tool_aliases":false}`)},
	"POST /hooks/workflows/:tenant/:name/:provider": {mode: public, request: func(f *fixture) (string, string) {
		return "/hooks/workflows/" + f.victimSlug + "/victim_flow/github", `{"action":"opened"}`
	}},
	"GET /api/workflow-runs/:id": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/workflow-runs/" + f.wfRunID, ""
	}},
	"POST /api/workflow-runs/:id/cancel": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/workflow-runs/" + f.wfRunID + "/cancel", ""
	}},
	"GET /api/runs/:id": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/runs/" + f.runID, ""
	}},
	"POST /api/runs/:id/cancel": {mode: onVictim, request: func(f *fixture) (string, string) {
		return "/api/runs/" + f.runID + "/cancel", ""
	}},
}

// mcpMethods are the HTTP methods an MCP URL is registered for (gin's Any).
var mcpMethods = []string{"GET", "POST", "PUT", "PATCH", "HEAD", "OPTIONS", "DELETE", "CONNECT", "TRACE"}

func init() {
	for _, m := range mcpMethods {
		routes[m+" /mcp/:tenant"] = route{mode: mcpRoute}
		routes[m+" /mcp/:tenant/agents/:agent"] = route{mode: mcpRoute}
	}
}

// TestEveryRouteHasAnEntry: every route the engine registers is probed, and the table
// names no route that is gone.
func TestEveryRouteHasAnEntry(t *testing.T) {
	t.Parallel()
	h := newHub(t, testdb.SQLite(t))
	registered := map[string]bool{}
	for _, r := range h.engine.Routes() {
		key := r.Method + " " + r.Path
		registered[key] = true
		if _, ok := routes[key]; !ok {
			t.Errorf("route %s has no entry in the security suite's table (securitytest/routes_test.go): say how foreign principals are refused", key)
		}
	}
	for key := range routes {
		if !registered[key] {
			t.Errorf("the security suite's table names %s, which the engine no longer registers", key)
		}
	}
}

// refusedStatuses are the answers that refuse a foreign principal.
func refused(status int, bodyRefusal bool) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return true
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return bodyRefusal
	}
	return false
}

// TestRESTForeignPrincipals runs every REST route with every kind of foreign principal
// and the victim's ids, and checks each answer: refused where the route acts on the
// victim's objects or the principal may not call it, never a 5xx, and never the
// victim's data in the body. The victim's objects and its GitHub token stay untouched.
func TestRESTForeignPrincipals(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		restForeignPrincipals(t, newHub(t, db))
	})
}

func restForeignPrincipals(t *testing.T, h *hub) {
	f := h.seed()
	upstreamBefore := h.github.victimRequests()
	keys := make([]string, 0, len(routes))
	for k := range routes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		r := routes[key]
		if r.mode == mcpRoute {
			continue
		}
		method, _, _ := strings.Cut(key, " ")
		path, body := r.request(f)
		for _, kind := range principalKinds {
			status, _, b := h.do(f.principals[kind], method, path, body, nil)
			where := fmt.Sprintf("%s %s as %s", method, path, kind)
			if status >= 500 {
				t.Errorf("%s: status %d: %s", where, status, b)
				continue
			}
			if m := f.leaked(kind, b, path+body); m != "" {
				t.Errorf("%s: the answer holds the victim's %q: %s", where, m, b)
			}
			want := expectation(r, kind, strings.HasPrefix(path, "/api/"))
			switch {
			case want == "401" && status != http.StatusUnauthorized:
				t.Errorf("%s: status %d, want 401: %s", where, status, b)
			case want == "refused" && !refused(status, r.bodyRefusal):
				t.Errorf("%s: status %d, want a refusal (401, 403 or 404): %s", where, status, b)
			}
		}
	}
	h.victimUntouched(t, f, upstreamBefore)
}

// victimUntouched checks that nothing of the victim's changed: its objects answer as
// before, to the victim, and nobody called GitHub with its token since upstreamBefore.
func (h *hub) victimUntouched(t *testing.T, f *fixture, upstreamBefore int) {
	t.Helper()
	if _, _, b := h.do(f.owner, http.MethodGet, "/api/openapi-providers", "", nil); !strings.Contains(string(b), victimAPI) {
		t.Errorf("the victim's API after the probes: %s", b)
	}
	for _, p := range []string{"/api/connections/" + f.connID, "/api/agents/" + f.agentID, "/api/runs/" + f.runID, "/api/users/" + f.ownerID} {
		if strings.HasPrefix(p, "/api/users/") {
			continue // no GET route; the owner's key below proves the owner is there
		}
		if status, _, b := h.do(f.owner, http.MethodGet, p, "", nil); status != http.StatusOK {
			t.Errorf("the victim's %s after the probes: %d %s", p, status, b)
		}
	}
	var keysOut struct {
		Keys []struct {
			ID        string  `json:"id"`
			RevokedAt *string `json:"revoked_at"`
		} `json:"keys"`
	}
	h.want(f.owner, http.MethodGet, "/api/keys", "", http.StatusOK, &keysOut)
	for _, k := range keysOut.Keys {
		if k.ID == f.keyID && k.RevokedAt != nil {
			t.Error("a foreign principal revoked the victim's key")
		}
	}
	var inv struct {
		Invitations []struct{ ID string } `json:"invitations"`
	}
	h.want(f.owner, http.MethodGet, "/api/invitations", "", http.StatusOK, &inv)
	if len(inv.Invitations) != 1 || inv.Invitations[0].ID != f.invitationID {
		t.Errorf("the victim's invitations after the probes: %+v", inv.Invitations)
	}
	var sso struct {
		Issuer            string `json:"issuer"`
		ClientID          string `json:"client_id"`
		LocalPasswordsOff bool   `json:"local_passwords_off"`
	}
	h.want(f.owner, http.MethodGet, "/api/sso", "", http.StatusOK, &sso)
	if sso.Issuer != h.idp.Issuer() || sso.ClientID != "victim-sso-client" || sso.LocalPasswordsOff {
		t.Errorf("the victim's single sign-on after the probes: %+v", sso)
	}
	var changes struct {
		Changes []struct{ ID string } `json:"changes"`
	}
	h.want(f.owner, http.MethodGet, "/api/sso/changes", "", http.StatusOK, &changes)
	if len(changes.Changes) != 1 || changes.Changes[0].ID != f.ssoChangeID {
		t.Errorf("the victim's unacknowledged changes of single sign-on after the probes: %+v, want %s still there", changes.Changes, f.ssoChangeID)
	}
	if got := h.github.victimRequests(); got != upstreamBefore {
		t.Errorf("foreign principals made %d upstream requests with the victim's token", got-upstreamBefore)
	}
}

// expectation is what a principal kind must get from a route: "401", "refused", or
// "any" (anything but a 5xx, without the victim's data).
func expectation(r route, kind string, underAPI bool) string {
	if r.mode == public {
		return "any"
	}
	if underAPI && (kind == anonymous || kind == revoked || kind == removed) {
		return "401"
	}
	switch {
	case r.mode == onVictim && kind == otherUser && r.memberMay:
		return "any"
	case r.mode == onVictim:
		return "refused"
	case kind == agentKey && r.usersOnly:
		return "refused"
	case kind == otherUser && r.adminOnly:
		return "refused"
	}
	return "any"
}

// workflowBody is a request body carrying a definition.
func workflowBody(def string) string {
	b, _ := json.Marshal(map[string]any{"definition": def})
	return string(b)
}
