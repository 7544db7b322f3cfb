package connections_test

import (
	"context"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/vaulttest"
	"github.com/switchboard-hub/switchboard/keyring"
)

// newVaultKeyring returns a keyring on the server's key.
func newVaultKeyring(t testing.TB, srv *vaulttest.Server, key string, opts keyring.VaultOptions) *keyring.VaultKeyring {
	t.Helper()
	opts.Address, opts.Token, opts.Key = srv.Addr, srv.Token, key
	kr, err := keyring.NewVaultKeyring(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// TestStoreOnVaultKeyring: connections stored through a Vault keyring name its key,
// their ciphertexts stay bound to their tenant and row, and a restarted server opens
// them.
func TestStoreOnVaultKeyring(t *testing.T) {
	t.Parallel()
	srv := vaulttest.Start(t)
	ctx := context.Background()
	key := srv.NewKey(t)
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		kr := newVaultKeyring(t, srv, key, keyring.VaultOptions{})
		w := newWorldWith(t, db, kr)
		if !strings.HasPrefix(w.a.share.KeyID, "vault:transit/"+key+":v") {
			t.Errorf("a stored connection's key id %q names no vault key", w.a.share.KeyID)
		}
		src := w.a.annPrivate
		if err := db.Exec("UPDATE connections SET sealed = ?, key_id = ? WHERE id = ?", src.Sealed, src.KeyID, w.b.share.ID).Error; err != nil {
			t.Fatal(err)
		}
		if _, creds, err := w.store.Open(ctx, w.b.id, w.b.share.ID); switchboard.CodeOf(err) != switchboard.CodeInternal {
			t.Fatalf("a ciphertext moved to another tenant's row opened: %q, %v", creds.AccessToken, err)
		}
		restarted := connections.NewStore(db, newVaultKeyring(t, srv, key, keyring.VaultOptions{}))
		if _, creds, err := restarted.Open(ctx, w.a.id, src.ID); err != nil || creds.AccessToken != "ghp_private_"+string(w.a.id) {
			t.Fatalf("the source row after a restart: %q, %v", creds.AccessToken, err)
		}
	})
}
