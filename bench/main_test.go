package bench

import (
	"os"
	"testing"
)

// TestMain runs the benchmarks, or, when this binary is run again by
// BenchmarkMemoryConnections with envClients set, the client process alone, or, with
// envHub set, the hub's process of the overload benchmarks.
func TestMain(m *testing.M) {
	if os.Getenv(envClients) != "" {
		os.Exit(runClients())
	}
	if os.Getenv(envHub) != "" {
		os.Exit(serveHub())
	}
	os.Exit(m.Run())
}
