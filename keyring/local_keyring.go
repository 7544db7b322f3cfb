package keyring

import (
	"bytes"
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
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// LocalKeyring is a Keyring of AES-256-GCM keys held in a local key file (or, built
// with NewLocalKeyring, in memory). A keyring loaded from a file notices when another
// process rotates the file: it reloads it when asked to open a key it does not know,
// and checks it every few seconds before sealing, so a running server seals under the
// newest key and opens records re-sealed under it without a restart.
type LocalKeyring struct {
	path string // the key file; empty for a keyring held in memory only

	mu        sync.Mutex // serializes reloads and rotations of this keyring
	keys      atomic.Pointer[localKeys]
	checkedAt atomic.Int64 // unix nanoseconds of the last look at the file
}

// localKeys is one immutable generation of a LocalKeyring's keys.
type localKeys struct {
	current string
	raw     map[string][]byte
	aeads   map[string]cipher.AEAD
	derived []byte      // HMAC-SHA-256 of the current key, the root of Derive
	file    os.FileInfo // the key file these keys were read from, if any
}

// keyFileCheckInterval is how often a file-backed keyring looks for a rotated key
// file before it seals.
const keyFileCheckInterval = 2 * time.Second

var (
	_ Keyring = (*LocalKeyring)(nil)
	_ Rotator = (*LocalKeyring)(nil)
)

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
	id, key, err := newKeyID(nil)
	if err != nil {
		return err
	}
	tmp, err := writeTempKeyFile(dir, keyFile{Current: id, Keys: map[string]string{id: base64.StdEncoding.EncodeToString(key)}})
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create key file %s: %w", path, err)
	}
	return nil
}

// newKeyID draws a new random key and an ID that is not among taken.
func newKeyID(taken map[string][]byte) (string, []byte, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", nil, fmt.Errorf("create key: %w", err)
	}
	for {
		id := "k" + switchboard.RandomToken(5)
		if _, dup := taken[id]; !dup {
			return id, key, nil
		}
	}
}

// writeTempKeyFile writes kf to a new temporary file of mode 0600 in dir, synced to
// disk, and returns its name; the caller links or renames it into place.
func writeTempKeyFile(dir string, kf keyFile) (string, error) {
	data, err := json.MarshalIndent(kf, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode key file: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".keys-*")
	if err != nil {
		return "", fmt.Errorf("create key file: %w", err)
	}
	fail := func(err error) (string, error) {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return "", fmt.Errorf("write key file: %w", err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		return fail(err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return "", fmt.Errorf("write key file: %w", err)
	}
	return tmp.Name(), nil
}

func loadKeyFile(path string) (*LocalKeyring, error) {
	keys, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	kr := &LocalKeyring{path: path}
	kr.keys.Store(keys)
	kr.checkedAt.Store(time.Now().UnixNano())
	return kr, nil
}

// readKeyFile reads and checks the key file at path.
func readKeyFile(path string) (*localKeys, error) {
	kf, fi, err := readKeyFileJSON(path)
	if err != nil {
		return nil, err
	}
	raw := make(map[string][]byte, len(kf.Keys))
	for id, b64 := range kf.Keys {
		key, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(key) != 32 {
			return nil, fmt.Errorf("key file %s: key %q must be 32 bytes in base64", path, id)
		}
		raw[id] = key
	}
	keys, err := newLocalKeys(kf.Current, raw)
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	keys.file = fi
	return keys, nil
}

// readKeyFileJSON reads the key file's JSON, refusing a file others may read or write.
func readKeyFileJSON(path string) (keyFile, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return keyFile{}, nil, fmt.Errorf("read key file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return keyFile{}, nil, fmt.Errorf("read key file: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return keyFile{}, nil, fmt.Errorf("key file %s has mode %04o, which lets others read it; run chmod 600 %s", path, perm, path)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return keyFile{}, nil, fmt.Errorf("read key file: %w", err)
	}
	var kf keyFile
	if err := json.Unmarshal(data, &kf); err != nil {
		return keyFile{}, nil, fmt.Errorf("key file %s is not valid JSON: %w", path, err)
	}
	return kf, fi, nil
}

// NewLocalKeyring returns a keyring of 32-byte keys by ID, held in memory; current is
// the one that seals.
func NewLocalKeyring(current string, keys map[string][]byte) (*LocalKeyring, error) {
	raw := make(map[string][]byte, len(keys))
	for id, key := range keys {
		raw[id] = bytes.Clone(key)
	}
	ks, err := newLocalKeys(current, raw)
	if err != nil {
		return nil, err
	}
	kr := &LocalKeyring{}
	kr.keys.Store(ks)
	return kr, nil
}

func newLocalKeys(current string, raw map[string][]byte) (*localKeys, error) {
	if _, ok := raw[current]; !ok {
		return nil, fmt.Errorf("current key %q is not among the keys", current)
	}
	root := hmac.New(sha256.New, raw[current])
	root.Write([]byte("switchboard/derive/v1"))
	ks := &localKeys{current: current, raw: raw, aeads: make(map[string]cipher.AEAD, len(raw)), derived: root.Sum(nil)}
	for id, key := range raw {
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
		ks.aeads[id] = aead
	}
	return ks, nil
}

// Derive returns a 32-byte secret for one purpose (for example the key of the audit
// log's argument hashes), derived from the current key: stable across restarts, and
// different for every purpose. It changes when the current key rotates.
func (k *LocalKeyring) Derive(purpose string) []byte {
	mac := hmac.New(sha256.New, k.keys.Load().derived)
	mac.Write([]byte(purpose))
	return mac.Sum(nil)
}

// CurrentKeyID is the ID of the key that seals.
func (k *LocalKeyring) CurrentKeyID() string { return k.keys.Load().current }

// KeyIDs returns the IDs of every key this keyring can open with, sorted: what two
// servers sharing the key file must agree on.
func (k *LocalKeyring) KeyIDs() []string {
	return slices.Sorted(maps.Keys(k.keys.Load().raw))
}

// ActiveKeyID is the ID of the key that seals, after a look at the key file for a
// rotation by another process.
func (k *LocalKeyring) ActiveKeyID(_ context.Context) (string, error) {
	if err := k.reload(true); err != nil {
		return "", err
	}
	return k.CurrentKeyID(), nil
}

// Rotate adds a new random key and makes it current. A file-backed keyring writes it
// to the key file first (under a lock, so two rotations never lose a key), which
// other processes then pick up; every older key stays, so records sealed under them
// still open.
func (k *LocalKeyring) Rotate(_ context.Context) (string, error) {
	if k.path != "" {
		id, err := RotateKeyFile(k.path)
		if err != nil {
			return "", err
		}
		if err := k.reload(true); err != nil {
			return "", err
		}
		return id, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	old := k.keys.Load()
	id, key, err := newKeyID(old.raw)
	if err != nil {
		return "", err
	}
	raw := maps.Clone(old.raw)
	raw[id] = key
	ks, err := newLocalKeys(id, raw)
	if err != nil {
		return "", err
	}
	k.keys.Store(ks)
	return id, nil
}

// reload rereads the key file if it was replaced since it was read. Unless force is
// set it looks at the file at most every keyFileCheckInterval.
func (k *LocalKeyring) reload(force bool) error {
	if k.path == "" {
		return nil
	}
	now := time.Now()
	if !force && now.UnixNano()-k.checkedAt.Load() < int64(keyFileCheckInterval) {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.checkedAt.Store(now.UnixNano())
	fi, err := os.Stat(k.path)
	if err != nil {
		return fmt.Errorf("read key file: %w", err)
	}
	old := k.keys.Load()
	if old.file != nil && os.SameFile(fi, old.file) && fi.ModTime().Equal(old.file.ModTime()) && fi.Size() == old.file.Size() {
		return nil
	}
	ks, err := readKeyFile(k.path)
	if err != nil {
		return err
	}
	for id := range old.raw {
		if _, ok := ks.raw[id]; !ok {
			return fmt.Errorf("key file %s no longer holds key %q, which may still seal records; restore it", k.path, id)
		}
	}
	k.keys.Store(ks)
	return nil
}

// Seal encrypts plaintext under the current key with a fresh random 12-byte nonce,
// which it puts in front of the ciphertext.
func (k *LocalKeyring) Seal(_ context.Context, plaintext, aad []byte) ([]byte, string, error) {
	if err := k.reload(false); err != nil {
		return nil, "", fmt.Errorf("seal: %w", err)
	}
	ks := k.keys.Load()
	aead := ks.aeads[ks.current]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, "", fmt.Errorf("seal: %w", err)
	}
	return aead.Seal(nonce, nonce, plaintext, aad), ks.current, nil
}

// Open decrypts a ciphertext sealed under keyID with the same additional data. A key
// it does not know makes a file-backed keyring look for a rotated key file first.
func (k *LocalKeyring) Open(_ context.Context, keyID string, ciphertext, aad []byte) ([]byte, error) {
	aead, ok := k.keys.Load().aeads[keyID]
	if !ok {
		if err := k.reload(true); err != nil {
			return nil, fmt.Errorf("open: %w", err)
		}
		if aead, ok = k.keys.Load().aeads[keyID]; !ok {
			return nil, fmt.Errorf("open: unknown key %q", keyID)
		}
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
