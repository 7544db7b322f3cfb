package connections_test

import (
	"testing"

	"github.com/switchboard-hub/switchboard/internal/vaulttest"
)

// TestMain builds the Vault binary the store-on-Vault tests run against, if it is not
// cached yet, before any test's timeout starts.
func TestMain(m *testing.M) { vaulttest.Main(m) }
