package connections

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers"
)

// TestOAuthConfigClientAuth checks how the OAuth app authenticates to the token
// endpoint: in the form body by default, as HTTP Basic auth (and not in the body) when
// the provider asks for it, as Notion does.
func TestOAuthConfigClientAuth(t *testing.T) {
	t.Parallel()
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("app-id:app-secret"))
	for _, tc := range []struct {
		name      string
		basicAuth bool
		wantAuth  string
		wantForm  url.Values
	}{
		{name: "client_secret_post", wantForm: url.Values{"grant_type": {"authorization_code"}, "code": {"the-code"},
			"redirect_uri": {"https://hub.test/oauth/callback"}, "client_id": {"app-id"}, "client_secret": {"app-secret"}}},
		{name: "client_secret_basic", basicAuth: true, wantAuth: basic, wantForm: url.Values{"grant_type": {"authorization_code"},
			"code": {"the-code"}, "redirect_uri": {"https://hub.test/oauth/callback"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var gotAuth string
			var gotForm url.Values
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if err := r.ParseForm(); err != nil {
					t.Errorf("parse form: %v", err)
				}
				gotAuth, gotForm = r.Header.Get("Authorization"), r.PostForm
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"access_token": "tok", "token_type": "bearer", "bot_id": "b1", "workspace_name": "Acme"}`))
			}))
			t.Cleanup(srv.Close)
			endpoints := providers.OAuth2{AuthURL: srv.URL + "/authorize", TokenURL: srv.URL + "/token", BasicAuth: tc.basicAuth}
			cfg := oauthConfig(OAuthApp{ClientID: "app-id", ClientSecret: "app-secret"}, endpoints, "https://hub.test/oauth/callback")
			tok, err := cfg.Exchange(context.Background(), "the-code")
			if err != nil {
				t.Fatalf("exchange: %v", err)
			}
			if tok.AccessToken != "tok" {
				t.Errorf("access token = %q", tok.AccessToken)
			}
			if gotAuth != tc.wantAuth {
				t.Errorf("Authorization = %q, want %q", gotAuth, tc.wantAuth)
			}
			if diff := cmp.Diff(tc.wantForm, gotForm); diff != "" {
				t.Errorf("form (-want +got):\n%s", diff)
			}
		})
	}
}
