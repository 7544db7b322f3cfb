package securitytest

import (
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestLowFindings replays, through the hub's REST and MCP URLs, low findings of the last
// attack: each is refused or says no more than it should. (The others, which need a
// server process or a remote server, are in cmd/switchboard, api, providers/openapi,
// remotemcp and telemetry: the unknown-key throttle, the admin listener's Host, webhook
// replays, OpenAPI path parameters and remote tools named as the hub's.)
func TestLowFindings(t *testing.T) {
	t.Parallel()
	h := newHub(t, testdb.SQLite(t))
	f := h.seed()

	// A schedule firing every second is refused, naming the trigger's schedule.
	def := "name: every_second\ntriggers:\n  - schedule: \"@every 1s\"\nsteps:\n  - {name: me, tool: github_get_me, connection: " + f.connID + "}\n"
	if status, _, b := h.do(f.owner, http.MethodPost, "/api/workflows", workflowBody(def), nil); status != http.StatusBadRequest || !strings.Contains(string(b), "schedule") {
		t.Errorf("a schedule @every 1s: %d %s; want 400 naming the schedule", status, b)
	}

	// Single sign-on's discovery at a closed port says it could not be fetched, not the
	// dial error or the address it tried (a port scanner).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	status, _, b := h.do(f.owner, http.MethodPut, "/api/sso", `{"issuer":"http://`+closed+`","client_id":"x","client_secret":"y","allowed_domains":["victim.test"]}`, nil)
	if status < 400 || status >= 500 || strings.Contains(string(b), "refused") || strings.Contains(string(b), "dial") {
		t.Errorf("SSO discovery at a closed port: %d %s; want a refusal that does not echo the dial error", status, b)
	}

	// An OpenAPI description's javascript: documentation link is neither kept nor served.
	desc := `{"openapi":"3.0.3","info":{"title":"Links","version":"1"},"externalDocs":{"url":"javascript:alert(document.domain)"},` +
		`"paths":{"/x":{"get":{"operationId":"getX","externalDocs":{"url":"javascript:alert(1)"},"responses":{"200":{"description":"ok"}}}}}}`
	if status, _, b := h.do(f.owner, http.MethodPost, "/api/openapi-providers", `{"name":"links_api","base_url":"https://192.0.3.11","description":`+desc+`}`, nil); status != http.StatusCreated {
		t.Fatalf("add an API: %d %s", status, b)
	}
	for _, p := range []string{"/api/openapi-providers", "/api/providers", "/api/providers/links_api/operations"} {
		if _, _, b := h.do(f.owner, http.MethodGet, p, "", nil); strings.Contains(strings.ToLower(string(b)), "javascript:") {
			t.Errorf("GET %s serves a javascript: link: %s", p, b)
		}
	}

	// An MCP session is its key's: another key of the same person does not use it.
	var second struct {
		Key string `json:"key"`
	}
	h.want(f.owner, http.MethodPost, "/api/keys", `{"name":"another of mine"}`, http.StatusCreated, &second)
	session := h.session(f.owner, "/mcp/"+f.victimSlug)
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	if status, _, b := h.mcpPost(second.Key, "/mcp/"+f.victimSlug, session, list); status == http.StatusOK && !rpcRefused(b) {
		t.Errorf("another key of the same person used the session: %d %s", status, b)
	}
}
