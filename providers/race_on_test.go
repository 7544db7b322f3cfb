//go:build race

package providers_test

// raceEnabled: this test binary runs under the race detector, whose instrumentation
// changes how many allocations some code makes.
const raceEnabled = true
