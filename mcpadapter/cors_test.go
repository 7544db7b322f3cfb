package mcpadapter

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// corsRequest sends method to path with the headers and returns the answer, its body read.
func corsRequest(t *testing.T, e *env, method, path, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"browser","version":"1"}}}`

func TestCORSPreflight(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(o *Options) {
		o.AllowedOrigins = []string{"https://app.example.com", "http://127.0.0.1:5173"}
	})
	preflight := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version"}
	tests := []struct {
		name       string
		path       string
		origin     string
		wantStatus int
		wantAllow  string // Access-Control-Allow-Origin
	}{
		{name: "a listed origin at the tenant URL", path: "/mcp/acme", origin: "https://app.example.com", wantStatus: http.StatusNoContent, wantAllow: "https://app.example.com"},
		{name: "a listed loopback origin", path: "/mcp/acme", origin: "http://127.0.0.1:5173", wantStatus: http.StatusNoContent, wantAllow: "http://127.0.0.1:5173"},
		{name: "a listed origin at an agent URL", path: "/mcp/acme/agents/agt_triage", origin: "https://app.example.com", wantStatus: http.StatusNoContent, wantAllow: "https://app.example.com"},
		{name: "an origin not listed", path: "/mcp/acme", origin: "https://evil.example.com", wantStatus: http.StatusForbidden},
		{name: "a loopback origin not listed, on a loopback listener", path: "/mcp/acme", origin: "http://127.0.0.1:5174", wantStatus: http.StatusForbidden},
		{name: "the deployment's own origin, not listed", path: "/mcp/acme", origin: "https://hub.test", wantStatus: http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := map[string]string{"Origin": tt.origin}
			for k, v := range preflight {
				h[k] = v
			}
			resp, body := corsRequest(t, e, http.MethodOptions, tt.path, "", h)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.wantStatus, body)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tt.wantAllow {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, tt.wantAllow)
			}
			if tt.wantAllow == "" {
				for k := range resp.Header {
					if strings.HasPrefix(k, "Access-Control-") {
						t.Errorf("an origin not listed got %s: %q", k, resp.Header.Get(k))
					}
				}
				if !strings.Contains(body, "SWITCHBOARD_ALLOWED_ORIGINS") || !strings.Contains(body, tt.origin) {
					t.Errorf("the refusal %s does not name the origin and the variable that allows it", body)
				}
				return
			}
			for _, m := range []string{"GET", "POST", "DELETE", "OPTIONS"} {
				if !strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), m) {
					t.Errorf("Access-Control-Allow-Methods %q lacks %s", resp.Header.Get("Access-Control-Allow-Methods"), m)
				}
			}
			allowed := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
			for _, h := range []string{"authorization", "content-type", "accept", "mcp-session-id", "mcp-protocol-version", "last-event-id"} {
				if !strings.Contains(allowed, h) {
					t.Errorf("Access-Control-Allow-Headers %q lacks %s", allowed, h)
				}
			}
			if resp.Header.Get("Access-Control-Max-Age") == "" {
				t.Error("the preflight answer has no Access-Control-Max-Age")
			}
			if resp.Header.Get("Access-Control-Allow-Credentials") != "" {
				t.Error("the preflight allows credentials: browser clients use bearer headers, never cookies")
			}
		})
	}
}

func TestCORSResponses(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // allows https://app.example.com
	json := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	tests := []struct {
		name       string
		origin     string
		key        string
		wantStatus int
		wantAllow  string
	}{
		{name: "a listed origin, authenticated", origin: "https://app.example.com", key: "key-alice", wantStatus: http.StatusOK, wantAllow: "https://app.example.com"},
		// The 401 carries CORS: a browser client reads WWW-Authenticate to start OAuth.
		{name: "a listed origin, no credential", origin: "https://app.example.com", wantStatus: http.StatusUnauthorized, wantAllow: "https://app.example.com"},
		{name: "a listed origin, a key of another tenant", origin: "https://app.example.com", key: "key-bob", wantStatus: http.StatusForbidden, wantAllow: "https://app.example.com"},
		{name: "the deployment's own origin (same origin: no CORS needed)", origin: "https://hub.test", key: "key-alice", wantStatus: http.StatusOK},
		{name: "a loopback origin not listed", origin: "http://localhost:3000", key: "key-alice", wantStatus: http.StatusOK},
		{name: "an origin not listed", origin: "https://evil.example.com", key: "key-alice", wantStatus: http.StatusForbidden},
		{name: "no Origin (not a browser)", key: "key-alice", wantStatus: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := map[string]string{}
			for k, v := range json {
				h[k] = v
			}
			if tt.origin != "" {
				h["Origin"] = tt.origin
			}
			if tt.key != "" {
				h["Authorization"] = "Bearer " + tt.key
			}
			resp, body := corsRequest(t, e, http.MethodPost, "/mcp/acme", initializeBody, h)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.wantStatus, body)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tt.wantAllow {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, tt.wantAllow)
			}
			expose := resp.Header.Get("Access-Control-Expose-Headers")
			if tt.wantAllow == "" {
				if expose != "" {
					t.Errorf("Access-Control-Expose-Headers %q for an origin not listed", expose)
				}
				return
			}
			for _, name := range []string{"Mcp-Session-Id", "Mcp-Protocol-Version", "WWW-Authenticate"} {
				if !strings.Contains(expose, name) {
					t.Errorf("Access-Control-Expose-Headers %q lacks %s", expose, name)
				}
			}
			if !strings.Contains(resp.Header.Get("Vary"), "Origin") {
				t.Errorf("Vary %q lacks Origin: a shared cache could serve one origin's answer to another", resp.Header.Get("Vary"))
			}
			if tt.wantStatus == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("the 401 has no WWW-Authenticate")
			}
			if tt.wantStatus == http.StatusOK && resp.Header.Get("Mcp-Session-Id") == "" {
				t.Error("initialize returned no Mcp-Session-Id")
			}
		})
	}
}

// TestCORSAnyOrigin: "*" in the allowed origins lets every origin call, each answered
// with its own origin.
func TestCORSAnyOrigin(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(o *Options) { o.AllowedOrigins = []string{"*"} })
	resp, body := corsRequest(t, e, http.MethodOptions, "/mcp/acme", "", map[string]string{"Origin": "https://any.example.org", "Access-Control-Request-Method": "POST"})
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "https://any.example.org" {
		t.Errorf("preflight: status %d, Access-Control-Allow-Origin %q; body %s", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"), body)
	}
}

// TestOptionsWithoutPreflight: an OPTIONS that is no CORS preflight is not a method an
// MCP URL serves.
func TestOptionsWithoutPreflight(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	resp, _ := corsRequest(t, e, http.MethodOptions, "/mcp/acme", "", map[string]string{"Authorization": "Bearer key-alice"})
	if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(resp.Header.Get("Allow"), "OPTIONS") {
		t.Errorf("status %d, Allow %q; want 405 listing OPTIONS", resp.StatusCode, resp.Header.Get("Allow"))
	}
}
