package bench

import (
	"os"
	"testing"
)

// TestMain runs the benchmarks, or, when this binary is run again by
// BenchmarkMemoryConnections with envClients set, the client process alone.
func TestMain(m *testing.M) {
	if os.Getenv(envClients) != "" {
		os.Exit(runClients())
	}
	os.Exit(m.Run())
}
