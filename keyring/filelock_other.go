//go:build !unix

package keyring

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// lockFile takes an exclusive lock by creating the file at path, waiting while another
// process holds it, and returns the function that releases it (removes the file).
func lockFile(path string) (func(), error) {
	for range 600 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_ = f.Close()
			return func() { _ = os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, fmt.Errorf("lock %s: still held after a minute; remove it if no rotation runs", path)
}
