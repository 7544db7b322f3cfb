package connections

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/notesfake"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
)

// auditLog collects audit events.
type auditLog struct {
	mu sync.Mutex
	ev []audit.Event
}

func (e *auditLog) Record(ev audit.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ev = append(e.ev, ev)
}

func (e *auditLog) kinds() []audit.Kind {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []audit.Kind
	for _, ev := range e.ev {
		out = append(out, ev.Kind)
	}
	return out
}

// TestRefusedRefreshRereadsTheStore: when the provider refuses the refresh token, the
// row is read again before the connection is marked needs_reconnect; if another node
// rotated the token meanwhile, its credentials are used and nothing is marked.
func TestRefusedRefreshRereadsTheStore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		rotatedMeanwhile bool
		wantStatus       Status
		wantCode         switchboard.Code
		wantKinds        []audit.Kind
	}{
		{name: "another node rotated it", rotatedMeanwhile: true, wantStatus: StatusActive, wantKinds: []audit.Kind{audit.KindConnectionRefreshFailed}},
		{name: "nobody did", wantStatus: StatusNeedsReconnect, wantCode: switchboard.CodeReconnect,
			wantKinds: []audit.Kind{audit.KindConnectionRefreshFailed, audit.KindConnectionNeedsReconnect}},
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
				kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "k", "master.key"))
				if err != nil {
					t.Fatal(err)
				}
				store := NewStore(db, kr)
				rec := &auditLog{}
				svc := NewService(store, providers.NewRegistry(), &providers.Transports{}, rec)
				c := Connection{OwnerUserID: "usr_a", Provider: "github", AuthKind: providers.AuthOAuth2, AccountID: "1", AccountLabel: "octocat"}
				if err := store.Create(ctx, "ten_a", &c, Credentials{AccessToken: "a1", RefreshToken: "r1", Expiry: time.Now().Add(time.Minute)}); err != nil {
					t.Fatal(err)
				}
				rotated := Credentials{AccessToken: "a2", TokenType: "Bearer", RefreshToken: "r2", Expiry: time.Now().Add(8 * time.Hour).UTC().Truncate(time.Microsecond)}
				if tt.rotatedMeanwhile {
					if _, err := store.UpdateCredentials(ctx, "ten_a", c.ID, c.Version, rotated, StatusActive); err != nil {
						t.Fatal(err)
					}
				}
				claim := "rfc_test"
				if ok, err := store.claimRefresh(ctx, "ten_a", c.ID, claim, time.Now(), time.Now().Add(time.Minute)); err != nil || !ok {
					t.Fatalf("claim: %v %v", ok, err)
				}
				cause := &switchboard.Error{Code: switchboard.CodeInvalid, Field: "code", Message: "GitHub refused to refresh the token: invalid_grant"}
				creds, err := svc.refreshFailed(ctx, &c, claim, cause, true)
				if switchboard.CodeOf(err) != tt.wantCode && !(tt.wantCode == "" && err == nil) {
					t.Fatalf("err = %v, want code %q", err, tt.wantCode)
				}
				if tt.rotatedMeanwhile {
					if diff := cmp.Diff(rotated, creds); diff != "" {
						t.Errorf("credentials (-want +got):\n%s", diff)
					}
				}
				got, err := store.Get(ctx, "ten_a", c.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != tt.wantStatus || got.RefreshClaim != "" || got.LastRefreshError == "" {
					t.Errorf("status %s, claim %q, last error %q; want %s, no claim, the failure", got.Status, got.RefreshClaim, got.LastRefreshError, tt.wantStatus)
				}
				if diff := cmp.Diff(tt.wantKinds, rec.kinds()); diff != "" {
					t.Errorf("audit kinds (-want +got):\n%s", diff)
				}
				// Another tenant reaches none of it.
				if _, err := store.Get(ctx, "ten_b", c.ID); switchboard.CodeOf(err) != switchboard.CodeNotFound {
					t.Errorf("another tenant's read: %v", err)
				}
				if ok, err := store.claimRefresh(ctx, "ten_b", c.ID, "rfc_b", time.Now(), time.Now().Add(time.Minute)); err != nil || ok {
					t.Errorf("another tenant claimed the refresh: %v %v", ok, err)
				}
			})
		})
	}
}

// TestRevokeMessage: a failed revocation tells the caller the provider's words or the
// coded error's message, and an internal error only that it happened (its cause, which
// may name keys and rows, goes to the log).
func TestRevokeMessage(t *testing.T) {
	t.Parallel()
	spec := &providers.Spec{Name: "github", Title: "GitHub"}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "provider refusal", err: errors.New("GitHub refused to revoke the grant (500): Server Error"), want: "GitHub refused to revoke the grant (500): Server Error"},
		{name: "coded", err: switchboard.Invalid("provider", "the OAuth app that issued the token is no longer configured"), want: "provider: the OAuth app that issued the token is no longer configured"},
		{name: "internal", err: switchboard.Internal(errors.New("open connection con_1 with key k-7: cipher: message authentication failed")), want: "Switchboard could not revoke the token (internal error); revoke it in your GitHub settings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &Service{oauth: OAuthConfig{Logger: slog.New(slog.DiscardHandler)}}
			if diff := cmp.Diff(tt.want, s.revokeMessage(context.Background(), spec, "con_1", tt.err)); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRefreshAppReadFailureIsNotARefusal: when the tenant's OAuth app cannot be read
// (its sealed secret does not open: the keyring or database failed), the refresh fails
// without marking the connection needs_reconnect, and nothing reaches the provider; a
// replaced app (another client ID) is a refusal that needs a reconnect.
func TestRefreshAppReadFailureIsNotARefusal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		breakApp   func(t *testing.T, db *gorm.DB)
		wantStatus Status
		wantCode   switchboard.Code
	}{
		{name: "app secret does not open", wantStatus: StatusActive, wantCode: switchboard.CodeInternal, breakApp: func(t *testing.T, db *gorm.DB) {
			if err := db.Exec(`UPDATE oauth_apps SET sealed = ? WHERE tenant_id = 'ten_a'`, []byte("not a sealed secret")).Error; err != nil {
				t.Fatal(err)
			}
		}},
		{name: "app replaced", wantStatus: StatusNeedsReconnect, wantCode: switchboard.CodeReconnect, breakApp: func(t *testing.T, db *gorm.DB) {
			if err := db.Exec(`UPDATE oauth_apps SET client_id = 'another-app' WHERE tenant_id = 'ten_a'`).Error; err != nil {
				t.Fatal(err)
			}
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
				var tokenCalls atomic.Int32
				up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					tokenCalls.Add(1)
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write([]byte(`{"access_token":"a2","token_type":"bearer","refresh_token":"r2","expires_in":3600}`))
				}))
				t.Cleanup(up.Close)
				spec := notesfake.Spec(up.URL)
				spec.OAuth = &providers.OAuth2{AuthURL: up.URL + "/authorize", TokenURL: up.URL + "/token"}
				reg := providers.NewRegistry()
				if err := reg.Register(spec); err != nil {
					t.Fatal(err)
				}
				kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "k", "master.key"))
				if err != nil {
					t.Fatal(err)
				}
				store := NewStore(db, kr)
				rec := &auditLog{}
				svc := NewService(store, reg, &providers.Transports{}, rec)
				svc.ConfigureOAuth(OAuthConfig{RedirectURL: "https://hub.test/oauth/callback", Logger: slog.New(slog.DiscardHandler)})
				if _, err := store.PutOAuthApp(ctx, "ten_a", spec.Name, "tenant-app", "tenant-secret"); err != nil {
					t.Fatal(err)
				}
				c := Connection{OwnerUserID: "usr_a", Provider: spec.Name, AuthKind: providers.AuthOAuth2, AccountID: "1", AccountLabel: "notes"}
				if err := store.Create(ctx, "ten_a", &c, Credentials{AccessToken: "a1", RefreshToken: "r1", Expiry: time.Now().Add(time.Minute), ClientID: "tenant-app"}); err != nil {
					t.Fatal(err)
				}
				tt.breakApp(t, db)
				_, err = svc.fresh(ctx, "ten_a", c.ID, refreshKind{window: OnDemandWindow})
				if got := switchboard.CodeOf(err); got != tt.wantCode {
					t.Fatalf("refresh: %v, want code %s", err, tt.wantCode)
				}
				got, err := store.Get(ctx, "ten_a", c.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != tt.wantStatus || got.RefreshClaim != "" {
					t.Errorf("status %s, claim %q; want %s and the lease released", got.Status, got.RefreshClaim, tt.wantStatus)
				}
				if n := tokenCalls.Load(); n != 0 {
					t.Errorf("%d requests reached the token endpoint, want none", n)
				}
			})
		})
	}
}
