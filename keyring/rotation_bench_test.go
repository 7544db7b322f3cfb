package keyring_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/vaulttest"
	"github.com/switchboard-hub/switchboard/keyring"
)

// BenchmarkRotate measures `keys rotate` over 500 records on SQLite, each holding a
// sealed OAuth token pair as a connection does, in batches of 100: one op is a whole
// rotation (a new key, every record opened and sealed again).
func BenchmarkRotate(b *testing.B) {
	const records = 500
	ctx := context.Background()
	srv := vaulttest.Start(b)
	keyrings := []struct {
		name string
		kr   func(b *testing.B) keyring.Rotator
	}{
		{name: "file", kr: func(b *testing.B) keyring.Rotator {
			kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(b.TempDir(), "master.key"))
			if err != nil {
				b.Fatal(err)
			}
			return kr
		}},
		{name: "vault", kr: func(b *testing.B) keyring.Rotator {
			kr, err := keyring.NewVaultKeyring(ctx, keyring.VaultOptions{Address: srv.Addr, Token: srv.Token, Key: srv.NewKey(b)})
			if err != nil {
				b.Fatal(err)
			}
			return kr
		}},
	}
	for _, k := range keyrings {
		b.Run(fmt.Sprintf("%s/%d", k.name, records), func(b *testing.B) {
			db := notesDB(b, testdb.SQLite(b))
			kr := k.kr(b)
			for range records {
				addNote(b, db, kr, "ten_bench", string(benchCredentials))
			}
			recs := []keyring.SealedRecords{notes(db, kr)}
			for b.Loop() {
				res, err := keyring.Rotate(ctx, db, kr, recs, keyring.RotateOptions{BatchSize: 100})
				if err != nil || res.Resealed != records {
					b.Fatalf("rotate: %+v, %v", res, err)
				}
			}
		})
	}
}
