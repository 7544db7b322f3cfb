package mcpadapter

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
)

// TestRunsToolErrorLogsInternalCauses: a runs tool tells the agent only that an internal
// error happened, so its cause must reach the log; coded errors are the agent's to act
// on and are not logged.
func TestRunsToolErrorLogsInternalCauses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		err      error
		wantText string
		wantLog  string
	}{
		{name: "internal", err: switchboard.Internal(errors.New("read run run_1: database is locked")),
			wantText: "Switchboard failed (internal error); the operator has the details.", wantLog: "database is locked"},
		{name: "not found", err: switchboard.NotFound("run"), wantText: switchboard.NotFound("run").Message},
		{name: "invalid", err: switchboard.Invalid("run_id", "is required"), wantText: `Invalid argument "run_id": is required.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			x := &runsExt{o: RunsOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))}}
			res := x.toolError(context.Background(), tt.err)
			if !res.IsError || len(res.Content) != 1 {
				t.Fatalf("result = %+v, want one error text", res)
			}
			if diff := cmp.Diff(tt.wantText, res.Content[0].(mcp.TextContent).Text); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
			if tt.wantLog == "" && logs.Len() != 0 {
				t.Errorf("logged %q for a coded error", logs.String())
			}
			if tt.wantLog != "" && !strings.Contains(logs.String(), tt.wantLog) {
				t.Errorf("log %q lacks the cause %q", logs.String(), tt.wantLog)
			}
		})
	}
}

// TestRunsHubErrorLogsInternalCauses: a hub tool's call that fails in the runs
// extension (its confirm policy or its run could not be read or stored) is rendered as
// the adapter renders tool errors, and an internal cause is logged.
func TestRunsHubErrorLogsInternalCauses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		err      error
		wantText string
		wantLog  string
	}{
		{name: "policy read failed", err: switchboard.Internal(errors.New("read MCP settings: database is closed")),
			wantText: "Switchboard failed to run this tool (internal error); the operator has the details.", wantLog: "database is closed"},
		{name: "bad argument", err: switchboard.Invalid("text", "is required"), wantText: `Invalid argument "text": is required.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			x := &runsExt{o: RunsOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))}}
			sc := Scope{Principal: switchboard.Principal{TenantID: "ten_a"}, s: &scope{adapter: &Adapter{}}}
			res := x.hubError(context.Background(), sc, tt.err)
			if !res.IsError || len(res.Content) != 1 {
				t.Fatalf("result = %+v, want one error text", res)
			}
			if diff := cmp.Diff(tt.wantText, res.Content[0].(mcp.TextContent).Text); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
			if tt.wantLog == "" && logs.Len() != 0 {
				t.Errorf("logged %q for a coded error", logs.String())
			}
			if tt.wantLog != "" && (!strings.Contains(logs.String(), tt.wantLog) || !strings.Contains(logs.String(), "ten_a")) {
				t.Errorf("log %q lacks the cause %q or the tenant", logs.String(), tt.wantLog)
			}
		})
	}
}
