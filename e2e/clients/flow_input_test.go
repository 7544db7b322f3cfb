package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/e2e/internal/rig"
	"github.com/switchboard-hub/switchboard/internal/testproc"
)

// flowResult is a flow tool's result as flowinput.mjs reports it.
type flowResult struct {
	IsError    bool   `json:"isError"`
	Text       string `json:"text"`
	Structured struct {
		Output map[string]any `json:"output"`
		Status struct {
			InstanceID string `json:"instance_id"`
			State      string `json:"state"`
		} `json:"status"`
		Elicitations []struct {
			ID       string `json:"elicitation_id"`
			Message  string `json:"message"`
			TimedOut bool   `json:"timed_out"`
		} `json:"elicitations"`
		Answered []string `json:"answered"`
	} `json:"structured"`
}

// TestTypeScriptClientFlowInput: the official TypeScript client runs the example
// purchase approval, whose step asks the run's person for approval_status and
// comments: its form accepted, run_flow__ answers the approved output; declined, the
// flow failed; never answered (its question shown for 1 s), run_flow__ answers
// input_required with the elicitation timed out, which submit_flow_elicitation answers
// later; an instance started by a client without forms is answered through
// replay_flow_pending_elicitation from another session of the same key.
func TestTypeScriptClientFlowInput(t *testing.T) {
	t.Parallel()
	requireNode(t)
	ensureClientPackages(t)
	bin := buildServer(t)
	sl, slRec := fakeSlack(t)
	srv := startServer(t, bin, map[string]string{"SWITCHBOARD_SLACK_BASE_URL": sl.URL + "/api"})
	api := &apiClient{Base: srv.BaseURL, Key: srv.AdminKey}
	if status, body := api.Do(t, http.MethodPost, "/api/connections", map[string]string{"provider": "slack", "token": slackToken}); status != http.StatusCreated {
		t.Fatalf("connect slack: status %d, body %s", status, body)
	}
	src, err := os.ReadFile(filepath.Join(moduleRoot(t), "workflows", "testdata", "examples", "purchase_approval.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The fake Slack knows one channel: the approvers' channel is that one here.
	approval := strings.ReplaceAll(string(src), "C0APPROVE1", rig.SlackChannel)
	quick := strings.Replace(strings.Replace(approval, "name: purchase_approval", "name: quick_approval", 1), "timeout: 5m", "timeout: 1s", 1)
	for _, def := range []string{approval, quick} {
		if status, body := api.Do(t, http.MethodPost, "/api/workflows", map[string]string{"definition": def}); status != http.StatusCreated {
			t.Fatalf("save workflow: status %d, body %s", status, body)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := testproc.Command(ctx, "node", filepath.Join(clientDir(t), "flowinput.mjs"))
	cmd.Dir = clientDir(t)
	cmd.Env = append(os.Environ(), "MCP_URL="+srv.MCPURL, "KEY="+srv.AdminKey)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run flowinput.mjs: %v\nstderr:\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var sum struct {
		Accept    flowResult `json:"accept"`
		Asked     []string   `json:"asked"`
		Decline   flowResult `json:"decline"`
		Timeout   flowResult `json:"timeout"`
		Submitted *struct {
			Submit flowResult `json:"submit"`
			Query  flowResult `json:"query"`
		} `json:"submitted"`
		Replay *struct {
			Instance string     `json:"instance"`
			Replay   flowResult `json:"replay"`
			Query    flowResult `json:"query"`
		} `json:"replay"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil || sum.Error != "" {
		t.Fatalf("flowinput.mjs: %v %s\nstdout:\n%s\nstderr:\n%s", err, sum.Error, stdout.String(), stderr.String())
	}

	if a := sum.Accept; a.IsError || a.Structured.Status.State != "completed" || a.Structured.Output["approval_status"] != "approved" || a.Structured.Output["comments"] != "Approved" {
		t.Errorf("accepted: %+v", a)
	}
	if len(sum.Asked) != 1 || sum.Asked[0] != "Approve the purchase of Laptop for 899.5?" {
		t.Errorf("the form showed %q", sum.Asked)
	}
	if d := sum.Decline; !d.IsError || d.Structured.Status.State != "failed" || !strings.Contains(d.Text, "declined") {
		t.Errorf("declined: %+v", d)
	}
	to := sum.Timeout
	if to.IsError || to.Structured.Status.State != "input_required" || len(to.Structured.Elicitations) != 1 || !to.Structured.Elicitations[0].TimedOut ||
		!strings.Contains(to.Text, to.Structured.Elicitations[0].ID) {
		t.Fatalf("never answered: %+v", to)
	}
	if s := sum.Submitted; s == nil || s.Submit.IsError || s.Query.Structured.Status.State != "completed" ||
		s.Query.Structured.Output["approval_status"] != "rejected" || s.Query.Structured.Output["comments"] != "Too dear" {
		t.Errorf("submitted later: %+v", sum.Submitted)
	}
	if r := sum.Replay; r == nil || r.Replay.IsError || len(r.Replay.Structured.Answered) != 1 || r.Query.Structured.Status.State != "completed" ||
		r.Query.Structured.Output["comments"] != "Replayed" {
		t.Errorf("replayed: %+v", sum.Replay)
	}
	// Each run announced its request in the approvers' channel first (4 runs).
	posts := 0
	for _, r := range slRec.All() {
		if strings.HasSuffix(r.Path, "/chat.postMessage") && strings.Contains(r.Body, rig.SlackChannel) {
			posts++
		}
	}
	if posts != 4 {
		t.Errorf("Slack got %d announcements; want 4", posts)
	}
}
