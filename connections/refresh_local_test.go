package connections

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/notesfake"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
)

// downKeyring is a keyring whose backend does not answer (Vault unreachable): open,
// seal or both fail as the client library reports it.
type downKeyring struct {
	keyring.Keyring
	open, seal bool
}

var errVaultDown = errors.New(`Put "https://vault.internal:8200/v1/transit/decrypt/switchboard": dial tcp 10.0.0.9:8200: connect: connection refused`)

func (k downKeyring) Open(ctx context.Context, keyID string, ciphertext, aad []byte) ([]byte, error) {
	if k.open {
		return nil, errVaultDown
	}
	return k.Keyring.Open(ctx, keyID, ciphertext, aad)
}

func (k downKeyring) Seal(ctx context.Context, plaintext, aad []byte) ([]byte, string, error) {
	if k.seal {
		return nil, "", errVaultDown
	}
	return k.Keyring.Seal(ctx, plaintext, aad)
}

// tokenEndpoint is the provider's token endpoint: it refreshes r1 for the deployment's
// app "deploy-app" and records the client and refresh token of every request.
type tokenEndpoint struct {
	*httptest.Server
	mu   sync.Mutex
	sent []string // "client_id refresh_token"
}

func newTokenEndpoint(t *testing.T) *tokenEndpoint {
	te := &tokenEndpoint{}
	te.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		client, secret, ok := r.BasicAuth()
		if !ok {
			client, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		te.mu.Lock()
		te.sent = append(te.sent, client+" "+r.PostForm.Get("refresh_token"))
		te.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/token" || r.PostForm.Get("grant_type") != "refresh_token" || client != "deploy-app" || secret != "deploy-secret" || r.PostForm.Get("refresh_token") != "r1" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"bad refresh request"}`))
			return
		}
		_, _ = w.Write([]byte(`{"access_token":"a2","token_type":"bearer","refresh_token":"r2","expires_in":3600}`))
	}))
	t.Cleanup(te.Close)
	return te
}

func (te *tokenEndpoint) requests() []string {
	te.mu.Lock()
	defer te.mu.Unlock()
	return slices.Clone(te.sent)
}

// TestLocalRefreshFailureChangesNothing: a node that cannot refresh a token for a
// reason of its own (no OAuth app configured here, another deployment app here, a key
// missing from its keyring, Vault unreachable for opening or for sealing) leaves the
// connection as it is (active, same version, not deleted) and asks the provider
// nothing; a node configured right then refreshes it.
func TestLocalRefreshFailureChangesNothing(t *testing.T) {
	t.Parallel()
	deployApps := func(spec *providers.Spec, id string) map[string]OAuthApp {
		return map[string]OAuthApp{spec.Name: {ClientID: id, ClientSecret: "deploy-secret"}}
	}
	tests := []struct {
		name string
		// node returns the misconfigured node's apps and keyring, given the right ones.
		node func(t *testing.T, spec *providers.Spec, kr keyring.Keyring) (map[string]OAuthApp, keyring.Keyring)
	}{
		{name: "no OAuth app on this node", node: func(t *testing.T, spec *providers.Spec, kr keyring.Keyring) (map[string]OAuthApp, keyring.Keyring) {
			return nil, kr
		}},
		{name: "another deployment app on this node", node: func(t *testing.T, spec *providers.Spec, kr keyring.Keyring) (map[string]OAuthApp, keyring.Keyring) {
			return deployApps(spec, "other-app"), kr
		}},
		{name: "key missing from this node's keyring", node: func(t *testing.T, spec *providers.Spec, kr keyring.Keyring) (map[string]OAuthApp, keyring.Keyring) {
			other, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "other", "master.key"))
			if err != nil {
				t.Fatal(err)
			}
			return deployApps(spec, "deploy-app"), other
		}},
		{name: "vault unreachable", node: func(t *testing.T, spec *providers.Spec, kr keyring.Keyring) (map[string]OAuthApp, keyring.Keyring) {
			return deployApps(spec, "deploy-app"), downKeyring{Keyring: kr, open: true, seal: true}
		}},
		{name: "vault unreachable for sealing only", node: func(t *testing.T, spec *providers.Spec, kr keyring.Keyring) (map[string]OAuthApp, keyring.Keyring) {
			return deployApps(spec, "deploy-app"), downKeyring{Keyring: kr, seal: true}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testdb.Each(t, func(t *testing.T, db *gorm.DB) {
				t.Parallel()
				ctx := context.Background()
				for _, q := range []string{
					`INSERT INTO tenants (id, slug, name, created_at) VALUES ('ten_a', 'acme', 'Acme', CURRENT_TIMESTAMP)`,
					`INSERT INTO users (id, tenant_id, email, role, created_at) VALUES ('usr_a', 'ten_a', 'a@acme.test', 'owner', CURRENT_TIMESTAMP)`,
				} {
					if err := db.Exec(q).Error; err != nil {
						t.Fatal(err)
					}
				}
				te := newTokenEndpoint(t)
				spec := notesfake.Spec(te.URL)
				spec.OAuth = &providers.OAuth2{AuthURL: te.URL + "/authorize", TokenURL: te.URL + "/token"}
				reg := providers.NewRegistry()
				if err := reg.Register(spec); err != nil {
					t.Fatal(err)
				}
				kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "k", "master.key"))
				if err != nil {
					t.Fatal(err)
				}
				newNode := func(apps map[string]OAuthApp, kr keyring.Keyring) (*Service, *auditLog) {
					rec := &auditLog{}
					svc := NewService(NewStore(db, kr), reg, &providers.Transports{}, rec)
					svc.ConfigureOAuth(OAuthConfig{RedirectURL: "https://hub.test/oauth/callback", Apps: apps, Logger: slog.New(slog.DiscardHandler)})
					return svc, rec
				}
				store := NewStore(db, kr)
				c := Connection{OwnerUserID: "usr_a", Provider: spec.Name, AuthKind: providers.AuthOAuth2, AccountID: "1", AccountLabel: "notes", Status: StatusActive}
				if err := store.Create(ctx, "ten_a", &c, Credentials{AccessToken: "a1", RefreshToken: "r1", Expiry: time.Now().Add(time.Minute), ClientID: "deploy-app"}); err != nil {
					t.Fatal(err)
				}

				bad, rec := newNode(tt.node(t, &spec, kr))
				if _, err := bad.RefreshDue(ctx); err != nil {
					t.Fatalf("refresh pass on the misconfigured node: %v", err)
				}
				got, err := store.Get(ctx, "ten_a", c.ID)
				if err != nil {
					t.Fatalf("the connection after the misconfigured node's pass: %v", err)
				}
				if got.Status != StatusActive || got.Version != c.Version || got.RefreshClaim != "" {
					t.Errorf("after the misconfigured node's pass: status %s version %d claim %q; want active, version %d, no lease", got.Status, got.Version, got.RefreshClaim, c.Version)
				}
				if slices.Contains(rec.kinds(), audit.KindConnectionNeedsReconnect) {
					t.Errorf("the misconfigured node audited %v", rec.kinds())
				}
				if sent := te.requests(); len(sent) != 0 {
					t.Errorf("the misconfigured node asked the provider %q, want nothing", sent)
				}

				good, _ := newNode(deployApps(&spec, "deploy-app"), kr)
				if n, err := good.RefreshDue(ctx); err != nil || n != 1 {
					t.Fatalf("refresh pass on the right node: %d refreshed, %v; want 1", n, err)
				}
				if diff := cmp.Diff([]string{"deploy-app r1"}, te.requests()); diff != "" {
					t.Errorf("token requests (-want +got):\n%s", diff)
				}
				_, creds, err := store.Open(ctx, "ten_a", c.ID)
				if err != nil || creds.AccessToken != "a2" || creds.RefreshToken != "r2" {
					t.Errorf("credentials after the right node's refresh: %q %q %v; want a2 and r2", creds.AccessToken, creds.RefreshToken, err)
				}
			})
		})
	}
}
