package openapis

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
)

// oauthDescribed is a description whose scheme is OAuth 2.0's client credentials flow.
const oauthDescribed = `{"openapi":"3.0.3","info":{"title":"Billing","version":"1"},"security":[{"oauth":[]}],
"components":{"securitySchemes":{"oauth":{"type":"oauth2","flows":{"clientCredentials":{"tokenUrl":"https://192.0.3.10/token","scopes":{}}}}}},
"paths":{"/records":{"get":{"operationId":"listRecords","responses":{"200":{"description":"ok"}}}}}}`

// TestOAuthSecretSealed: an API's OAuth client secret is stored sealed (not in the
// clear), opens with its API and tenant, and key rotation re-seals it under the new key.
func TestOAuthSecretSealed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.SQLite(t)
	r := newRig(t, db, nil)
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	guard, err := egress.NewGuard(false, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := providers.NewRegistry()
	tr := &providers.Transports{}
	svc, err := New(Options{Store: NewStore(db), Connections: connections.NewService(connections.NewStore(db, kr), reg, tr, nil), Registry: reg,
		Transports: tr, Guard: guard, Keyring: kr, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Add(ctx, r.admin, AddInput{Name: "billing", Description: []byte(oauthDescribed), BaseURL: "https://192.0.3.10", ClientID: "cc-client", ClientSecret: "cc-secret-0123"}); err != nil {
		t.Fatal(err)
	}
	a, err := svc.store.get(ctx, r.admin.TenantID, "billing")
	if err != nil {
		t.Fatal(err)
	}
	before := a.OAuthSecretKeyID
	if len(a.OAuthSecretSealed) == 0 || string(a.OAuthSecretSealed) == "cc-secret-0123" || before == "" {
		t.Fatalf("stored secret %q under key %q, want it sealed", a.OAuthSecretSealed, before)
	}
	if _, err := keyring.Rotate(ctx, db, kr, []keyring.SealedRecords{svc.store.SealedRecords(kr)}, keyring.RotateOptions{}); err != nil {
		t.Fatal(err)
	}
	a, err = svc.store.get(ctx, r.admin.TenantID, "billing")
	if err != nil {
		t.Fatal(err)
	}
	id, secret, err := svc.app(ctx, a)
	if err != nil || id != "cc-client" || secret != "cc-secret-0123" || a.OAuthSecretKeyID == before {
		t.Errorf("after rotation: %q %q %v under key %q (was %q), want the secret re-sealed under the new key", id, secret, err, a.OAuthSecretKeyID, before)
	}
	moved := a
	moved.TenantID = "ten_other"
	if _, _, err := svc.app(ctx, moved); err == nil {
		t.Error("the secret opens for another tenant")
	}
}
