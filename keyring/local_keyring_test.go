package keyring_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/keyring"
)

func TestLoadOrCreateKeyFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "keys.json")
	kr, err := keyring.LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want os.FileMode
	}{{path, 0o600}, {dir, 0o700}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != c.want {
			t.Errorf("%s: mode %04o, want %04o", c.path, got, c.want)
		}
	}
	sealed, keyID, err := kr.Seal(ctx, []byte("xoxb-secret"), []byte("aad"))
	if err != nil {
		t.Fatal(err)
	}
	if keyID != kr.CurrentKeyID() || !strings.HasPrefix(keyID, "k") {
		t.Errorf("key id %q, want the current key %q", keyID, kr.CurrentKeyID())
	}
	again, err := keyring.LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := again.Open(ctx, keyID, sealed, []byte("aad"))
	if err != nil || string(got) != "xoxb-secret" {
		t.Fatalf("reloaded keyring opened %q, %v; want the plaintext", got, err)
	}
	sealed2, _, err := kr.Seal(ctx, []byte("xoxb-secret"), []byte("aad"))
	if err != nil {
		t.Fatal(err)
	}
	if string(sealed2[:12]) == string(sealed[:12]) {
		t.Error("two seals share a nonce")
	}
}

func TestKeyFileRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		want    string
	}{
		{name: "world-readable", content: validKeyFile, mode: 0o644, want: "chmod 600"},
		{name: "group-readable", content: validKeyFile, mode: 0o640, want: "chmod 600"},
		{name: "group-writable", content: validKeyFile, mode: 0o620, want: "chmod 600"},
		{name: "not JSON", content: "nope", mode: 0o600, want: "not valid JSON"},
		{name: "short key", content: `{"current":"k1","keys":{"k1":"AAAA"}}`, mode: 0o600, want: "32 bytes"},
		{name: "current missing", content: `{"current":"k2","keys":{"k1":"` + key32 + `"}}`, mode: 0o600, want: "not among the keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "keys.json")
			if err := os.WriteFile(path, []byte(tt.content), tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.mode); err != nil { // WriteFile's mode is filtered by umask
				t.Fatal(err)
			}
			_, err := keyring.LoadOrCreateKeyFile(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one saying %q", err, tt.want)
			}
		})
	}
}

const (
	key32        = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=" // bytes 0..31
	validKeyFile = `{"current":"k1","keys":{"k1":"` + key32 + `"}}`
)

func TestSealedCiphertextsFailToOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "a", "keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "b", "keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	aad := []byte("switchboard/connection/v1\x00ten_a\x00con_1")
	sealed, keyID, err := kr.Seal(ctx, []byte(`{"access_token":"ghp_x"}`), aad)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) []byte {
		b := append([]byte(nil), sealed...)
		b[i] ^= 1
		return b
	}
	tests := []struct {
		name       string
		kr         keyring.Keyring
		keyID      string
		ciphertext []byte
		aad        []byte
	}{
		{name: "another keyring's key under the same id", kr: mustKeyring(t, keyID), keyID: keyID, ciphertext: sealed, aad: aad},
		{name: "a keyring without the key", kr: other, keyID: keyID, ciphertext: sealed, aad: aad},
		{name: "nonce tampered", kr: kr, keyID: keyID, ciphertext: flip(0), aad: aad},
		{name: "body tampered", kr: kr, keyID: keyID, ciphertext: flip(13), aad: aad},
		{name: "tag tampered", kr: kr, keyID: keyID, ciphertext: flip(len(sealed) - 1), aad: aad},
		{name: "truncated", kr: kr, keyID: keyID, ciphertext: sealed[:10], aad: aad},
		{name: "other row's aad", kr: kr, keyID: keyID, ciphertext: sealed, aad: []byte("switchboard/connection/v1\x00ten_a\x00con_2")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got, err := tt.kr.Open(ctx, tt.keyID, tt.ciphertext, tt.aad); err == nil {
				t.Fatalf("opened to %q, want a failure", got)
			}
		})
	}
	if got, err := kr.Open(ctx, keyID, sealed, aad); err != nil || string(got) != `{"access_token":"ghp_x"}` {
		t.Fatalf("the untouched ciphertext opened to %q, %v", got, err)
	}
}

// mustKeyring returns a keyring with a fixed key under id, which is not the key that
// LoadOrCreateKeyFile drew at random.
func mustKeyring(t *testing.T, id string) keyring.Keyring {
	t.Helper()
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	kr, err := keyring.NewLocalKeyring(id, map[string][]byte{id: key})
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func TestDerive(t *testing.T) {
	t.Parallel()
	key := make([]byte, 32)
	a, err := keyring.NewLocalKeyring("k1", map[string][]byte{"k1": key})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := keyring.NewLocalKeyring("k1", map[string][]byte{"k1": key})
	other := make([]byte, 32)
	other[0] = 1
	c, _ := keyring.NewLocalKeyring("k2", map[string][]byte{"k1": key, "k2": other})
	if !bytes.Equal(a.Derive("audit-args"), b.Derive("audit-args")) {
		t.Error("the same key and purpose derived different secrets")
	}
	if bytes.Equal(a.Derive("audit-args"), a.Derive("other")) {
		t.Error("two purposes derived the same secret")
	}
	if bytes.Equal(a.Derive("audit-args"), c.Derive("audit-args")) {
		t.Error("another current key derived the same secret")
	}
	if len(a.Derive("x")) != 32 || bytes.Equal(a.Derive("x"), key) {
		t.Error("derived secret must be 32 bytes and not the key itself")
	}
}
