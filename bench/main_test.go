package bench

import (
	"os"
	"testing"
)

// TestMain runs the benchmarks, or, when this binary is run again by
// BenchmarkMemoryConnections with envClients set, the client process alone, or, with
// envHub set, the hub's process of the overload benchmarks (envUpstream: their fake
// upstream's).
func TestMain(m *testing.M) {
	if os.Getenv(envClients) != "" {
		os.Exit(runClients())
	}
	if os.Getenv(envHub) != "" {
		os.Exit(serveHub())
	}
	if os.Getenv(envUpstream) != "" {
		os.Exit(serveUpstream())
	}
	os.Exit(m.Run())
}
