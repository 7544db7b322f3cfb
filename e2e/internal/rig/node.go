package rig

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/notrun"
	"github.com/switchboard-hub/switchboard/internal/npmtest"
)

// nodeMissing is the message of a run without Node.js: the suite did not run, and the
// message says so in words nobody can read as a pass.
const nodeMissing = "end-to-end MCP client suite DID NOT RUN: Node.js 20+ and npm are required (install them and rerun go test ./e2e/...)"

// RequireNode skips the test when node or npm is missing or Node is older than 20,
// except in CI (CI=true), where that fails the test: CI always runs this suite.
func RequireNode(t *testing.T) {
	t.Helper()
	problem := npmtest.Problem(t.Context())
	if problem == "" {
		return
	}
	notrun.Skip(t, fmt.Sprintf("%s (%s)", nodeMissing, problem))
}

// ClientDir is e2e/client, where run.mjs and its package.json live.
func ClientDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(ModuleRoot(t), "e2e", "client")
}

// EnsureClientPackages runs `npm ci` in e2e/client when node_modules is missing or does
// not hold exactly the versions package-lock.json pins.
func EnsureClientPackages(t *testing.T) {
	t.Helper()
	npmtest.Install(t, ClientDir(t))
}

// ChromiumPath is where Debian's chromium package puts the browser.
const ChromiumPath = "/usr/bin/chromium"

// RequireChromium skips the browser test when Chromium is missing, except in CI
// (CI=true), where that fails it: .ci/run installs Chromium, so CI always runs it.
func RequireChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(ChromiumPath); err == nil {
		return
	}
	notrun.Skip(t, "browser end-to-end test DID NOT RUN: "+ChromiumPath+" is missing (apt-get install -y chromium, then rerun go test ./e2e/...)")
}

// BrowserDir is e2e/browser, where run.mjs and its package.json live.
func BrowserDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(ModuleRoot(t), "e2e", "browser")
}
