package identity

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// agentSet is an Agents of fixed (tenant slug, agent ID) pairs; the agent "agt_broken"
// fails the lookup, as a database that is down would.
type agentSet map[[2]string]bool

func (s agentSet) AgentExists(_ context.Context, slug, id string) (bool, error) {
	if id == "agt_broken" {
		return false, errors.New("database is down")
	}
	return s[[2]string{slug, id}], nil
}

func metadataServer(t *testing.T) *httptest.Server {
	t.Helper()
	h := &MetadataHandler{
		PublicURL:           "https://hub.example.com",
		AuthorizationServer: "https://hub.example.com",
		Agents:              agentSet{{"acme", "agt_a"}: true, {"beta", "agt_b"}: true},
		Logger:              slog.New(slog.DiscardHandler),
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// TestMetadata checks the protected resource metadata of tenant and agent URLs: the
// exact MCP URL as the resource, the scope, header bearer tokens, the authorization
// server; 404 for another tenant's agent, an unknown agent and
// malformed paths; and the same document for a tenant slug whether or not it exists.
func TestMetadata(t *testing.T) {
	t.Parallel()
	srv := metadataServer(t)
	tests := []struct {
		name       string
		path       string
		wantStatus int
		wantDoc    map[string]any
	}{
		{name: "tenant URL", path: "/mcp/acme", wantStatus: http.StatusOK, wantDoc: map[string]any{
			"resource": "https://hub.example.com/mcp/acme", "scopes_supported": []any{"mcp"}, "bearer_methods_supported": []any{"header"}, "authorization_servers": []any{"https://hub.example.com"},
			"resource_name": "Switchboard MCP URL of workspace acme",
		}},
		{name: "a tenant slug nobody has gets the same document: no tenant oracle", path: "/mcp/nosuch", wantStatus: http.StatusOK, wantDoc: map[string]any{
			"resource": "https://hub.example.com/mcp/nosuch", "scopes_supported": []any{"mcp"}, "bearer_methods_supported": []any{"header"}, "authorization_servers": []any{"https://hub.example.com"},
			"resource_name": "Switchboard MCP URL of workspace nosuch",
		}},
		{name: "agent URL", path: "/mcp/acme/agents/agt_a", wantStatus: http.StatusOK, wantDoc: map[string]any{
			"resource": "https://hub.example.com/mcp/acme/agents/agt_a", "scopes_supported": []any{"mcp"}, "bearer_methods_supported": []any{"header"}, "authorization_servers": []any{"https://hub.example.com"},
			"resource_name": "Switchboard MCP URL of an agent of workspace acme",
		}},
		{name: "another tenant's agent", path: "/mcp/acme/agents/agt_b", wantStatus: http.StatusNotFound},
		{name: "an agent under a tenant that does not exist", path: "/mcp/nosuch/agents/agt_a", wantStatus: http.StatusNotFound},
		{name: "unknown agent", path: "/mcp/acme/agents/agt_zzz", wantStatus: http.StatusNotFound},
		{name: "not a tenant slug", path: "/mcp/ACME", wantStatus: http.StatusNotFound},
		{name: "no resource path", path: "", wantStatus: http.StatusNotFound},
		{name: "not an MCP URL", path: "/mcp/acme/tools", wantStatus: http.StatusNotFound},
		{name: "the lookup fails", path: "/mcp/acme/agents/agt_broken", wantStatus: http.StatusInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := http.Get(srv.URL + MetadataPath + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != tt.wantStatus {
				b, _ := io.ReadAll(res.Body)
				t.Fatalf("status %d (%s), want %d", res.StatusCode, b, tt.wantStatus)
			}
			if got := res.Header.Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type %q, want application/json", got)
			}
			if tt.wantDoc == nil {
				return
			}
			var doc map[string]any
			if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantDoc, doc); diff != "" {
				t.Errorf("document (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMetadataErrorsSayLittle checks that a failed agent lookup answers a bare server
// error (the cause goes to the log only), and a 404 says no more than that.
func TestMetadataErrorsSayLittle(t *testing.T) {
	t.Parallel()
	srv := metadataServer(t)
	for path, want := range map[string]string{
		"/mcp/acme/agents/agt_broken": `{"error":"server_error","error_description":"internal error"}`,
		"/mcp/acme/agents/agt_b":      `{"error":"not_found","error_description":"no MCP URL has this metadata"}`,
	} {
		res, err := http.Get(srv.URL + MetadataPath + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if diff := cmp.Diff(want, strings.TrimSpace(string(b))); diff != "" {
			t.Errorf("%s body (-want +got):\n%s", path, diff)
		}
	}
}

// TestMetadataMethods checks that browsers may read the document (CORS, preflight for
// the MCP-Protocol-Version header clients send) and that other methods are refused.
func TestMetadataMethods(t *testing.T) {
	t.Parallel()
	srv := metadataServer(t)
	tests := []struct {
		method     string
		wantStatus int
		wantHeader map[string]string
	}{
		{method: http.MethodGet, wantStatus: http.StatusOK, wantHeader: map[string]string{"Access-Control-Allow-Origin": "*"}},
		{method: http.MethodHead, wantStatus: http.StatusOK, wantHeader: map[string]string{"Access-Control-Allow-Origin": "*"}},
		{method: http.MethodOptions, wantStatus: http.StatusNoContent, wantHeader: map[string]string{
			"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS", "Access-Control-Allow-Headers": "*",
		}},
		{method: http.MethodPost, wantStatus: http.StatusMethodNotAllowed, wantHeader: map[string]string{"Allow": "GET, HEAD, OPTIONS"}},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequest(tt.method, srv.URL+MetadataPath+"/mcp/acme", nil)
			req.Header.Set("Origin", "https://inspector.example.com")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			got := map[string]string{}
			for k := range tt.wantHeader {
				got[k] = res.Header.Get(k)
			}
			if res.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d", res.StatusCode, tt.wantStatus)
			}
			if diff := cmp.Diff(tt.wantHeader, got); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMetadataWithoutAgents checks that a deployment without agents serves tenant URLs'
// metadata and none for agent URLs.
func TestMetadataWithoutAgents(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&MetadataHandler{PublicURL: "https://hub.example.com"})
	t.Cleanup(srv.Close)
	got := map[string]int{}
	for _, path := range []string{"/mcp/acme", "/mcp/acme/agents/agt_a"} {
		res, err := http.Get(srv.URL + MetadataPath + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		got[path] = res.StatusCode
	}
	want := map[string]int{"/mcp/acme": http.StatusOK, "/mcp/acme/agents/agt_a": http.StatusNotFound}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}
