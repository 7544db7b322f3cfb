package identity

import (
	"net/http"
	"strings"
	"testing"
)

// TestOAuthEndpointsCORS: a browser MCP client on any origin may register, exchange a
// code and revoke a token, with the same request headers the MCP URLs allow.
func TestOAuthEndpointsCORS(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	for _, path := range []string{RegistrationPath, TokenPath, RevocationPath} {
		t.Run(path+" preflight", func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodOptions, r.base+path, nil)
			req.Header.Set("Origin", "http://127.0.0.1:5173")
			req.Header.Set("Access-Control-Request-Method", "POST")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			allowed := strings.ToLower(res.Header.Get("Access-Control-Allow-Headers"))
			if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != "*" ||
				!strings.Contains(res.Header.Get("Access-Control-Allow-Methods"), "POST") ||
				!strings.Contains(allowed, "content-type") || !strings.Contains(allowed, "mcp-protocol-version") {
				t.Errorf("status %d, headers %v; want 204 allowing any origin to POST with Content-Type and Mcp-Protocol-Version", res.StatusCode, res.Header)
			}
		})
	}
	t.Run("registration answer", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, r.base+RegistrationPath,
			strings.NewReader(`{"client_name":"Browser client","redirect_uris":["http://127.0.0.1:5173/callback"],"token_endpoint_auth_method":"none"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "http://127.0.0.1:5173")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusCreated || res.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("status %d, Access-Control-Allow-Origin %q; want 201 readable by any origin", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"))
		}
	})
}
