package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/runs"
)

// TestWorkflowsAPIForTheEditor: what the workflow pages read besides the CRUD. A
// refused definition outlines its steps beside the problems; the list says each
// workflow's triggers and last run; a run's steps carry their tool, attempts and
// input; graph.svg draws the steps, coloured by a run's states, and answers another
// tenant 404.
func TestWorkflowsAPIForTheEditor(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		w.connect(w.admin, goodToken, false)
		w.connectSlack(w.admin, slackMemberToken, false)
		def := issueToSlack + "triggers:\n  - schedule: \"0 9 * * 1\"\n    params: {number: 7, channel: C0123ABCD}\n  - github: {events: [issues]}\n"

		bad, _ := json.Marshal(map[string]any{"definition": strings.Replace(def, "issue_number:", "issue_numbr:", 1)})
		status, body := w.do(w.admin, http.MethodPost, "/api/workflows/dry-run", string(bad))
		var refused struct {
			Problems []struct{ Step, Field string } `json:"problems"`
			Steps    []struct {
				Name  string   `json:"name"`
				Tool  string   `json:"tool"`
				Needs []string `json:"needs"`
			} `json:"steps"`
		}
		_ = json.Unmarshal(body, &refused)
		if status != http.StatusBadRequest || len(refused.Problems) == 0 || refused.Problems[0].Step != "issue" ||
			len(refused.Steps) != 2 || refused.Steps[1].Name != "post" || refused.Steps[1].Tool != "slack_post_message" || len(refused.Steps[1].Needs) != 1 {
			t.Fatalf("a refused dry run answered %d %s; want the problems and the outline of both steps", status, body)
		}

		good, _ := json.Marshal(map[string]any{"definition": def})
		w.want(w.admin, http.MethodPost, "/api/workflows", string(good), http.StatusCreated, nil)
		var list struct {
			Workflows []struct {
				Name     string     `json:"name"`
				Triggers []string   `json:"triggers"`
				LastRun  *runs.View `json:"last_run"`
			} `json:"workflows"`
		}
		w.want(w.admin, http.MethodGet, "/api/workflows", "", http.StatusOK, &list)
		if len(list.Workflows) != 1 || strings.Join(list.Workflows[0].Triggers, "|") != "schedule 0 9 * * 1|github issues" || list.Workflows[0].LastRun != nil {
			t.Fatalf("list before a run: %+v", list)
		}

		var started runs.View
		w.want(w.admin, http.MethodPost, "/api/workflows/issue_to_slack/runs", `{"parameters":{"number":7,"channel":"C0123ABCD"}}`, http.StatusAccepted, &started)
		admin := switchboard.Principal{TenantID: w.a.ID, Kind: switchboard.PrincipalUser, UserID: w.admin.userID}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if v, err := w.runs.Wait(ctx, admin, started.ID, 20*time.Millisecond); err != nil || v.State != runs.StateCompleted {
			t.Fatalf("run ended %+v, %v", v, err)
		}
		w.want(w.admin, http.MethodGet, "/api/workflows", "", http.StatusOK, &list)
		if lr := list.Workflows[0].LastRun; lr == nil || lr.ID != started.ID || lr.State != runs.StateCompleted {
			t.Fatalf("list after a run: last run %+v, want %s completed", lr, started.ID)
		}

		var st struct {
			Workflow string `json:"workflow"`
			Steps    []struct {
				StepName string         `json:"step_name"`
				Tool     string         `json:"tool"`
				Attempts int            `json:"attempts"`
				Input    map[string]any `json:"input"`
				Output   map[string]any `json:"output"`
			} `json:"step_results"`
		}
		raw := w.want(w.admin, http.MethodGet, "/api/workflow-runs/"+started.ID, "", http.StatusOK, &st)
		if st.Workflow != "issue_to_slack" || len(st.Steps) != 2 || st.Steps[0].StepName != "issue" || st.Steps[0].Tool != "github_get_issue" || st.Steps[0].Attempts != 1 ||
			st.Steps[0].Input["issue_number"] != float64(7) || st.Steps[0].Output["title"] != "Try it works" || st.Steps[1].Input["channel"] != "C0123ABCD" {
			t.Fatalf("run status %s", raw)
		}
		for _, secret := range []string{goodToken, slackMemberToken} {
			if strings.Contains(string(raw), secret) {
				t.Fatalf("the run status holds a token: %s", raw)
			}
		}

		req, _ := http.NewRequest(http.MethodGet, w.srv.URL+"/api/workflows/issue_to_slack/graph.svg?run="+started.ID, nil)
		req.Header.Set("Authorization", "Bearer "+w.admin.key)
		res, err := w.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		svg := string(b)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(res.Header.Get("Content-Security-Policy"), "sandbox") ||
			!strings.Contains(svg, `data-from="issue" data-to="post"`) || !strings.Contains(svg, "completed") {
			t.Fatalf("graph.svg: %d %q %q\n%s", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Content-Security-Policy"), svg)
		}
		w.want(w.admin, http.MethodGet, "/api/workflows/issue_to_slack/graph.svg?run=run_nope", "", http.StatusNotFound, nil)
		w.want(w.ownerB, http.MethodGet, "/api/workflows/issue_to_slack/graph.svg", "", http.StatusNotFound, nil)
	})
}

// TestWorkflowDraftGraph: POST /api/workflows/graph.svg draws a definition that is not
// saved, problems and all (an unknown tool, a need naming no step), escaping its text;
// one that does not parse is refused with its problems, and nothing is saved.
func TestWorkflowDraftGraph(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		draft := "name: draft\nsteps:\n  - name: first\n    tool: nope_<b>\n  - name: second\n    tool: github_get_issue\n    needs: [first, ghost]\n"
		body, _ := json.Marshal(map[string]any{"definition": draft})
		req, _ := http.NewRequest(http.MethodPost, w.srv.URL+"/api/workflows/graph.svg", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+w.member.key)
		req.Header.Set("Content-Type", "application/json")
		res, err := w.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		svg := string(b)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(svg, `data-from="first" data-to="second"`) ||
			!strings.Contains(svg, "nope_&lt;b&gt;") || strings.Contains(svg, "<b>") || strings.Contains(svg, "ghost") {
			t.Fatalf("the draft's graph: %d %q\n%s", res.StatusCode, res.Header.Get("Content-Type"), svg)
		}
		bad, _ := json.Marshal(map[string]any{"definition": "name: draft\nsteps: [\n"})
		status, out := w.do(w.member, http.MethodPost, "/api/workflows/graph.svg", string(bad))
		if status != http.StatusBadRequest || !strings.Contains(string(out), `"problems"`) {
			t.Fatalf("a definition that does not parse: %d %s", status, out)
		}
		w.want(w.member, http.MethodGet, "/api/workflows/draft", "", http.StatusNotFound, nil)
	})
}
