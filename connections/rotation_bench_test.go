package connections_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/vaulttest"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/tenants"
)

// BenchmarkRotate measures `keys rotate` over 500 connections on SQLite, in batches of
// 100: one op is a whole rotation (a new key, every record opened and sealed again).
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
			db := testdb.SQLite(b)
			kr := k.kr(b)
			ts := tenants.NewStore(db)
			b.Cleanup(ts.Close)
			ten, err := ts.CreateTenant(ctx, "bench-"+switchboard.RandomToken(4), "Bench")
			if err != nil {
				b.Fatal(err)
			}
			store := connections.NewStore(db, kr)
			for i := range records {
				c := connections.Connection{OwnerUserID: "usr_bench", Provider: "github", AuthKind: providers.AuthAPIKey, AccountID: fmt.Sprint(i), AccountLabel: fmt.Sprint(i)}
				if err := store.Create(ctx, ten.ID, &c, connections.Credentials{AccessToken: "ghp_" + switchboard.RandomToken(20)}); err != nil {
					b.Fatal(err)
				}
			}
			recs := store.SealedRecordsAll()
			for b.Loop() {
				res, err := connections.Rotate(ctx, db, kr, recs, connections.RotateOptions{BatchSize: 100})
				if err != nil || res.Resealed != records {
					b.Fatalf("rotate: %+v, %v", res, err)
				}
			}
		})
	}
}
