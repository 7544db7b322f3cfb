package keyring_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/vaulttest"
	"github.com/switchboard-hub/switchboard/keyring"
)

// benchCredentials is the size of a typical sealed record: an OAuth access and refresh
// token with their type and expiry.
var benchCredentials = []byte(`{"access_token":"xoxe.xoxp-1-Mi0yLTEyMzQ1Njc4OTAxMi0xMjM0NTY3ODkwMTIzLTEyMzQ1Njc4OTAxMjM0LTAxMjM0NTY3ODlhYmNkZWY","token_type":"Bearer","refresh_token":"xoxe-1-My0xLTEyMzQ1Njc4OTAxMi0xMjM0NTY3ODkwMTIzLTAxMjM0NTY3ODlhYmNkZWY","expiry":"2026-11-22T18:00:00Z"}`)

var benchAAD = []byte("switchboard/connection/v1\x00ten_0123456789abcdefghjkmnpqrs\x00con_0123456789abcdefghjkmnpqrs")

// benchSealOpen measures Seal, and Open of one record, with kr.
func benchSealOpen(b *testing.B, kr keyring.Keyring) {
	ctx := context.Background()
	sealed, keyID, err := kr.Seal(ctx, benchCredentials, benchAAD)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("seal", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := kr.Seal(ctx, benchCredentials, benchAAD); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			if _, err := kr.Open(ctx, keyID, sealed, benchAAD); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLocalKeyring measures sealing and opening a record with the key file keyring.
func BenchmarkLocalKeyring(b *testing.B) {
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(b.TempDir(), "master.key"))
	if err != nil {
		b.Fatal(err)
	}
	benchSealOpen(b, kr)
}

// BenchmarkVaultKeyring measures the Vault keyring against a dev-mode Vault on
// loopback: a Seal draws a data key from Transit (one round trip); an Open of a record
// seen before is served by the data key cache; a cold Open asks Transit to unwrap.
func BenchmarkVaultKeyring(b *testing.B) {
	ctx := context.Background()
	srv := vaulttest.Start(b)
	key := srv.NewKey(b)
	kr, err := keyring.NewVaultKeyring(ctx, keyring.VaultOptions{Address: srv.Addr, Token: srv.Token, Key: key})
	if err != nil {
		b.Fatal(err)
	}
	benchSealOpen(b, kr)
	b.Run("open-cold", func(b *testing.B) {
		// A cache of one entry and two records opened in turn: every Open unwraps.
		cold, err := keyring.NewVaultKeyring(ctx, keyring.VaultOptions{Address: srv.Addr, Token: srv.Token, Key: key, CacheSize: 1})
		if err != nil {
			b.Fatal(err)
		}
		var recs [2][]byte
		var keyID string
		for i := range recs {
			if recs[i], keyID, err = kr.Seal(ctx, benchCredentials, benchAAD); err != nil {
				b.Fatal(err)
			}
		}
		i := 0
		for b.Loop() {
			if _, err := cold.Open(ctx, keyID, recs[i%2], benchAAD); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
