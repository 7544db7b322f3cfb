package connections_test

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers"
)

// TestConnectLinks: a connect link a call made for a person starts that person's OAuth
// flow once, within ten minutes, asking only the link's scopes; another person (of the
// tenant or another) is refused and leaves it unused; a caller with no person behind it
// gets none; and the link is not done until a connection is made.
func TestConnectLinks(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		w := newWorld(t, db)
		reg := providers.NewRegistry()
		spec := providers.Spec{Name: "mail", Title: "Mail", AuthKinds: []providers.AuthKind{providers.AuthOAuth2},
			OAuth: &providers.OAuth2{AuthURL: "https://as.example.test/authorize", TokenURL: "https://as.example.test/token", Scopes: []string{"read", "send"}, PKCE: true},
			Verify: func(context.Context, *providers.Call) (providers.Account, error) {
				return providers.Account{ID: "acct-1"}, nil
			}}
		if err := reg.Register(spec); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		now := time.Now()
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		svc := connections.NewService(w.store, reg, &providers.Transports{}, nil)
		svc.ConfigureOAuth(connections.OAuthConfig{RedirectURL: "https://hub.example.test/oauth/callback", Now: clock,
			Apps: map[string]connections.OAuthApp{"mail": {ClientID: "client-1", ClientSecret: "secret-1"}}})

		link, err := svc.IssueConnectLink(ctx, w.a.ann, connections.ConnectLinkInput{Provider: "mail", Scopes: []string{"send"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, other := range []switchboard.Principal{w.a.bob, w.a.admin, w.b.ann} {
			if _, err := svc.StartConnectLink(ctx, other, link.Secret); switchboard.CodeOf(err) != switchboard.CodeForbidden {
				t.Errorf("%s of %s opened ann's link: %v, want forbidden", other.UserID, other.TenantID, err)
			}
		}
		a, err := svc.StartConnectLink(ctx, w.a.ann, link.Secret)
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(a.URL)
		if err != nil {
			t.Fatal(err)
		}
		if q := u.Query(); q.Get("scope") != "send" || q.Get("include_granted_scopes") != "true" || q.Get("client_id") != "client-1" {
			t.Errorf("authorization URL %s: want only the link's scope, keeping those granted", a.URL)
		}
		if _, err := svc.StartConnectLink(ctx, w.a.ann, link.Secret); switchboard.CodeOf(err) != switchboard.CodeConflict {
			t.Errorf("the link opened twice: %v, want conflict", err)
		}
		if id, done, err := svc.ConnectLinkDone(ctx, w.a.id, link.ID); err != nil || done || id != "" {
			t.Errorf("done before any callback: %q %v %v", id, done, err)
		}
		if _, _, err := svc.ConnectLinkDone(ctx, w.b.id, link.ID); switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Errorf("another tenant read the link: %v, want not found", err)
		}
		if _, err := svc.StartConnectLink(ctx, w.a.ann, "nope"); switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Errorf("an unknown link: %v, want not found", err)
		}

		// Ten minutes later a new link is expired, and then no longer awaited.
		late, err := svc.IssueConnectLink(ctx, w.a.ann, connections.ConnectLinkInput{Provider: "mail"})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		now = now.Add(connections.ConnectLinkTTL)
		mu.Unlock()
		if _, err := svc.StartConnectLink(ctx, w.a.ann, late.Secret); switchboard.CodeOf(err) != switchboard.CodeConflict {
			t.Errorf("an expired link opened: %v, want conflict", err)
		}
		mu.Lock()
		now = now.Add(connections.ConnectLinkTTL)
		mu.Unlock()
		if _, _, err := svc.ConnectLinkDone(ctx, w.a.id, late.ID); switchboard.CodeOf(err) != switchboard.CodeConflict {
			t.Errorf("an expired link still awaited: %v, want conflict", err)
		}

		// Only a caller with a person behind it gets a link, and only for an OAuth provider.
		if _, err := svc.IssueConnectLink(ctx, switchboard.Principal{TenantID: w.a.id, Kind: switchboard.PrincipalAgent, AgentID: "agt_x"}, connections.ConnectLinkInput{Provider: "mail"}); switchboard.CodeOf(err) != switchboard.CodeForbidden {
			t.Errorf("a link for nobody: %v, want forbidden", err)
		}
		if _, err := svc.IssueConnectLink(ctx, w.a.ann, connections.ConnectLinkInput{Provider: "github"}); switchboard.CodeOf(err) != switchboard.CodeInvalid {
			t.Errorf("a link for a provider without OAuth: %v, want invalid", err)
		}
	})
}
