package connections_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers"
)

// TestConnectionOAuth: a provider whose authorization server is each connection's
// supplies its OAuth as a capability of its Spec (ConnectionOAuth), with no other
// registration: the service keeps the flow's state, hands the callback's code and the
// flow's sealed extra to the Spec's Finish, stores the connection it returns (provider,
// owner, account, scopes, meta), and refreshes its expiring token through the Spec's
// Refresh, told of the connection, keeping the refresh token when none is returned.
func TestConnectionOAuth(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		w := newWorld(t, db)
		var mu sync.Mutex
		var finished []providers.OAuthCallback
		var refreshed []providers.Connection
		spec := providers.Spec{Name: "perconn", Title: "Per connection", AuthKinds: []providers.AuthKind{providers.AuthOAuth2},
			Tools: func(context.Context, providers.Connection) ([]*providers.Tool, error) { return nil, nil },
			ConnectionOAuth: &providers.ConnectionOAuth{
				Finish: func(_ context.Context, cb providers.OAuthCallback) (providers.NewConnection, providers.Credentials, error) {
					mu.Lock()
					finished = append(finished, cb)
					mu.Unlock()
					return providers.NewConnection{AuthKind: providers.AuthOAuth2, AccountID: "acct-1", AccountLabel: "Acme", Scopes: []string{"read", "write"}, Meta: map[string]string{"server": "s1"}},
						providers.Credentials{AccessToken: "a1", TokenType: "Bearer", RefreshToken: "r1", Expiry: time.Now().Add(time.Minute), ClientID: "client-1"}, nil
				},
				Refresh: func(_ context.Context, c providers.Connection, creds providers.Credentials) (providers.Credentials, error) {
					mu.Lock()
					refreshed = append(refreshed, c)
					mu.Unlock()
					if creds.RefreshToken != "r1" || creds.ClientID != "client-1" {
						return providers.Credentials{}, errors.New("refused")
					}
					return providers.Credentials{AccessToken: "a2", TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}, nil
				},
			}}
		reg := providers.NewRegistry()
		if err := reg.Register(spec); err != nil {
			t.Fatal(err)
		}
		svc := connections.NewService(w.store, reg, &providers.Transports{}, nil)
		svc.ConfigureOAuth(connections.OAuthConfig{RedirectURL: "https://hub.example.test/oauth/callback"})
		var state string
		a, err := svc.StartExternalOAuth(ctx, w.a.ann, connections.ExternalStart{Provider: "perconn", ClientID: "client-1", Extra: []byte(`{"flow":1}`),
			AuthURL: func(s string) string { state = s; return "https://as.example.test/authorize?state=" + s }})
		if err != nil {
			t.Fatal(err)
		}
		if a.URL != "https://as.example.test/authorize?state="+state {
			t.Errorf("authorization URL = %q", a.URL)
		}
		c, err := svc.Callback(ctx, connections.CallbackInput{State: state, Code: "code-1", Browser: a.CookieValue})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"perconn", w.a.ann.UserID, "acct-1", "Acme", "read write", "s1", string(providers.AuthOAuth2)}
		if diff := cmp.Diff(want, []string{c.Provider, c.OwnerUserID, c.AccountID, c.AccountLabel, c.Scopes, c.Meta["server"], string(c.AuthKind)}); diff != "" {
			t.Errorf("stored connection (-want +got):\n%s", diff)
		}
		mu.Lock()
		if len(finished) != 1 || finished[0].Code != "code-1" || string(finished[0].Extra) != `{"flow":1}` || finished[0].Tenant != w.a.id || finished[0].UserID != w.a.ann.UserID || finished[0].RedirectURI != "https://hub.example.test/oauth/callback" {
			t.Errorf("Finish got %+v", finished)
		}
		mu.Unlock()
		conn, creds, err := svc.Open(ctx, w.a.id, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := svc.TokenSource(conn, creds).Token() // expires within OnDemandWindow: refreshed
		if err != nil {
			t.Fatal(err)
		}
		if tok.AccessToken != "a2" {
			t.Errorf("token = %q, want the refreshed a2", tok.AccessToken)
		}
		mu.Lock()
		if len(refreshed) != 1 || refreshed[0].ID != c.ID || refreshed[0].Tenant != w.a.id || refreshed[0].Meta["server"] != "s1" {
			t.Errorf("Refresh got %+v", refreshed)
		}
		mu.Unlock()
		if _, stored, err := svc.Open(ctx, w.a.id, c.ID); err != nil || stored.AccessToken != "a2" || stored.RefreshToken != "r1" || stored.ClientID != "client-1" {
			t.Errorf("stored after refresh: %+v %v, want a2 with r1 and client-1 kept", stored, err)
		}
	})
}
