package keyring_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

// newVaultKeyringToken returns a keyring on the server's key that uses token.
func newVaultKeyringToken(t testing.TB, srv *vaulttest.Server, key, token string) *keyring.VaultKeyring {
	t.Helper()
	kr, err := keyring.NewVaultKeyring(context.Background(), keyring.VaultOptions{Address: srv.Addr, Token: token, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// clock is a settable time for the data key cache's TTL.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestVaultKeyring runs the Vault keyring against a real dev-mode Vault; every subtest
// has a transit key of its own.
func TestVaultKeyring(t *testing.T) {
	t.Parallel()
	srv := vaulttest.Start(t)
	ctx := context.Background()
	aad := []byte("switchboard/connection/v1\x00ten_a\x00con_1")
	const secret = `{"access_token":"xoxb-vault-secret"}`

	t.Run("seal and open", func(t *testing.T) {
		t.Parallel()
		key := srv.NewKey(t)
		kr := newVaultKeyring(t, srv, key, keyring.VaultOptions{})
		sealed, keyID, err := kr.Seal(ctx, []byte(secret), aad)
		if err != nil {
			t.Fatal(err)
		}
		if want := "vault:transit/" + key + ":v1"; keyID != want {
			t.Errorf("key id %q, want %q", keyID, want)
		}
		if bytes.Contains(sealed, []byte("xoxb-vault-secret")) {
			t.Error("the ciphertext holds the plaintext")
		}
		if !bytes.Contains(sealed, []byte("vault:v1:")) {
			t.Error("the ciphertext does not carry its wrapped data key")
		}
		again, _, err := kr.Seal(ctx, []byte(secret), aad)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(again, sealed) {
			t.Error("two seals of one plaintext are equal")
		}
		for _, c := range [][]byte{sealed, again} {
			got, err := kr.Open(ctx, keyID, c, aad)
			if err != nil || string(got) != secret {
				t.Fatalf("open = %q, %v; want the plaintext", got, err)
			}
		}
		if diff := cmp.Diff(keyring.VaultStats{DataKeys: 2, Unwraps: 0, CachedKeys: 2}, kr.Stats()); diff != "" {
			t.Errorf("stats (-want +got):\n%s", diff)
		}
		active, err := kr.ActiveKeyID(ctx)
		if err != nil || active != keyID {
			t.Errorf("active key %q, %v; want %q", active, err, keyID)
		}
	})

	t.Run("a new keyring on the same Vault opens old records", func(t *testing.T) {
		t.Parallel()
		key := srv.NewKey(t)
		sealed, keyID, err := newVaultKeyring(t, srv, key, keyring.VaultOptions{}).Seal(ctx, []byte(secret), aad)
		if err != nil {
			t.Fatal(err)
		}
		restarted := newVaultKeyring(t, srv, key, keyring.VaultOptions{})
		for range 3 {
			got, err := restarted.Open(ctx, keyID, sealed, aad)
			if err != nil || string(got) != secret {
				t.Fatalf("open after restart = %q, %v", got, err)
			}
		}
		if diff := cmp.Diff(keyring.VaultStats{DataKeys: 0, Unwraps: 1, CachedKeys: 1}, restarted.Stats()); diff != "" {
			t.Errorf("stats (-want +got): one unwrap, then the cache:\n%s", diff)
		}
	})

	t.Run("what does not open", func(t *testing.T) {
		t.Parallel()
		key := srv.NewKey(t)
		kr := newVaultKeyring(t, srv, key, keyring.VaultOptions{})
		sealed, keyID, err := kr.Seal(ctx, []byte(secret), aad)
		if err != nil {
			t.Fatal(err)
		}
		otherKey := srv.NewKey(t)
		other := newVaultKeyring(t, srv, otherKey, keyring.VaultOptions{})
		otherSealed, otherKeyID, err := other.Seal(ctx, []byte(secret), aad)
		if err != nil {
			t.Fatal(err)
		}
		flip := func(i int) []byte {
			b := bytes.Clone(sealed)
			b[i] ^= 1
			return b
		}
		wrappedAt := bytes.Index(sealed, []byte("vault:v1:"))
		fresh := newVaultKeyring(t, srv, key, keyring.VaultOptions{}) // nothing cached
		tests := []struct {
			name       string
			kr         keyring.Keyring
			keyID      string
			ciphertext []byte
			aad        []byte
			want       string
		}{
			{name: "another row's aad", kr: kr, keyID: keyID, ciphertext: sealed, aad: []byte("switchboard/connection/v1\x00ten_a\x00con_2"), want: "message authentication failed"},
			{name: "another tenant's aad", kr: kr, keyID: keyID, ciphertext: sealed, aad: []byte("switchboard/connection/v1\x00ten_b\x00con_1"), want: "message authentication failed"},
			{name: "body tampered", kr: kr, keyID: keyID, ciphertext: flip(len(sealed) - 20), aad: aad, want: "message authentication failed"},
			{name: "tag tampered", kr: kr, keyID: keyID, ciphertext: flip(len(sealed) - 1), aad: aad, want: "message authentication failed"},
			{name: "wrapped data key tampered", kr: fresh, keyID: keyID, ciphertext: flip(wrappedAt + 12), aad: aad, want: "unwrap the data key"},
			{name: "unknown format", kr: kr, keyID: keyID, ciphertext: flip(0), aad: aad, want: "known format"},
			{name: "truncated", kr: kr, keyID: keyID, ciphertext: sealed[:wrappedAt+20], aad: aad, want: "too short"},
			{name: "key id of another version", kr: kr, keyID: strings.TrimSuffix(keyID, "1") + "2", ciphertext: sealed, aad: aad, want: "was not wrapped by"},
			{name: "key id of the local keyring", kr: kr, keyID: "k12345678", ciphertext: sealed, aad: aad, want: "is not of vault transit key"},
			{name: "another transit key's record", kr: kr, keyID: otherKeyID, ciphertext: otherSealed, aad: aad, want: "is not of vault transit key"},
			{name: "another transit key's record under this key's id", kr: fresh, keyID: keyID, ciphertext: otherSealed, aad: aad, want: "unwrap the data key"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := tt.kr.Open(ctx, tt.keyID, tt.ciphertext, tt.aad)
				if err == nil {
					t.Fatalf("opened to %q, want a failure", got)
				}
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %v, want one saying %q", err, tt.want)
				}
				if strings.Contains(err.Error(), srv.Token) || strings.Contains(err.Error(), "xoxb-vault-secret") {
					t.Errorf("the error leaks a secret: %v", err)
				}
			})
		}
	})

	t.Run("the data key cache is bounded in size and age", func(t *testing.T) {
		t.Parallel()
		key := srv.NewKey(t)
		sealer := newVaultKeyring(t, srv, key, keyring.VaultOptions{})
		var records [][]byte
		var keyID string
		for i := range 3 {
			s, id, err := sealer.Seal(ctx, fmt.Appendf(nil, "secret %d", i), aad)
			if err != nil {
				t.Fatal(err)
			}
			records, keyID = append(records, s), id
		}
		clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		kr := newVaultKeyring(t, srv, key, keyring.VaultOptions{CacheSize: 2, CacheTTL: time.Minute, Now: clk.Now})
		open := func(i int) {
			t.Helper()
			got, err := kr.Open(ctx, keyID, records[i], aad)
			if err != nil || string(got) != fmt.Sprintf("secret %d", i) {
				t.Fatalf("open %d = %q, %v", i, got, err)
			}
		}
		steps := []struct {
			name        string
			open        int
			advance     time.Duration
			wantUnwraps int64
			wantCached  int
		}{
			{name: "first open unwraps", open: 0, wantUnwraps: 1, wantCached: 1},
			{name: "second open of it is cached", open: 0, wantUnwraps: 1, wantCached: 1},
			{name: "another record", open: 1, wantUnwraps: 2, wantCached: 2},
			{name: "a third evicts the least recently used", open: 2, wantUnwraps: 3, wantCached: 2},
			{name: "the most recent is cached", open: 2, wantUnwraps: 3, wantCached: 2},
			{name: "the evicted one unwraps again", open: 0, wantUnwraps: 4, wantCached: 2},
			{name: "still fresh just before the TTL", open: 0, advance: 59 * time.Second, wantUnwraps: 4, wantCached: 2},
			// Record 0 expired and is unwrapped again; record 2, cached as long, expired
			// too and is dropped when 0 goes back in.
			{name: "expired at the TTL", open: 0, advance: time.Second, wantUnwraps: 5, wantCached: 1},
		}
		for _, s := range steps {
			clk.Add(s.advance)
			open(s.open)
			st := kr.Stats()
			if st.Unwraps != s.wantUnwraps || st.CachedKeys != s.wantCached {
				t.Errorf("%s: %d unwraps and %d cached, want %d and %d", s.name, st.Unwraps, st.CachedKeys, s.wantUnwraps, s.wantCached)
			}
		}
	})

	t.Run("rotate: new seals use the new version, old records still open", func(t *testing.T) {
		t.Parallel()
		key := srv.NewKey(t)
		kr := newVaultKeyring(t, srv, key, keyring.VaultOptions{})
		before := newVaultKeyring(t, srv, key, keyring.VaultOptions{}) // a server started before the rotation
		old, oldID, err := kr.Seal(ctx, []byte(secret), aad)
		if err != nil {
			t.Fatal(err)
		}
		argsBefore, err := kr.Derive(ctx, "audit-args")
		if err != nil {
			t.Fatal(err)
		}
		newID, err := kr.Rotate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := "vault:transit/" + key + ":v2"; newID != want {
			t.Fatalf("rotated to %q, want %q", newID, want)
		}
		if latest, _ := srv.KeyVersions(t, key); latest != 2 {
			t.Errorf("vault's latest version %d, want 2", latest)
		}
		for name, k := range map[string]*keyring.VaultKeyring{"the rotating keyring": kr, "a keyring made before": before} {
			_, id, err := k.Seal(ctx, []byte(secret), aad)
			if err != nil || id != newID {
				t.Errorf("%s sealed under %q, %v; want %q", name, id, err, newID)
			}
			if got, err := newVaultKeyring(t, srv, key, keyring.VaultOptions{}).Open(ctx, oldID, old, aad); err != nil || string(got) != secret {
				t.Errorf("the v1 record after rotation: %q, %v", got, err)
			}
		}
		argsAfter, err := kr.Derive(ctx, "audit-args")
		if err != nil {
			t.Fatal(err)
		}
		other, err := kr.Derive(ctx, "other")
		if err != nil {
			t.Fatal(err)
		}
		again, err := newVaultKeyring(t, srv, key, keyring.VaultOptions{}).Derive(ctx, "audit-args")
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case len(argsAfter) != 32:
			t.Errorf("derived %d bytes, want 32", len(argsAfter))
		case !bytes.Equal(argsAfter, again):
			t.Error("two keyrings derived different secrets for one purpose")
		case bytes.Equal(argsAfter, other):
			t.Error("two purposes derived the same secret")
		case bytes.Equal(argsAfter, argsBefore):
			t.Error("the derived secret did not change with the key")
		}
	})

	t.Run("configuration Vault refuses", func(t *testing.T) {
		t.Parallel()
		key := srv.NewKey(t)
		tests := []struct {
			name string
			opts keyring.VaultOptions
			want string
		}{
			{name: "missing key", opts: keyring.VaultOptions{Address: srv.Addr, Token: srv.Token, Key: "no-such-key"}, want: "does not exist; create it with `vault write -f transit/keys/no-such-key`"},
			{name: "wrong token", opts: keyring.VaultOptions{Address: srv.Addr, Token: "hvs.not-a-token-" + srv.Token[5:], Key: key}, want: "may not read transit/keys/" + key},
			{name: "wrong mount", opts: keyring.VaultOptions{Address: srv.Addr, Token: srv.Token, Key: key, Mount: "nothing-here"}, want: "nothing-here/keys/" + key},
			{name: "no address", opts: keyring.VaultOptions{Token: srv.Token, Key: key}, want: "address is required"},
			{name: "no token", opts: keyring.VaultOptions{Address: srv.Addr, Key: key}, want: "token is required"},
			{name: "no key", opts: keyring.VaultOptions{Address: srv.Addr, Token: srv.Token}, want: "key name is required"},
			{name: "key name with a colon", opts: keyring.VaultOptions{Address: srv.Addr, Token: srv.Token, Key: "a:b"}, want: "cannot carry"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := keyring.NewVaultKeyring(ctx, tt.opts)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want one saying %q", err, tt.want)
				}
				if strings.Contains(err.Error(), srv.Token) {
					t.Errorf("the error shows the token: %v", err)
				}
			})
		}
	})

	t.Run("a token without the permissions", func(t *testing.T) {
		t.Parallel()
		key := srv.NewKey(t)
		sealed, keyID, err := newVaultKeyring(t, srv, key, keyring.VaultOptions{}).Seal(ctx, []byte(secret), aad)
		if err != nil {
			t.Fatal(err)
		}
		// The token may read the key, so the keyring starts, but not draw or unwrap data keys.
		token := srv.NewToken(t, `path "transit/keys/`+key+`" { capabilities = ["read"] }`)
		limited := newVaultKeyringToken(t, srv, key, token)
		tests := []struct {
			name string
			do   func() error
		}{
			{name: "seal", do: func() error { _, _, err := limited.Seal(ctx, []byte(secret), aad); return err }},
			{name: "open", do: func() error { _, err := limited.Open(ctx, keyID, sealed, aad); return err }},
			{name: "rotate", do: func() error { _, err := limited.Rotate(ctx); return err }},
			{name: "derive", do: func() error { _, err := limited.Derive(ctx, "audit-args"); return err }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := tt.do()
				if err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "permission denied") {
					t.Fatalf("err = %v, want Vault's 403 permission denied", err)
				}
				if strings.Contains(err.Error(), token) || strings.Contains(err.Error(), "xoxb-vault-secret") {
					t.Errorf("the error leaks a secret: %v", err)
				}
			})
		}
		if latest, _ := srv.KeyVersions(t, key); latest != 1 {
			t.Errorf("the refused rotation left version %d, want 1", latest)
		}
	})
}
