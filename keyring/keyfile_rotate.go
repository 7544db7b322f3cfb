package keyring

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
)

// RotateKeyFile adds a new random key to the key file at path and makes it current,
// keeping every older key so that records sealed under them still open. It holds an
// exclusive lock on path+".lock" while it reads and rewrites the file, so two
// rotations at once never lose a key, and replaces the file atomically (a reader sees
// the old file or the new one). It returns the new key's ID.
func RotateKeyFile(path string) (string, error) {
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return "", fmt.Errorf("rotate key file %s: %w", path, err)
	}
	defer unlock()
	kf, _, err := readKeyFileJSON(path)
	if err != nil {
		return "", err
	}
	if _, ok := kf.Keys[kf.Current]; !ok {
		return "", fmt.Errorf("key file %s: current key %q is not among the keys", path, kf.Current)
	}
	taken := make(map[string][]byte, len(kf.Keys))
	for id := range kf.Keys {
		taken[id] = nil
	}
	id, key, err := newKeyID(taken)
	if err != nil {
		return "", err
	}
	kf.Keys[id] = base64.StdEncoding.EncodeToString(key)
	kf.Current = id
	dir := filepath.Dir(path)
	tmp, err := writeTempKeyFile(dir, kf)
	if err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("replace key file %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil { // make the rename itself durable
		_ = d.Sync()
		_ = d.Close()
	}
	return id, nil
}
