package vaulttest

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// toolModule writes a module like tools/vault whose transitdev is main, and returns
// its directory.
func toolModule(t *testing.T, main string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":             "module example.com/tool\n\ngo 1.24\n",
		"transitdev/main.go": main,
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBuildOutlivesItsWait checks that a build the wait gives up on goes on by itself
// and leaves the binary for the next run, which finds it without building again; that
// is what lets a second `go test` pass after a first one ran out of time.
func TestBuildOutlivesItsWait(t *testing.T) {
	t.Parallel()
	dir := toolModule(t, "package main\n\nfunc main() {}\n")
	// The go command is held at a gate the test opens once the first wait has given up.
	tmp := t.TempDir()
	gate := filepath.Join(tmp, "gate")
	goBin := filepath.Join(tmp, "go")
	script := "#!/bin/sh\nwhile [ ! -e " + gate + " ]; do sleep 0.05; done\nexec " + goTool() + " \"$@\"\n"
	if err := os.WriteFile(goBin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "cache", "transitdev")
	_, err := ensureBuilt(context.Background(), goBin, dir, bin, io.Discard, time.Now().Add(-time.Second))
	if err == nil || !strings.Contains(err.Error(), "goes on in the background") {
		t.Fatalf("ensureBuilt past its deadline = %v, want the build still running", err)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A later run waits without a deadline and gets the binary the first one started.
	got, err := ensureBuilt(context.Background(), goBin, dir, bin, io.Discard, time.Time{})
	if err != nil || got != bin {
		t.Fatalf("ensureBuilt() = %q, %v; want %q", got, err, bin)
	}
	if err := exec.Command(bin).Run(); err != nil {
		t.Errorf("the built binary does not run: %v", err)
	}
	log, _ := os.ReadFile(filepath.Join(filepath.Dir(bin), "build.log"))
	if n := strings.Count(string(log), "built in"); n != 1 {
		t.Errorf("the log records %d builds, want 1:\n%s", n, log)
	}
}

// TestPrebuildStartsOnce checks that starting the build returns at once, that a second
// start while it runs leaves it alone, and that a wait then gets its binary.
func TestPrebuildStartsOnce(t *testing.T) {
	t.Parallel()
	dir := toolModule(t, "package main\n\nfunc main() {}\n")
	tmp := t.TempDir()
	gate := filepath.Join(tmp, "gate")
	goBin := filepath.Join(tmp, "go")
	script := "#!/bin/sh\nwhile [ ! -e " + gate + " ]; do sleep 0.05; done\nexec " + goTool() + " \"$@\"\n"
	if err := os.WriteFile(goBin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "cache", "transitdev")
	for i, want := range []bool{true, false} {
		started, err := startIfMissing(goBin, dir, bin, io.Discard)
		if err != nil || started != want {
			t.Fatalf("start %d: startIfMissing() = %v, %v; want %v", i+1, started, err, want)
		}
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ensureBuilt(context.Background(), goBin, dir, bin, io.Discard, time.Time{}); err != nil || got != bin {
		t.Fatalf("ensureBuilt() = %q, %v; want %q", got, err, bin)
	}
	if started, err := startIfMissing(goBin, dir, bin, io.Discard); err != nil || started {
		t.Errorf("startIfMissing() once built = %v, %v; want false", started, err)
	}
}

// TestBuildFailureShowsTheLog checks that a build that fails is reported with the
// compiler's words, not as a binary that never came.
func TestBuildFailureShowsTheLog(t *testing.T) {
	t.Parallel()
	dir := toolModule(t, "package main\n\nfunc main() { undefinedThing() }\n")
	bin := filepath.Join(t.TempDir(), "cache", "transitdev")
	_, err := ensureBuilt(context.Background(), goTool(), dir, bin, io.Discard, time.Time{})
	if err == nil || !strings.Contains(err.Error(), "undefined: undefinedThing") {
		t.Fatalf("ensureBuilt() = %v, want the compiler's error", err)
	}
}
