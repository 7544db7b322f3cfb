package connections

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/tenants"
)

// TestRotateOAuthSecrets: key rotation re-seals the tenants' and the deployment's OAuth
// app secrets and the pending OAuth flows' states along with the connections, and they
// still work after.
func TestRotateOAuthSecrets(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		path := filepath.Join(t.TempDir(), "master.key")
		kr, err := keyring.LoadOrCreateKeyFile(path)
		if err != nil {
			t.Fatal(err)
		}
		store := NewStore(db, kr)
		ts := tenants.NewStore(db)
		t.Cleanup(ts.Close)
		ten, err := ts.CreateTenant(ctx, "acme-"+switchboard.RandomToken(4), "Acme")
		if err != nil {
			t.Fatal(err)
		}
		user, err := ts.CreateUser(ctx, ten.ID, "ann@acme.test", switchboard.RoleMember)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"github", "slack"} {
			if _, err := store.PutOAuthApp(ctx, ten.ID, p, "client-"+p, "secret-"+p); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := store.putOperatorOAuthApp(ctx, "gmail", "client-gmail", "secret-gmail"); err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		state := "state-" + switchboard.RandomToken(16)
		row := &oauthStateRow{ID: secretHash(state), TenantID: ten.ID, UserID: user.ID, Provider: "github", ClientID: "client-github",
			BrowserHash: secretHash("cookie"), RedirectURI: "https://hub.example.com/oauth/callback", ExpiresAt: now.Add(stateTTL), CreatedAt: now}
		if err := store.createOAuthState(ctx, row, statePayload{Verifier: "pkce-verifier", Label: "mine", Extra: []byte("x")}); err != nil {
			t.Fatal(err)
		}

		var progress []keyring.RotateProgress
		res, err := keyring.Rotate(ctx, db, kr, store.SealedRecordsAll(), keyring.RotateOptions{BatchSize: 1, Progress: func(p keyring.RotateProgress) { progress = append(progress, p) }})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Done || res.Resealed != 4 {
			t.Fatalf("result %+v, want done with 4 re-sealed", res)
		}
		if diff := cmp.Diff([]keyring.RotateProgress{
			{Kind: "oauth_apps", KeyID: res.KeyID, Resealed: 1, Total: 2},
			{Kind: "oauth_apps", KeyID: res.KeyID, Resealed: 2, Total: 2},
			{Kind: "operator_oauth_apps", KeyID: res.KeyID, Resealed: 1, Total: 1},
			{Kind: "oauth_states", KeyID: res.KeyID, Resealed: 1, Total: 1},
		}, progress); diff != "" {
			t.Errorf("progress (-want +got):\n%s", diff)
		}
		for _, table := range []string{"oauth_apps", "operator_oauth_apps", "oauth_states"} {
			var keys []string
			if err := db.Table(table).Distinct("key_id").Pluck("key_id", &keys).Error; err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{res.KeyID}, keys); diff != "" {
				t.Errorf("key ids of %s (-want +got):\n%s", table, diff)
			}
		}

		restarted, err := keyring.LoadOrCreateKeyFile(path)
		if err != nil {
			t.Fatal(err)
		}
		after := NewStore(db, restarted)
		for _, p := range []string{"github", "slack"} {
			app, ok, err := after.OAuthApp(ctx, ten.ID, p)
			if err != nil || !ok || app.ClientSecret != "secret-"+p {
				t.Errorf("%s app after the rotation: %+v %v %v", p, app, ok, err)
			}
		}
		if app, ok, err := after.operatorOAuthApp(ctx, "gmail"); err != nil || !ok || app.ClientSecret != "secret-gmail" {
			t.Errorf("the deployment's gmail app after the rotation: %+v %v %v", app, ok, err)
		}
		_, payload, err := after.consumeOAuthState(ctx, state, now, func(oauthStateRow) error { return nil })
		if err != nil {
			t.Fatalf("state after the rotation: %v", err)
		}
		if diff := cmp.Diff(statePayload{Verifier: "pkce-verifier", Label: "mine", Extra: []byte("x")}, payload); diff != "" {
			t.Errorf("state after the rotation (-want +got):\n%s", diff)
		}

		// A secret replaced while the rotation runs is the one that stays.
		table := store.SealedRecordsAll()[1]
		if _, err := keyring.RotateKeyFile(path); err != nil {
			t.Fatal(err)
		}
		current, err := kr.ActiveKeyID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		refs, err := table.Stale(ctx, current, "", 10)
		if err != nil || len(refs) != 2 {
			t.Fatalf("stale oauth apps: %v, %v", refs, err)
		}
		if _, err := store.PutOAuthApp(ctx, ten.ID, "github", "client-github-2", "secret-github-2"); err != nil {
			t.Fatal(err)
		}
		for _, ref := range refs {
			if _, err := table.Reseal(ctx, ref); err != nil {
				t.Fatal(err)
			}
		}
		if app, _, err := after.OAuthApp(ctx, ten.ID, "github"); err != nil || app.ClientID != "client-github-2" || app.ClientSecret != "secret-github-2" {
			t.Errorf("the app replaced during the rotation: %+v, %v", app, err)
		}
	})
}
