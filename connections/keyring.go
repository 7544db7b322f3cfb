package connections

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/switchboard-hub/switchboard"
)

// Keyring seals and opens credentials. Each ciphertext is opened with the key that
// sealed it, named by keyID, so keys can rotate while old records stay readable.
type Keyring interface {
	Seal(ctx context.Context, plaintext, aad []byte) (ciphertext []byte, keyID string, err error)
	Open(ctx context.Context, keyID string, ciphertext, aad []byte) ([]byte, error)
}

// LocalKeyring is a Keyring of AES-256-GCM keys held in a local key file.
type LocalKeyring struct {
	current string
	aeads   map[string]cipher.AEAD
	derived []byte // HMAC-SHA-256 of the current key, the root of Derive
}

var _ Keyring = (*LocalKeyring)(nil)

// keyFile is the key file's JSON: the key that seals, and every key that may open.
type keyFile struct {
	Current string            `json:"current"`
	Keys    map[string]string `json:"keys"` // key ID → base64 of 32 bytes
}

// LoadOrCreateKeyFile loads the key file at path, creating it (mode 0600, in a
// directory of mode 0700) with one random key if it does not exist. It refuses a file
// that others may read or write.
func LoadOrCreateKeyFile(path string) (*LocalKeyring, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if err := createKeyFile(path); err != nil {
			return nil, err
		}
	}
	return loadKeyFile(path)
}

// createKeyFile writes a new key file atomically: to a temporary file first, then
// linked into place, so a concurrent start never reads half a file and never
// overwrites another process's key.
func createKeyFile(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create key file directory %s: %w", dir, err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("create key: %w", err)
	}
	id := "k" + switchboard.RandomToken(5)
	data, err := json.MarshalIndent(keyFile{Current: id, Keys: map[string]string{id: base64.StdEncoding.EncodeToString(key)}}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode key file: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".keys-*")
	if err != nil {
		return fmt.Errorf("create key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("create key file: %w", err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write key file: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create key file %s: %w", path, err)
	}
	return nil
}

func loadKeyFile(path string) (*LocalKeyring, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read key file: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("key file %s has mode %04o, which lets others read it; run chmod 600 %s", path, perm, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read key file: %w", err)
	}
	var kf keyFile
	if err := json.Unmarshal(data, &kf); err != nil {
		return nil, fmt.Errorf("key file %s is not valid JSON: %w", path, err)
	}
	keys := make(map[string][]byte, len(kf.Keys))
	for id, b64 := range kf.Keys {
		key, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(key) != 32 {
			return nil, fmt.Errorf("key file %s: key %q must be 32 bytes in base64", path, id)
		}
		keys[id] = key
	}
	kr, err := NewLocalKeyring(kf.Current, keys)
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return kr, nil
}

// NewLocalKeyring returns a keyring of 32-byte keys by ID; current is the one that seals.
func NewLocalKeyring(current string, keys map[string][]byte) (*LocalKeyring, error) {
	if _, ok := keys[current]; !ok {
		return nil, fmt.Errorf("current key %q is not among the keys", current)
	}
	root := hmac.New(sha256.New, keys[current])
	root.Write([]byte("switchboard/derive/v1"))
	kr := &LocalKeyring{current: current, aeads: make(map[string]cipher.AEAD, len(keys)), derived: root.Sum(nil)}
	for id, key := range keys {
		if len(key) != 32 {
			return nil, fmt.Errorf("key %q must be 32 bytes", id)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", id, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", id, err)
		}
		kr.aeads[id] = aead
	}
	return kr, nil
}

// Derive returns a 32-byte secret for one purpose (for example the key of the audit
// log's argument hashes), derived from the current key: stable across restarts, and
// different for every purpose. It changes when the current key rotates.
func (k *LocalKeyring) Derive(purpose string) []byte {
	mac := hmac.New(sha256.New, k.derived)
	mac.Write([]byte(purpose))
	return mac.Sum(nil)
}

// CurrentKeyID is the ID of the key that seals.
func (k *LocalKeyring) CurrentKeyID() string { return k.current }

// Seal encrypts plaintext under the current key with a fresh random 12-byte nonce,
// which it puts in front of the ciphertext.
func (k *LocalKeyring) Seal(_ context.Context, plaintext, aad []byte) ([]byte, string, error) {
	aead := k.aeads[k.current]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, "", fmt.Errorf("seal: %w", err)
	}
	return aead.Seal(nonce, nonce, plaintext, aad), k.current, nil
}

// Open decrypts a ciphertext sealed under keyID with the same additional data.
func (k *LocalKeyring) Open(_ context.Context, keyID string, ciphertext, aad []byte) ([]byte, error) {
	aead, ok := k.aeads[keyID]
	if !ok {
		return nil, fmt.Errorf("open: unknown key %q", keyID)
	}
	if len(ciphertext) < aead.NonceSize()+aead.Overhead() {
		return nil, errors.New("open: ciphertext too short")
	}
	n := aead.NonceSize()
	plaintext, err := aead.Open(nil, ciphertext[:n], ciphertext[n:], aad)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	return plaintext, nil
}
