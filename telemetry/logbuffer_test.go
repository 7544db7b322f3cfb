package telemetry

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// countingWriter records each Write it is given.
type countingWriter struct {
	mu     sync.Mutex
	writes []string
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func (w *countingWriter) all() (int, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.writes), strings.Join(w.writes, "")
}

// TestLogBufferBatchesLines: many lines reach the writer in one write, in order, and
// Close writes what is left; a full buffer is written at once, before the line that
// did not fit; a line larger than the buffer goes through whole.
func TestLogBufferBatchesLines(t *testing.T) {
	t.Parallel()
	out := &countingWriter{}
	b := NewLogBuffer(out, 64, 0) // no timer: only full buffers and Close write
	var want bytes.Buffer
	for i := range 5 {
		line := fmt.Sprintf("line %d\n", i) // 7 bytes
		want.WriteString(line)
		if _, err := b.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := out.all(); n != 0 {
		t.Fatalf("%d writes before the buffer was full or closed; want 0", n)
	}
	long := strings.Repeat("x", 40) + "\n" // 35+41 > 64: the five lines are written first
	want.WriteString(long)
	b.Write([]byte(long))
	if n, got := out.all(); n != 1 || got != want.String()[:35] {
		t.Fatalf("after filling the buffer: %d writes %q; want 1 write of the five lines", n, got)
	}
	huge := strings.Repeat("y", 100) + "\n"
	want.WriteString(huge)
	b.Write([]byte(huge))
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	n, got := out.all()
	if got != want.String() {
		t.Fatalf("written %q; want %q", got, want.String())
	}
	if n != 3 { // the five lines, the long line (flushed before the huge one), the huge one
		t.Errorf("%d writes; want 3", n)
	}
}

// TestLogBufferConcurrentWriters: lines from many goroutines arrive whole, none lost.
func TestLogBufferConcurrentWriters(t *testing.T) {
	t.Parallel()
	out := &countingWriter{}
	b := NewLogBuffer(out, 256, LogFlushEvery)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				fmt.Fprintf(b, "g%d i%d\n", g, i)
			}
		}()
	}
	wg.Wait()
	b.Close()
	_, got := out.all()
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		seen[line] = true
	}
	for g := range 8 {
		for i := range 200 {
			if l := fmt.Sprintf("g%d i%d", g, i); !seen[l] {
				t.Fatalf("line %q lost or split", l)
			}
		}
	}
	if len(seen) != 1600 {
		t.Errorf("%d distinct lines; want 1600", len(seen))
	}
}
