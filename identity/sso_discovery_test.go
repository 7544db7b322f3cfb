package identity

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testlog"
)

// TestSSODiscoveryErrorsSayLittle sets issuers whose discovery fails in every way: the
// admin is told only that the discovery document could not be fetched, with the HTTP
// status when one came, never the dial error, the address or the answer's body (the
// issuer field would otherwise scan the hub's network); the server log has the detail.
func TestSSODiscoveryErrorsSayLittle(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	var logs testlog.Buffer
	r.srv.o.Logger = slog.New(slog.NewTextHandler(&logs, nil))

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + closed.Addr().String()
	closed.Close() // nothing listens there now: connection refused
	banner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte("SSH-2.0-OpenSSH_9.6 internal-banner"))
	}))
	t.Cleanup(banner.Close)
	notDiscovery := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`<html>internal-banner: redis 7.2</html>`))
	}))
	t.Cleanup(notDiscovery.Close)
	otherIssuer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"issuer":"https://internal-banner.corp.example","authorization_endpoint":"https://x/a","token_endpoint":"https://x/t","jwks_uri":"https://x/k"}`))
	}))
	t.Cleanup(otherIssuer.Close)

	tests := []struct {
		name, issuer, wantTail, wantLogged string
	}{
		{name: "nothing listens", issuer: closedURL, wantTail: "could not be fetched", wantLogged: "connection refused"},
		{name: "an error answer", issuer: banner.URL, wantTail: "could not be fetched: HTTP 403", wantLogged: "internal-banner"},
		{name: "not a discovery document", issuer: notDiscovery.URL, wantTail: "could not be fetched: it is not a discovery document of this issuer", wantLogged: "could not unmarshal"},
		{name: "another issuer's document", issuer: otherIssuer.URL, wantTail: "could not be fetched: it is not a discovery document of this issuer", wantLogged: "internal-banner.corp.example"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.srv.SetSSO(context.Background(), r.admin(), SSOInput{Issuer: tt.issuer, ClientID: "switchboard-acme", ClientSecret: ssoSecret})
			e := switchboard.AsError(err)
			want := "the issuer's OpenID discovery document (" + tt.issuer + "/.well-known/openid-configuration) " + tt.wantTail
			if e.Code != switchboard.CodeInvalid || e.Field != "issuer" || e.Message != want {
				t.Fatalf("SetSSO: %v; want invalid issuer: %s", err, want)
			}
			for _, leak := range []string{"internal-banner", "SSH-2.0", "redis", "connection refused", "dial", "decode"} {
				if strings.Contains(e.Message, leak) {
					t.Errorf("the admin is told %q", leak)
				}
			}
			if !strings.Contains(logs.String(), tt.wantLogged) {
				t.Errorf("the server log lacks %q: %s", tt.wantLogged, logs.String())
			}
		})
	}
	if s, err := r.srv.SSO(context.Background(), r.admin()); err != nil || s.Configured {
		t.Errorf("refused issuers stored single sign-on: %+v, %v", s, err)
	}
}
