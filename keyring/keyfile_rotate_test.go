package keyring_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/keyring"
)

func TestRotateKeyFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "data", "master.key")
	kr, err := keyring.LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	oldID := kr.CurrentKeyID()
	sealed, _, err := kr.Seal(ctx, []byte("ghp_old"), []byte("aad"))
	if err != nil {
		t.Fatal(err)
	}
	newID, err := keyring.RotateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	kf := readKeyFile(t, path)
	if kf.Current != newID || newID == oldID || len(kf.Keys) != 2 || kf.Keys[oldID] == "" {
		t.Fatalf("key file after rotation: current %q of %d keys; want %q current and %q kept", kf.Current, len(kf.Keys), newID, oldID)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode after rotation: %v, %v; want 0600", fi.Mode().Perm(), err)
	}

	// The keyring loaded before sees the new key when it meets it, and seals under it
	// once it looked.
	reloaded, err := keyring.LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fresh, keyID, err := reloaded.Seal(ctx, []byte("ghp_new"), []byte("aad"))
	if err != nil || keyID != newID {
		t.Fatalf("a keyring loaded after the rotation sealed under %q, %v; want %q", keyID, err, newID)
	}
	if got, err := kr.Open(ctx, newID, fresh, []byte("aad")); err != nil || string(got) != "ghp_new" {
		t.Fatalf("the keyring loaded before opened a new-key record to %q, %v", got, err)
	}
	if _, keyID, err := kr.Seal(ctx, []byte("x"), []byte("aad")); err != nil || keyID != newID {
		t.Errorf("the keyring loaded before seals under %q, %v after it saw the new key; want %q", keyID, err, newID)
	}
	if active, err := kr.ActiveKeyID(ctx); err != nil || active != newID {
		t.Errorf("active key %q, %v; want %q", active, err, newID)
	}
	if got, err := reloaded.Open(ctx, oldID, sealed, []byte("aad")); err != nil || string(got) != "ghp_old" {
		t.Fatalf("the old record after rotation opened to %q, %v", got, err)
	}
	if _, err := kr.Open(ctx, "k_missing", fresh, []byte("aad")); err == nil || !strings.Contains(err.Error(), `unknown key "k_missing"`) {
		t.Errorf("unknown key: %v", err)
	}
}

func TestRotateKeyFileConcurrently(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "master.key")
	if _, err := keyring.LoadOrCreateKeyFile(path); err != nil {
		t.Fatal(err)
	}
	const n = 8
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { ids[i], errs[i] = keyring.RotateKeyFile(path) })
	}
	testwait.Wait(t, "the concurrent calls to return", wg.Wait)
	kf := readKeyFile(t, path)
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("rotation %d: %v", i, errs[i])
		}
		if kf.Keys[ids[i]] == "" {
			t.Errorf("key %q of rotation %d was lost", ids[i], i)
		}
	}
	if len(kf.Keys) != n+1 {
		t.Errorf("%d keys, want %d", len(kf.Keys), n+1)
	}
}

func TestKeyFileRotationRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name    string
		rewrite func(t *testing.T, path string, kf keyFileJSON) string // returns the new file's content
		mode    os.FileMode
		want    string
	}{
		{
			name: "a key was removed",
			rewrite: func(t *testing.T, path string, kf keyFileJSON) string {
				return `{"current":"k2","keys":{"k2":"` + key32 + `"}}`
			},
			mode: 0o600,
			want: "no longer holds key",
		},
		{
			name: "the file became readable by others",
			rewrite: func(t *testing.T, path string, kf keyFileJSON) string {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			},
			mode: 0o644,
			want: "chmod 600",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "master.key")
			kr, err := keyring.LoadOrCreateKeyFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sealed, keyID, err := kr.Seal(ctx, []byte("ghp_x"), []byte("aad"))
			if err != nil {
				t.Fatal(err)
			}
			// Another process replaces the file, as a rotation does.
			tmp := path + ".new"
			if err := os.WriteFile(tmp, []byte(tt.rewrite(t, path, readKeyFile(t, path))), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(tmp, tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
			if _, err := kr.ActiveKeyID(ctx); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("reload: %v, want an error saying %q", err, tt.want)
			}
			if _, err := keyring.RotateKeyFile(path); tt.mode != 0o600 && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("rotate: %v, want an error saying %q", err, tt.want)
			}
			// The keyring keeps the keys it had.
			if got, err := kr.Open(ctx, keyID, sealed, []byte("aad")); err != nil || string(got) != "ghp_x" {
				t.Errorf("after the refused reload: %q, %v", got, err)
			}
		})
	}
}

func TestRotateInMemoryKeyring(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	kr, err := keyring.NewLocalKeyring("k1", map[string][]byte{"k1": make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	sealed, _, err := kr.Seal(ctx, []byte("ghp_x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	id, err := kr.Rotate(ctx)
	if err != nil || id == "k1" {
		t.Fatalf("rotate = %q, %v", id, err)
	}
	if _, keyID, _ := kr.Seal(ctx, []byte("y"), nil); keyID != id {
		t.Errorf("sealed under %q, want %q", keyID, id)
	}
	if got, err := kr.Open(ctx, "k1", sealed, nil); err != nil || string(got) != "ghp_x" {
		t.Errorf("old record: %q, %v", got, err)
	}
}

// keyFileJSON is the key file as a test reads it.
type keyFileJSON struct {
	Current string
	Keys    map[string]string
}

func readKeyFile(t *testing.T, path string) keyFileJSON {
	t.Helper()
	var kf keyFileJSON
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &kf); err != nil {
		t.Fatal(err)
	}
	return kf
}
