// Package notrun says, in the test output, what of a package's tests did not run: a
// suite skipped for want of Node.js, Chromium, haproxy, redis-server or PostgreSQL says
// so in its own log (t.Skip, t.Log) and in one summary line that the package's TestMain
// prints to standard output after the tests, so a log, CI or an IDE reading go test's
// output (-v, -json) shows it beside "ok", and a terminal gets it too.
//
// Start from [Skip] (a test that cannot run at all), [Note] (a test that ran only in
// part, such as the SQLite half of one that also runs on PostgreSQL) and [Main] (the
// TestMain of a package that calls either).
package notrun

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// EnvCI is the variable that, set to "true", turns a skip into a failure: CI installs
// everything the suites need, so there a suite that cannot run is a broken run.
const EnvCI = "CI"

// record is what one test binary did not run, by reason, in the order first seen.
type record struct {
	mu      sync.Mutex
	reasons []string
	tests   map[string][]string
}

// seen is the test binary's record. It is package state because a test binary is one
// package's tests: Skip and Note add to it, Main prints it once they have all run.
var seen = &record{tests: map[string][]string{}}

func (r *record) add(test, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tests[reason]; !ok {
		r.reasons = append(r.reasons, reason)
	}
	if !slices.Contains(r.tests[reason], test) {
		r.tests[reason] = append(r.tests[reason], test)
	}
}

// Skip skips tb with reason, which says what did not run and what it needs ("browser
// end-to-end test DID NOT RUN: /usr/bin/chromium is missing …"), and counts it in the
// package's summary; with CI=true it fails tb instead.
func Skip(tb testing.TB, reason string) {
	tb.Helper()
	if os.Getenv(EnvCI) == "true" {
		tb.Fatalf("%s; CI=true, so this is a failure", reason)
	}
	seen.add(tb.Name(), reason)
	tb.Skip(reason)
}

// Note logs that part of tb did not run, for reason, and counts it in the package's
// summary; the rest of tb runs on.
func Note(tb testing.TB, reason string) {
	tb.Helper()
	seen.add(tb.Name(), reason)
	tb.Log("did not run: " + reason)
}

// Main runs the package's tests, prints the summary of what did not run, and exits
// with the tests' code: the whole TestMain of a package whose tests call Skip or Note.
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run runs the package's tests and prints the summary, for a TestMain that does more.
func Run(m *testing.M) int {
	code := m.Run()
	Print()
	return code
}

// Print writes the summary line, if anything did not run, to standard output and to the
// terminal go test runs in: in package list mode (go test ./...) go test shows a passing
// package's output only with -v or -json, and the terminal should hear of it anyway.
func Print() {
	line := seen.summary(pkgName())
	if line == "" {
		return
	}
	fmt.Fprintln(os.Stdout, line)
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		_, _ = io.WriteString(tty, "\n*** "+line+" ***\n\n")
		_ = tty.Close()
	}
}

// summary is one line: "e2e: 2 suites did not run: <reason> (TestA); <reason> (TestB, TestC)".
func (r *record) summary(pkg string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	parts := make([]string, 0, len(r.reasons))
	for _, reason := range r.reasons {
		tests := r.tests[reason]
		n += len(tests)
		names := tests
		if len(names) > 5 {
			names = append(slices.Clone(names[:5]), fmt.Sprintf("%d more", len(tests)-5))
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", reason, strings.Join(names, ", ")))
	}
	if n == 0 {
		return ""
	}
	suites := "suites"
	if n == 1 {
		suites = "suite"
	}
	return fmt.Sprintf("%s: %d %s did not run: %s", pkg, n, suites, strings.Join(parts, "; "))
}

// pkgName is the test binary's package, from its name ("e2e.test").
func pkgName() string {
	return strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
}
