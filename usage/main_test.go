package usage_test

import (
	"testing"

	"github.com/switchboard-hub/switchboard/internal/notrun"
)

// TestMain ends the package's test output with one line naming what did not run (a
// suite that needs what this machine lacks), if anything did not.
func TestMain(m *testing.M) { notrun.Main(m) }
