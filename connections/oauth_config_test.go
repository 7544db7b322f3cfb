package connections

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
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

// TestTokenRequestsFollowNoRedirect: a token endpoint that redirects the exchange (the
// app's secret and the code in its body) to another origin gets it once; the other
// origin gets nothing, not even with 307, which would send the body again.
func TestTokenRequestsFollowNoRedirect(t *testing.T) {
	t.Parallel()
	var otherHits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		otherHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token": "stolen", "token_type": "bearer"}`))
	}))
	t.Cleanup(other.Close)
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/token", status)
		}))
		t.Cleanup(srv.Close)
		s := &Service{tr: &providers.Transports{}}
		spec := &providers.Spec{Name: "acme", OAuth: &providers.OAuth2{AuthURL: srv.URL + "/authorize", TokenURL: srv.URL + "/token"}}
		cfg := oauthConfig(OAuthApp{ClientID: "app-id", ClientSecret: "app-secret"}, *spec.OAuth, "https://hub.test/oauth/callback")
		if _, err := cfg.Exchange(s.tokenContext(context.Background(), spec), "the-code"); err == nil {
			t.Errorf("%d: the exchange succeeded through a redirect", status)
		}
	}
	if n := otherHits.Load(); n != 0 {
		t.Fatalf("the other origin got %d token requests, want none", n)
	}
}
