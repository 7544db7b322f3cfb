package connections

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/notesfake"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/telemetry"
	"github.com/switchboard-hub/switchboard/telemetry/telemetrytest"
)

// TestRefreshMetrics counts each refresh by its outcome: ok, a refusal that needs a
// reconnect (the app that issued the token was replaced), and a failure (the app's
// secret does not open).
func TestRefreshMetrics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		breakApp string // SQL run before the refresh
		want     string
	}{
		{name: "refreshed", want: `switchboard_token_refreshes_total{outcome="ok",provider="notes"}`},
		{name: "app replaced", breakApp: `UPDATE oauth_apps SET client_id = 'another-app'`, want: `switchboard_token_refreshes_total{outcome="reconnect",provider="notes"}`},
		{name: "app secret does not open", breakApp: `UPDATE oauth_apps SET sealed = x'00'`, want: `switchboard_token_refreshes_total{outcome="internal",provider="notes"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := testdb.SQLite(t)
			reg := prometheus.NewRegistry()
			svc, id := refreshRig(t, db, reg)
			if tt.breakApp != "" {
				if err := db.Exec(tt.breakApp).Error; err != nil {
					t.Fatal(err)
				}
			}
			_, _ = svc.fresh(context.Background(), "ten_a", id, refreshKind{window: OnDemandWindow})
			got := telemetrytest.Samples(t, reg, "switchboard_token_refreshes_total")
			if diff := cmp.Diff(map[string]float64{tt.want: 1}, got); diff != "" {
				t.Errorf("refresh metrics (-want +got):\n%s", diff)
			}
		})
	}
}

// refreshRig is a service with metrics on reg, and a connection whose token expires
// within the on-demand window, issued by the tenant's OAuth app at a fake provider.
func refreshRig(t *testing.T, db *gorm.DB, reg *prometheus.Registry) (*Service, string) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO tenants (id, slug, name, created_at) VALUES ('ten_a', 'acme', 'Acme', CURRENT_TIMESTAMP)`,
		`INSERT INTO users (id, tenant_id, email, role, created_at) VALUES ('usr_a', 'ten_a', 'a@acme.test', 'owner', CURRENT_TIMESTAMP)`,
	} {
		if err := db.Exec(q).Error; err != nil {
			t.Fatal(err)
		}
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/token" || r.FormValue("grant_type") != "refresh_token" || r.FormValue("refresh_token") != "r1" {
			http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"a2","token_type":"bearer","refresh_token":"r2","expires_in":3600}`))
	}))
	t.Cleanup(up.Close)
	spec := notesfake.Spec(up.URL)
	spec.OAuth = &providers.OAuth2{AuthURL: up.URL + "/authorize", TokenURL: up.URL + "/token"}
	pr := providers.NewRegistry()
	if err := pr.Register(spec); err != nil {
		t.Fatal(err)
	}
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "k", "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	store := NewStore(db, kr)
	svc := NewService(store, pr, &providers.Transports{}, &auditLog{})
	svc.ConfigureOAuth(OAuthConfig{RedirectURL: "https://hub.test/oauth/callback", Logger: slog.New(slog.DiscardHandler), Metrics: m})
	if _, err := store.PutOAuthApp(ctx, "ten_a", spec.Name, "tenant-app", "tenant-secret"); err != nil {
		t.Fatal(err)
	}
	c := Connection{OwnerUserID: "usr_a", Provider: spec.Name, AuthKind: providers.AuthOAuth2, AccountID: "1", AccountLabel: "notes"}
	if err := store.Create(ctx, "ten_a", &c, Credentials{AccessToken: "a1", RefreshToken: "r1", Expiry: time.Now().Add(time.Minute), ClientID: "tenant-app"}); err != nil {
		t.Fatal(err)
	}
	return svc, c.ID
}
