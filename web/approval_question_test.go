package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/web"
)

// fakeQuestions is fakeApprovals whose run waits for a workflow step's question, and
// takes answers to it as the run's workflow does: a decision from the schema's enum.
type fakeQuestions struct {
	fakeApprovals
	inputs []string
}

func (f *fakeQuestions) AnswerInput(ctx context.Context, p switchboard.Principal, id, eid, action string, content map[string]any) error {
	if _, err := f.Approval(ctx, p, id); err != nil {
		return err
	}
	if d, _ := content["approval_status"].(string); action == "accept" && d != "approved" && d != "rejected" {
		return switchboard.Invalid("response.content.approval_status", "must be one of approved, rejected")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inputs = append(f.inputs, fmt.Sprintf("%s %s %s %s %v", p.UserID, id, eid, action, content))
	f.run.State, f.run.Question = "working", nil
	return nil
}

// TestApprovalPageAnswersAFlowsQuestion: a workflow run that waits for its step's
// question shows the question's form on its approval page (a labeled field per
// property, a choice for an enum, required ones marked), and the form's answer goes to
// the question typed by the schema; a refused answer names the field and changes
// nothing; decline answers without content.
func TestApprovalPageAnswersAFlowsQuestion(t *testing.T) {
	t.Parallel()
	acc := newFakeAccounts()
	ap := &fakeQuestions{fakeApprovals: fakeApprovals{run: web.Approval{RunID: "run_wait", Tool: "run_flow__purchase_approval", Requester: "alice@acme.test",
		Message: "step approval asks its person for input", State: "input_required",
		Question: &web.Question{ElicitationID: "wfs_1", Step: "approval", Fields: []web.Field{
			{Name: "amount", Title: "Amount", Type: "number"},
			{Name: "approval_status", Title: "Decision", Type: "string", Enum: []string{"approved", "rejected"}, Required: true},
			{Name: "comments", Title: "Comments", Type: "string", Required: true},
			{Name: "urgent", Title: "Urgent", Type: "boolean"},
		}}}}}
	h, err := web.Handler(web.Options{PublicURL: "https://hub.test", DefaultTenant: "acme", Accounts: acc, Approvals: ap})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := client(nil)
	token := acc.session(t)
	csrf := acc.CSRFToken(token)
	res, body := do(t, c, http.MethodGet, srv.URL+"/approvals/run_wait", nil, sessionCookie(token))
	for _, want := range []string{`<label for="field-approval_status">Decision (required)</label>`, `<select id="field-approval_status" name="approval_status" required`,
		`<option value="rejected">rejected</option>`, `<label for="field-comments">Comments (required)</label>`, `<input id="field-comments" name="comments" type="text" required`,
		`<input id="field-amount" name="amount" type="number" step="any"`, `<input id="field-urgent" name="urgent" type="checkbox"`, `name="elicitation_id" value="wfs_1"`,
		`value="accept">Send the answer</button>`, `step <code>approval</code>`} {
		if res.StatusCode != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("question page: %d, does not show %q", res.StatusCode, want)
		}
	}
	if strings.Contains(body, "Approve and run it") {
		t.Errorf("the question page offers a confirmation's buttons")
	}
	form := url.Values{"csrf": {csrf}, "elicitation_id": {"wfs_1"}, "action": {"accept"}, "approval_status": {"maybe"}, "comments": {"hm"}}
	res, body = do(t, c, http.MethodPost, srv.URL+"/approvals/run_wait", form, sessionCookie(token))
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "approval_status: must be one of approved, rejected") ||
		!strings.Contains(body, `name="approval_status" required aria-invalid="true"`) {
		t.Errorf("an answer off the schema: %d\n%s", res.StatusCode, body)
	}
	form.Set("amount", "12x")
	if res, _ := do(t, c, http.MethodPost, srv.URL+"/approvals/run_wait", form, sessionCookie(token)); res.StatusCode != http.StatusBadRequest {
		t.Errorf("a number that is none: %d, want 400", res.StatusCode)
	}
	if len(ap.inputs) != 0 {
		t.Fatalf("refused answers were given: %v", ap.inputs)
	}
	form.Set("approval_status", "approved")
	form.Set("amount", "1200.5")
	form.Set("urgent", "on")
	res, _ = do(t, c, http.MethodPost, srv.URL+"/approvals/run_wait", form, sessionCookie(token))
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/approvals/run_wait" {
		t.Errorf("answer: %d to %q, want 303 back to the page", res.StatusCode, res.Header.Get("Location"))
	}
	if want := "usr_alice run_wait wfs_1 accept map[amount:1200.5 approval_status:approved comments:hm urgent:true]"; len(ap.inputs) != 1 || ap.inputs[0] != want {
		t.Errorf("answers = %q; want %q", ap.inputs, want)
	}
	// Another person reaches no question.
	other := "sbs_bob"
	acc.mu.Lock()
	acc.sessions[other] = switchboard.Principal{TenantID: "ten_acme", TenantSlug: "acme", Kind: switchboard.PrincipalUser, UserID: "usr_bob", Role: switchboard.RoleMember}
	acc.mu.Unlock()
	res, _ = do(t, c, http.MethodPost, srv.URL+"/approvals/run_wait", url.Values{"csrf": {acc.CSRFToken(other)}, "elicitation_id": {"wfs_1"}, "action": {"decline"}}, sessionCookie(other))
	if res.StatusCode != http.StatusNotFound || len(ap.inputs) != 1 {
		t.Errorf("another person's answer: %d, answers %q", res.StatusCode, ap.inputs)
	}
}
