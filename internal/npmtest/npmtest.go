// Package npmtest gives a test the pinned npm packages it needs: it checks that
// Node.js 20+ and npm are here (a test without them is skipped, and fails under
// CI=true, where every Node suite must run), and installs a directory's packages with
// `npm ci` when its node_modules does not hold exactly what its package-lock.json pins.
//
// Start from [Require], [Install] and [Problem].
package npmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testproc"
)

// Require skips tb when Node.js 20+ or npm is missing, saying that what (the suite)
// did not run and why; under CI=true it fails tb instead.
func Require(tb testing.TB, what string) {
	tb.Helper()
	problem := Problem(tb.Context())
	if problem == "" {
		return
	}
	msg := fmt.Sprintf("%s DID NOT RUN: Node.js 20+ and npm are required (%s)", what, problem)
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg + "; CI=true, so this is a failure")
	}
	tb.Skip(msg)
}

// Problem says why Node.js 20+ and npm cannot be used here, or "" when they can.
func Problem(ctx context.Context) string {
	for _, name := range []string{"node", "npm"} {
		if _, err := exec.LookPath(name); err != nil {
			return name + " is not on PATH"
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := testproc.Command(ctx, "node", "--version").Output()
	if err != nil {
		return fmt.Sprintf("node --version failed: %v", err)
	}
	v := strings.TrimSpace(string(out))
	major, _, _ := strings.Cut(strings.TrimPrefix(v, "v"), ".")
	if n, err := strconv.Atoi(major); err != nil || n < 20 {
		return "node is " + v + ", older than 20"
	}
	return ""
}

// installs holds a lock per directory: parallel tests share a directory, and npm ci
// deletes node_modules before it installs, so one installs at a time and none looks
// meanwhile.
var installs sync.Map // absolute directory → *sync.Mutex

// Install runs `npm ci` in dir when its node_modules does not hold exactly the
// versions its package-lock.json pins, and fails tb when it still does not after.
func Install(tb testing.TB, dir string) {
	tb.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	mu, _ := installs.LoadOrStore(abs, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	why, err := Stale(abs)
	if err != nil {
		tb.Fatalf("check %s/node_modules: %v", abs, err)
	}
	if why == "" {
		return
	}
	tb.Logf("installing npm packages (%s): npm ci --no-audit --no-fund in %s", why, abs)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := testproc.Command(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = abs
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("npm ci --no-audit --no-fund in %s: %v\n%s", abs, err, out)
	}
	if why, err := Stale(abs); err != nil || why != "" {
		tb.Fatalf("after npm ci, %s/node_modules is still not what package-lock.json pins: %s %v", abs, why, err)
	}
}

// lockfile is the part of package-lock.json (lockfileVersion 3) Stale reads.
type lockfile struct {
	Packages map[string]struct {
		Version  string `json:"version"`
		Optional bool   `json:"optional"`
	} `json:"packages"`
}

// Stale reports why dir's node_modules does not match its package-lock.json ("" when
// it does).
func Stale(dir string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return "", fmt.Errorf("read package-lock.json: %w", err)
	}
	var lock lockfile
	if err := json.Unmarshal(raw, &lock); err != nil {
		return "", fmt.Errorf("parse package-lock.json: %w", err)
	}
	if len(lock.Packages) < 2 {
		return "", errors.New("package-lock.json lists no packages; regenerate it with npm install")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); errors.Is(err, os.ErrNotExist) {
		return "node_modules is missing", nil
	}
	for path, want := range lock.Packages {
		if path == "" || want.Version == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path), "package.json"))
		if errors.Is(err, os.ErrNotExist) {
			if want.Optional {
				continue
			}
			return path + " is missing", nil
		}
		if err != nil {
			return "", fmt.Errorf("read %s/package.json: %w", path, err)
		}
		var got struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(b, &got); err != nil || got.Version != want.Version {
			return fmt.Sprintf("%s is %q, package-lock.json pins %q", path, got.Version, want.Version), nil
		}
	}
	return "", nil
}
