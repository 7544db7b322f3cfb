package vaulttest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"testing"

	"github.com/switchboard-hub/switchboard/internal/notrun"
)

// pkg is the server tools/vault builds by default.
const pkg = "./transitdev"

// reserve is the part of the test timeout Main leaves to the tests once Vault is there.
// go test kills a test binary one minute after its timeout, counted from the start of
// the process, so the tests then have reserve plus that minute; the Vault tests of a
// package take well under a minute even on a loaded machine.
const reserve = 90 * time.Second

// Main waits for the Vault binary (building it if no one is), then runs the tests.
// Call it as the body of TestMain: func TestMain(m *testing.M) { vaulttest.Main(m) }.
// It waits at most until the test timeout less a reserve for the tests themselves; a
// build still running then goes on in the background, and the package fails with a
// message that says so.
func Main(m *testing.M) {
	flag.Parse()
	var deadline time.Time
	if f := flag.Lookup("test.timeout"); f != nil {
		if d, err := time.ParseDuration(f.Value.String()); err == nil && d > 0 {
			deadline = time.Now().Add(max(d-reserve, d/2))
		}
	}
	if _, err := Ensure(context.Background(), os.Stderr, deadline); err != nil {
		fmt.Fprintf(os.Stderr, "vaulttest: no Vault binary for the tests: %v\n", err)
		os.Exit(1)
	}
	notrun.Main(m)
}

// Prebuild starts the build of the cached Vault binary if it is missing and no one is
// building it, and returns at once. The module root's tests call it from their
// TestMain: go test ./... runs that package first, and it compiles in seconds, so the
// Vault build starts minutes before the heavier packages that wait for it get to run.
func Prebuild(progress io.Writer) error {
	if os.Getenv(EnvBinary) != "" {
		return nil
	}
	dir, err := toolsDir()
	if err != nil {
		return err
	}
	bin, err := CachePath(context.Background(), dir)
	if err != nil {
		return err
	}
	_, err = startIfMissing(goTool(), dir, bin, progress)
	return err
}

// Ensure returns the path of a Vault binary: $SWITCHBOARD_VAULT_BIN if set, else the
// cached build. If that is missing, it starts the build as a detached process (unless
// another process's build is under way) and waits for it until deadline (the zero time:
// without end), writing progress to progress.
func Ensure(ctx context.Context, progress io.Writer, deadline time.Time) (string, error) {
	if bin := os.Getenv(EnvBinary); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvBinary, bin, err)
		}
		return bin, nil
	}
	dir, err := toolsDir()
	if err != nil {
		return "", err
	}
	bin, err := CachePath(ctx, dir)
	if err != nil {
		return "", err
	}
	return ensureBuilt(ctx, goTool(), dir, bin, progress, deadline)
}

// ensureBuilt returns bin once it exists, building it with the go command goBin from
// the module in dir if no process is building it yet.
func ensureBuilt(ctx context.Context, goBin, dir, bin string, progress io.Writer, deadline time.Time) (string, error) {
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	start := time.Now()
	started, err := startIfMissing(goBin, dir, bin, progress)
	if err != nil {
		return "", err
	}
	if !started {
		if _, err := os.Stat(bin); err == nil { // built while we looked
			return bin, nil
		}
		fmt.Fprintf(progress, "vaulttest: waiting for the Vault build another process started (log %s)\n", buildLog(bin))
	}
	return wait(ctx, bin, buildLock(bin), buildLog(bin), deadline, start, progress)
}

func buildLock(bin string) string { return filepath.Join(filepath.Dir(bin), "build.lock") }
func buildLog(bin string) string  { return filepath.Join(filepath.Dir(bin), "build.log") }

// startIfMissing starts the detached build of bin unless bin exists or another process
// holds the build lock, and reports whether it started one.
func startIfMissing(goBin, dir, bin string, progress io.Writer) (bool, error) {
	if _, err := os.Stat(bin); err == nil {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return false, fmt.Errorf("create %s: %w", filepath.Dir(bin), err)
	}
	lock, err := tryLock(buildLock(bin))
	if err != nil || lock == nil {
		return false, err
	}
	defer lock.Close()                      // the build process holds the lock from here on
	if _, err := os.Stat(bin); err == nil { // built while we took the lock
		return false, nil
	}
	if err := startBuild(goBin, dir, bin, buildLog(bin), lock); err != nil {
		return false, err
	}
	fmt.Fprintf(progress, "vaulttest: building Vault %s's Transit server into %s in the background (log %s); the first time takes a few minutes, later runs find it cached\n", Version, bin, buildLog(bin))
	return true, nil
}

// startBuild runs the build in a session of its own, so that it outlives the test
// binary that started it (go test kills a test binary at its timeout). It writes to a
// temporary file and renames it into place once complete, holding lock until it ends.
func startBuild(goBin, dir, bin, logPath string, lock *os.File) error {
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("create %s: %w", logPath, err)
	}
	defer logFile.Close()
	script := `start=$(date +%s); "$1" build -ldflags="-s -w" -o "$2.tmp" "$3" && mv "$2.tmp" "$2" && echo "built in $(( $(date +%s) - start ))s"`
	cmd := exec.Command("/bin/sh", "-c", script, "sh", goBin, bin, pkg)
	cmd.Dir = dir
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "GOWORK=off")
	cmd.ExtraFiles = []*os.File{lock}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the Vault build: %w", err)
	}
	return cmd.Process.Release()
}

// wait polls for the binary until it appears, the build ends without it (the lock is
// free again), ctx ends or the deadline passes.
func wait(ctx context.Context, bin, lockPath, logPath string, deadline, start time.Time, progress io.Writer) (string, error) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	lastNote := time.Now()
	for {
		if _, err := os.Stat(bin); err == nil {
			fmt.Fprintf(progress, "vaulttest: Vault is built (waited %s)\n", time.Since(start).Round(time.Second))
			return bin, nil
		}
		lock, err := tryLock(lockPath)
		if err != nil {
			return "", err
		}
		if lock != nil {
			_ = lock.Close()
			if _, err := os.Stat(bin); err == nil {
				return bin, nil
			}
			out, _ := os.ReadFile(logPath)
			return "", fmt.Errorf("the Vault build in tools/vault failed; its log %s ends:\n%s", logPath, tail(out))
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return "", fmt.Errorf("the Vault build is still running after %s, so this run's time is spent; it goes on in the background (log %s): run the tests again once it is done, or with a longer -timeout",
				time.Since(start).Round(time.Second), logPath)
		}
		if time.Since(lastNote) >= 30*time.Second {
			lastNote = time.Now()
			fmt.Fprintf(progress, "vaulttest: still building Vault (%s)\n", time.Since(start).Round(time.Second))
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-tick.C:
		}
	}
}

// CachePath is where the build is cached:
// GOCACHE/switchboard-tools/vault-VERSION-transitdev-HASH/transitdev, where HASH covers
// the sources that make the binary (tools/vault's go.mod, go.sum and transitdev) and
// the Go version, so a change to any of them builds afresh.
func CachePath(ctx context.Context, toolsDir string) (string, error) {
	gocache := os.Getenv("GOCACHE")
	if gocache == "" {
		out, err := exec.CommandContext(ctx, goTool(), "env", "GOCACHE").Output()
		if err != nil {
			return "", fmt.Errorf("go env GOCACHE: %w", err)
		}
		gocache = strings.TrimSpace(string(out))
	}
	if gocache == "" || gocache == "off" {
		return "", errors.New("the Go build cache is off (GOCACHE=off); set SWITCHBOARD_VAULT_BIN to a vault binary")
	}
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version())
	for _, f := range []string{"go.mod", "go.sum", filepath.Join("transitdev", "main.go")} {
		b, err := os.ReadFile(filepath.Join(toolsDir, f))
		if err != nil {
			return "", fmt.Errorf("read the Vault build's sources: %w", err)
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	key := "vault-" + Version + "-transitdev-" + hex.EncodeToString(h.Sum(nil))[:12]
	return filepath.Join(gocache, "switchboard-tools", key, "transitdev"), nil
}

// toolsDir finds tools/vault by walking up from the working directory to the
// repository root.
func toolsDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		cand := filepath.Join(dir, "tools", "vault")
		if _, err := os.Stat(filepath.Join(cand, "go.mod")); err == nil {
			return cand, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no tools/vault/go.mod above the working directory; set SWITCHBOARD_VAULT_BIN to a vault binary")
		}
		dir = parent
	}
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}
