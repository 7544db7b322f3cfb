package switchboard_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/vaulttest"
)

// TestMain starts the Vault build the Vault keyring tests need before this package's
// own tests, which do not need it. go test ./... builds and runs the packages in the
// order it lists them, and this one, the module root, comes first and compiles in
// seconds, so the build gets going minutes before connections and cmd/switchboard,
// heavy packages that come later, start waiting for it.
func TestMain(m *testing.M) {
	if err := vaulttest.Prebuild(os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "could not start the Vault build: %v\n", err)
	}
	os.Exit(m.Run())
}
