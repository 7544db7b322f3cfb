package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testproc"
)

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
