//go:build !race

package providers_test

// raceEnabled: this test binary runs without the race detector.
const raceEnabled = false
