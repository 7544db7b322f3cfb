package e2e

import (
	"bytes"
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

// nodeMissing is the message of a run without Node.js: the suite did not run, and the
// message says so in words nobody can read as a pass.
const nodeMissing = "end-to-end MCP client suite DID NOT RUN: Node.js 20+ and npm are required (install them and rerun go test ./e2e)"

// requireNode skips the test when node or npm is missing or Node is older than 20,
// except in CI (CI=true), where that fails the test: CI always runs this suite.
func requireNode(t *testing.T) {
	t.Helper()
	problem := nodeProblem(t.Context())
	if problem == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; CI=true, so a missing Node.js is a failure (%s)", nodeMissing, problem)
	}
	msg := fmt.Sprintf("%s (%s)", nodeMissing, problem)
	announce(msg)
	t.Skip(msg)
}

// announce writes msg to the terminal go test runs in, when there is one: in package
// list mode (go test ./...) go test hides a passing package's output, skips included,
// and this suite not running must not go unnoticed.
func announce(msg string) {
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return // no terminal (CI, IDE): the skip message is what reports it
	}
	defer tty.Close()
	_, _ = fmt.Fprintf(tty, "\n*** %s ***\n\n", msg)
}

// nodeProblem says why the client suite cannot run here, or "" when it can.
func nodeProblem(ctx context.Context) string {
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

// clientDir is e2e/client, where run.mjs and its package.json live.
func clientDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("getwd: %v", err)
	}
	return filepath.Join(wd, "client")
}

// ensureClientPackages runs `npm ci` in e2e/client when node_modules is missing or does
// not hold exactly the versions package-lock.json pins.
func ensureClientPackages(t *testing.T) {
	t.Helper()
	ensurePackages(t, clientDir(t))
}

// npmInstalls serialises ensurePackages: parallel tests share a directory (TestConformance
// and TestConformanceAuthorizationServer share e2e/conformance), and npm ci deletes
// node_modules before it installs.
var npmInstalls sync.Mutex

// ensurePackages runs `npm ci` in dir when its node_modules is missing or does not hold
// exactly the versions its package-lock.json pins.
func ensurePackages(t *testing.T, dir string) {
	t.Helper()
	npmInstalls.Lock()
	defer npmInstalls.Unlock()
	why, err := packagesStale(dir)
	if err != nil {
		t.Fatalf("check %s/node_modules: %v", dir, err)
	}
	if why == "" {
		return
	}
	t.Logf("installing npm packages (%s): npm ci --no-audit --no-fund in %s", why, dir)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := testproc.Command(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	cmd.Stdin = nil
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci --no-audit --no-fund in %s: %v\n%s", dir, err, out)
	}
	if why, err := packagesStale(dir); err != nil || why != "" {
		t.Fatalf("after npm ci, %s/node_modules is still not what package-lock.json pins: %s %v", dir, why, err)
	}
}

// lockfile is the part of package-lock.json (lockfileVersion 3) this test reads.
type lockfile struct {
	Packages map[string]struct {
		Version  string `json:"version"`
		Optional bool   `json:"optional"`
	} `json:"packages"`
}

// packagesStale reports why node_modules does not match package-lock.json ("" when it
// does).
func packagesStale(dir string) (string, error) {
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

// clientRun is what one run of run.mjs produced.
type clientRun struct {
	Summary  summary
	Stdout   string
	Stderr   string
	ExitCode int
}

// summary is run.mjs's JSON summary line.
type summary struct {
	OK                  bool             `json:"ok"`
	Failures            []string         `json:"failures"`
	ToolsA              []string         `json:"tools_a"`
	ToolsB              []string         `json:"tools_b"`
	CreateIssueRequired []string         `json:"create_issue_required"`
	GitHubCreateIssue   callSummary      `json:"github_create_issue"`
	SlackPostMessage    callSummary      `json:"slack_post_message"`
	BadArgument         toolErrorSummary `json:"bad_argument"`
	MissingArgument     toolErrorSummary `json:"missing_argument"`
	BKeyOnAURL          refusedConnect   `json:"b_key_on_a_url"`
	AKeyOnBURL          refusedConnect   `json:"a_key_on_b_url"`
	TenantBCreateIssue  callSummary      `json:"tenant_b_create_issue"`
	// TenantBForeignConnection is beta's call naming default's GitHub account.
	TenantBForeignConnection tenantBCallSummary `json:"tenant_b_foreign_connection"`
	runsSummary
}

type callSummary struct {
	IsError           bool           `json:"isError"`
	StructuredContent map[string]any `json:"structuredContent"`
}

type toolErrorSummary struct {
	IsError bool   `json:"isError"`
	Text    string `json:"text"`
}

type refusedConnect struct {
	Connected bool   `json:"connected"`
	Code      *int   `json:"code"`
	Message   string `json:"message"`
}

type tenantBCallSummary struct {
	Refused bool   `json:"refused"`
	How     string `json:"how"`
	Message string `json:"message"`
}

// runClient runs node client/run.mjs with env and parses its summary line. A run that
// printed no summary fails the test; a run whose checks failed is returned for the
// caller to report.
func runClient(t *testing.T, env map[string]string) clientRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := testproc.Command(ctx, "node", filepath.Join(clientDir(t), "run.mjs"))
	cmd.Dir = clientDir(t)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	run := clientRun{Stdout: stdout.String(), Stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		run.ExitCode = exit.ExitCode()
	case err != nil:
		t.Fatalf("run node run.mjs: %v\nstderr:\n%s", err, run.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(run.Stdout), "\n")
	last := lines[len(lines)-1]
	if err := json.Unmarshal([]byte(last), &run.Summary); err != nil {
		t.Fatalf("run.mjs (exit %d) printed no JSON summary line: %v\nstdout:\n%s\nstderr:\n%s", run.ExitCode, err, run.Stdout, run.Stderr)
	}
	t.Logf("run.mjs summary: %s", last)
	return run
}
