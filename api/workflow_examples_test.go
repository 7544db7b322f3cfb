package api_test

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestExampleWorkflows: the example workflows the guide shows (the orchestrator
// specification's ci_pipeline and the flow specification's purchase_approval) save
// and run against the fake GitHub and Slack: ci_pipeline with run_workflow and the
// specification's arguments re-runs the branch's failed run and tells the channel;
// purchase_approval's run_flow__ tool waits for its approver's answer, which
// submit_flow_elicitation gives, and query_flow__ then answers the typed output.
func TestExampleWorkflows(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		w.connect(w.admin, goodToken, false)
		w.connectSlack(w.admin, slackMemberToken, false)
		for _, name := range []string{"ci_pipeline", "purchase_approval"} {
			src, err := os.ReadFile("../workflows/testdata/examples/" + name + ".yaml")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(map[string]any{"definition": string(src)})
			w.want(w.admin, http.MethodPost, "/api/workflows", string(body), http.StatusCreated, nil)
		}

		var ran struct {
			Result struct {
				Structured struct {
					Status        string         `json:"status"`
					Outputs       map[string]any `json:"outputs"`
					StepsTotal    int            `json:"steps_total"`
					ExecutionTime *float64       `json:"execution_time"`
				} `json:"structuredContent"`
			} `json:"result"`
		}
		w.want(w.admin, http.MethodPost, "/api/tools/run_workflow/call",
			`{"arguments":{"workflow_name":"ci_pipeline","parameters":{"branch":"main","run_tests":true,"deploy_target":"staging"},"timeout":1800}}`, http.StatusOK, &ran)
		if ran.Result.Structured.Status != "success" || ran.Result.Structured.StepsTotal != 3 || ran.Result.Structured.ExecutionTime == nil ||
			cmp.Diff(map[string]any{"run_id": float64(30433642), "conclusion": "failure"}, ran.Result.Structured.Outputs) != "" {
			t.Fatalf("ci_pipeline = %+v", ran.Result)
		}
		gh := w.github.requests()
		for _, want := range []string{"GET /repos/octo-org/hello/actions/runs Bearer " + goodToken, "POST /repos/octo-org/hello/actions/runs/30433642/rerun Bearer " + goodToken} {
			if !slices.Contains(gh, want) {
				t.Errorf("GitHub did not receive %q: %v", want, gh)
			}
		}

		type flowAnswer struct {
			Result struct {
				Structured struct {
					Output map[string]any `json:"output"`
					Status struct {
						InstanceID string `json:"instance_id"`
						Name       string `json:"name"`
						State      string `json:"state"`
					} `json:"status"`
					Elicitations []struct {
						ID      string `json:"elicitation_id"`
						Message string `json:"message"`
					} `json:"elicitations"`
				} `json:"structuredContent"`
			} `json:"result"`
		}
		// REST has no form to show: the flow waits for its approver's answer, which
		// submit_flow_elicitation gives.
		var flow flowAnswer
		w.want(w.admin, http.MethodPost, "/api/tools/run_flow__purchase_approval/call",
			`{"arguments":{"item":"Laptop","amount":899.5,"justification":"Old one broke","_context":{"thread_id":"th_1","environment_id":"live"}}}`, http.StatusOK, &flow)
		asked := flow.Result.Structured
		if asked.Status.State != "input_required" || asked.Status.Name != "purchase_approval" || len(asked.Elicitations) != 1 || asked.Elicitations[0].Message != "Approve the purchase of Laptop for 899.5?" {
			t.Fatalf("purchase_approval = %+v", flow.Result)
		}
		submit, _ := json.Marshal(map[string]any{"arguments": map[string]any{"instance_id": asked.Status.InstanceID, "elicitation_id": asked.Elicitations[0].ID,
			"response": map[string]any{"action": "accept", "content": map[string]any{"approval_status": "approved", "comments": "Approved"}}}})
		w.want(w.admin, http.MethodPost, "/api/tools/submit_flow_elicitation/call", string(submit), http.StatusOK, nil)
		query := `{"arguments":{"instance_id":"` + asked.Status.InstanceID + `"}}`
		testwait.Until(t, "purchase_approval completes", func() bool {
			flow = flowAnswer{}
			w.want(w.admin, http.MethodPost, "/api/tools/query_flow__purchase_approval/call", query, http.StatusOK, &flow)
			return flow.Result.Structured.Status.State == "completed"
		})
		if cmp.Diff(map[string]any{"approval_status": "approved", "approver": "the requester's approver", "comments": "Approved"}, flow.Result.Structured.Output) != "" {
			t.Fatalf("purchase_approval = %+v", flow.Result)
		}
		posted := strings.Join(w.slack.messages(), "\n")
		for _, want := range []string{"C0DEPLOYS1 CI on main before deploying to staging: last run failure", "C0APPROVE1 Purchase request: Laptop for 899.5"} {
			if !strings.Contains(posted, want) {
				t.Errorf("Slack did not receive %q: %s", want, posted)
			}
		}
	})
}
