package identity

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-hub/switchboard/egress"
)

// TestOIDCClientKeepsSecretsAtTheIssuer: the client an identity provider is reached
// with (discovery, keys, the token exchange) does not send the code and the client's
// secret on to another origin its token endpoint redirects to, not even by 307, and a
// redirect there answers no token.
func TestOIDCClientKeepsSecretsAtTheIssuer(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		elsewhere.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"stolen","token_type":"Bearer","id_token":"x"}`))
	}))
	t.Cleanup(other.Close)
	issuer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/token", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(issuer.Close)
	form := url.Values{"grant_type": {"authorization_code"}, "code": {"the-code"}, "client_id": {"sso-client"}, "client_secret": {"sso-secret"}}
	_, err := oidcClient(http.DefaultTransport).Post(issuer.URL+"/token", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if !errors.Is(err, egress.ErrCrossOriginRedirect) {
		t.Fatalf("a token request redirected elsewhere: %v, want it not followed", err)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the other origin got %d requests, want none", n)
	}
}
