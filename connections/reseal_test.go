package connections_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/keyring"
)

// loadKeyFile loads (or creates) the key file at path.
func loadKeyFile(t *testing.T, path string) *keyring.LocalKeyring {
	t.Helper()
	kr, err := keyring.LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// staleCopy returns a keyring of a copy of the key file at path as it is now: a server
// that will not see a rotation of path, and goes on sealing under its current key.
func staleCopy(t *testing.T, path string) keyring.Keyring {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "stale.key")
	if err := os.WriteFile(cp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return loadKeyFile(t, cp)
}

// tokens are the tokens of every connection of the world, by connection ID.
func (w *world) tokens() map[string]string {
	out := map[string]string{}
	for _, tu := range []tenantUsers{w.a, w.b} {
		out[tu.annPrivate.ID] = "ghp_private_" + string(tu.id)
		out[tu.share.ID] = "ghp_shared_" + string(tu.id)
	}
	return out
}

// keyIDs returns every connection's key ID, by connection ID.
func keyIDs(t *testing.T, db *gorm.DB) map[string]string {
	t.Helper()
	var rows []connections.Connection
	if err := db.Select("id", "key_id").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[r.ID] = r.KeyID
	}
	return out
}

// checkOpens opens every connection with kr and compares the tokens.
func checkOpens(t *testing.T, db *gorm.DB, kr keyring.Keyring, want map[string]string) {
	t.Helper()
	store := connections.NewStore(db, kr)
	var rows []connections.Connection
	if err := db.Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rows {
		_, creds, err := store.Open(context.Background(), r.TenantID, r.ID)
		if err != nil {
			t.Fatalf("open %s (key %s): %v", r.ID, r.KeyID, err)
		}
		got[r.ID] = creds.AccessToken
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tokens (-want +got):\n%s", diff)
	}
}

// refreshingRecords refreshes a connection's token, as a server would, just before the
// rotation re-seals it.
type refreshingRecords struct {
	keyring.SealedRecords
	server *connections.Store
	target string
	once   sync.Once
}

func (r *refreshingRecords) Reseal(ctx context.Context, ref keyring.SealedRef) (bool, error) {
	if ref.ID == r.target {
		var err error
		r.once.Do(func() {
			_, err = r.server.UpdateCredentials(ctx, ref.TenantID, ref.ID, ref.Version, connections.Credentials{AccessToken: "ghp_refreshed"}, connections.StatusActive)
		})
		if err != nil {
			return false, err
		}
	}
	return r.SealedRecords.Reseal(ctx, ref)
}

// TestRotateKeepsAConcurrentRefresh: a token refresh that lands between the listing
// and the re-seal wins, even when the refreshing server still seals under the old key
// (the next pass re-seals it); the refresh's own version check still holds after a
// re-seal.
func TestRotateKeepsAConcurrentRefresh(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		path := filepath.Join(t.TempDir(), "master.key")
		operator := loadKeyFile(t, path)
		w := newWorldWith(t, db, operator)
		server := connections.NewStore(db, staleCopy(t, path))
		recs := &refreshingRecords{SealedRecords: connections.NewStore(db, operator).SealedRecords(), server: server, target: w.a.share.ID}
		res, err := keyring.Rotate(ctx, db, operator, []keyring.SealedRecords{recs}, keyring.RotateOptions{BatchSize: 10})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Done || res.Resealed != 4 {
			t.Errorf("result %+v, want done with 4 re-sealed (the refreshed one in the second pass)", res)
		}
		want := w.tokens()
		want[w.a.share.ID] = "ghp_refreshed"
		checkOpens(t, db, loadKeyFile(t, path), want)
		for id, k := range keyIDs(t, db) {
			if k != res.KeyID {
				t.Errorf("connection %s is under %s, want %s", id, k, res.KeyID)
			}
		}

		// A re-seal keeps the version, so a refresh that read the row before it lands.
		c, err := server.Get(ctx, w.b.id, w.b.share.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := keyring.Rotate(ctx, db, operator, []keyring.SealedRecords{connections.NewStore(db, operator).SealedRecords()}, keyring.RotateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := server.UpdateCredentials(ctx, w.b.id, c.ID, c.Version, connections.Credentials{AccessToken: "ghp_after"}, connections.StatusActive); err != nil {
			t.Fatalf("a refresh of the version read before the re-seal: %v", err)
		}

		// A re-seal of a record that moved on changes nothing.
		stale := keyring.SealedRef{TenantID: w.b.id, ID: c.ID, KeyID: c.KeyID, Version: c.Version}
		ok, err := connections.NewStore(db, operator).SealedRecords().Reseal(ctx, stale)
		if err != nil || ok {
			t.Errorf("re-seal of an outdated ref = %v, %v; want false", ok, err)
		}
		if _, creds, err := server.Open(ctx, w.b.id, c.ID); err != nil || creds.AccessToken != "ghp_after" {
			t.Errorf("after the outdated re-seal: %q, %v", creds.AccessToken, err)
		}
	})
}
