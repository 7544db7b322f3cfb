package testwait_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// fatal records Fatalf instead of ending the test, and stops the calling goroutine
// as Fatalf does.
type fatal struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (f *fatal) Helper() {}

func (f *fatal) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.msg = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	panic(f)
}

// run calls wait with f and reports whether it gave up.
func run(f *fatal, wait func(testing.TB)) (gaveUp bool) {
	defer func() {
		if r := recover(); r != nil {
			if r != f {
				panic(r)
			}
			gaveUp = true
		}
	}()
	wait(f)
	return false
}

func TestWaitsReturnWhenTheirSideProgresses(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 7
	if got := testwait.Recv(t, ch, "a value"); got != 7 {
		t.Errorf("Recv = %d, want 7", got)
	}
	n := 0
	testwait.Until(t, "n to reach 3", func() bool { n++; return n >= 3 })
	var wg sync.WaitGroup
	wg.Go(func() {})
	testwait.Wait(t, "the goroutine", wg.Wait)
}

// TestWaitsGiveUp: a wait whose other side never progresses fails the test, naming
// what it waited for, once Timeout has passed (so this test takes that long, in
// parallel with the others).
func TestWaitsGiveUp(t *testing.T) {
	if testing.Short() {
		t.Skip("takes testwait.Timeout; -short skips it")
	}
	t.Parallel()
	waits := map[string]func(testing.TB){
		"recv":  func(tb testing.TB) { testwait.Recv(tb, make(chan int), "recv") },
		"until": func(tb testing.TB) { testwait.Until(tb, "until", func() bool { return false }) },
		"wait":  func(tb testing.TB) { testwait.Wait(tb, "wait", func() { select {} }) },
	}
	// The three wait at once (subtests would wait in turns of -parallel).
	var wg sync.WaitGroup
	msgs := make(map[string]string)
	var mu sync.Mutex
	for name, wait := range waits {
		wg.Go(func() {
			f := &fatal{TB: t}
			msg := "returned without its side progressing"
			if run(f, wait) {
				msg = f.msg
			}
			mu.Lock()
			msgs[name] = msg
			mu.Unlock()
		})
	}
	ended := make(chan struct{})
	go func() { wg.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(2 * testwait.Timeout):
		t.Fatalf("the waits had not given up after %s", 2*testwait.Timeout)
	}
	for name := range waits {
		if want := fmt.Sprintf("waited %s for %s", testwait.Timeout, name); msgs[name] != want {
			t.Errorf("%s: %q, want %q", name, msgs[name], want)
		}
	}
}
