// Package testwait bounds a test's waits: a condition polled until it holds, a value
// from a channel, a WaitGroup. Each gives up after Timeout and fails the test naming
// what it waited for, so a test whose other side never makes progress fails in half a
// minute instead of hanging until go test's -timeout kills the whole package.
//
// Start from [Until], [Recv] and [Wait].
package testwait

import (
	"testing"
	"time"
)

// Timeout is how long any wait lasts before it fails the test. It is long enough for a
// 2-core machine at a load average of 20 and short enough to fail well inside CI's bound.
const Timeout = 30 * time.Second

// Until polls cond until it returns true, or fails tb after Timeout with what.
func Until(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(Timeout)
	for pause := 100 * time.Microsecond; !cond(); pause = min(2*pause, 10*time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("waited %s for %s", Timeout, what)
		}
		time.Sleep(pause)
	}
}

// Recv returns the next value from ch (the zero value once ch is closed), or fails tb
// after Timeout with what.
func Recv[T any](tb testing.TB, ch <-chan T, what string) T {
	tb.Helper()
	timer := time.NewTimer(Timeout)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		tb.Fatalf("waited %s for %s", Timeout, what)
		panic("unreachable") // Fatalf does not return
	}
}

// Wait runs wait (a WaitGroup's Wait, a process's end) and returns once it does, or
// fails tb after Timeout with what. A wait that never ends is left running: the test
// has failed and its cleanups stop what it waited on.
func Wait(tb testing.TB, what string, wait func()) {
	tb.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait()
	}()
	Recv(tb, done, what)
}
