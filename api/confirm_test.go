package api_test

import (
	"net/http"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/runs"
)

// TestConfirmPolicyOverREST: an agent under confirm "destructive" cannot run a
// destructive tool through the REST API without a person's confirmation: the direct
// call is refused (confirmation_required) and a run waits input_required; nothing
// reaches GitHub. Its read-only tool runs as before.
func TestConfirmPolicyOverREST(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		conn := w.connect(w.admin, goodToken, true)
		var created agentBody
		w.want(w.admin, http.MethodPost, "/api/agents", agentJSON(t, map[string]any{
			"name": "Careful", "confirm": "destructive",
			"tools": []map[string]string{{"tool": "github_get_issue", "connection_id": conn}, {"tool": "github_update_issue", "connection_id": conn}},
		}), http.StatusCreated, &created)
		var key struct {
			Key string `json:"key"`
		}
		w.want(w.admin, http.MethodPost, "/api/agents/"+created.ID+"/keys", `{"name":"careful"}`, http.StatusCreated, &key)
		agentKey := actor{key: key.Key, userID: w.admin.userID, tenant: w.a.ID}
		update := `{"owner":"octo-org","repo":"hello","issue_number":7,"state":"closed"}`

		status, b := w.do(agentKey, http.MethodPost, "/api/tools/github_update_issue/call", `{"arguments":`+update+`}`)
		if e := decodeError(t, b); status != http.StatusConflict || e.Error.Code != "confirmation_required" || !strings.Contains(e.Error.Message, "POST /api/runs") {
			t.Errorf("direct call: %d %s, want 409 confirmation_required naming POST /api/runs", status, b)
		}
		var run runs.View
		w.want(agentKey, http.MethodPost, "/api/runs", `{"tool":"github_update_issue","arguments":`+update+`}`, http.StatusAccepted, &run)
		if run.State != runs.StateInputRequired || run.Elicitation == nil || !strings.Contains(run.Elicitation.Message, "Update issue") || run.ApprovalURL != "https://hub.example.com/approvals/"+run.ID {
			t.Errorf("run = %+v, want input_required with its confirmation", run)
		}
		w.want(agentKey, http.MethodPost, "/api/tools/github_get_issue/call", `{"arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}`, http.StatusOK, nil)
		for _, r := range w.github.requests() {
			if strings.HasPrefix(r, "PATCH ") {
				t.Errorf("GitHub got %q before anyone confirmed", r)
			}
		}
	})
}

// TestApprovalSetting: the tenant's approval mode is relay unless set, only relay or
// person is accepted, and an agent inherits it unless it sets its own.
func TestApprovalSetting(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		var st struct {
			Approval string `json:"approval"`
		}
		w.want(w.admin, http.MethodGet, "/api/mcp-settings", "", http.StatusOK, &st)
		if st.Approval != "relay" {
			t.Errorf("default approval = %q, want relay", st.Approval)
		}
		status, b := w.do(w.admin, http.MethodPut, "/api/mcp-settings", `{"confirm":"destructive","approval":"robot","tool_mode":"all"}`)
		if e := decodeError(t, b); status != http.StatusBadRequest || e.Error.Field != "approval" {
			t.Errorf("approval robot: %d %s, want 400 on field approval", status, b)
		}
		w.want(w.admin, http.MethodPut, "/api/mcp-settings", `{"confirm":"destructive","approval":"person","tool_mode":"all"}`, http.StatusOK, &st)
		if st.Approval != "person" {
			t.Errorf("approval after the change = %q", st.Approval)
		}
		tests := []struct {
			name, approval, want string
		}{
			{name: "inherits", approval: "", want: "person"},
			{name: "its own", approval: "relay", want: "relay"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var a struct {
					Approval          string `json:"approval"`
					EffectiveApproval string `json:"effective_approval"`
				}
				w.want(w.admin, http.MethodPost, "/api/agents", agentJSON(t, map[string]any{"name": "Agent " + tt.name, "approval": tt.approval}), http.StatusCreated, &a)
				if a.Approval != tt.approval || a.EffectiveApproval != tt.want {
					t.Errorf("agent approval = %q/%q, want %q/%q", a.Approval, a.EffectiveApproval, tt.approval, tt.want)
				}
			})
		}
		status, b = w.do(w.admin, http.MethodPost, "/api/agents", agentJSON(t, map[string]any{"name": "Bad", "approval": "nobody"}))
		if e := decodeError(t, b); status != http.StatusBadRequest || e.Error.Field != "approval" {
			t.Errorf("agent approval nobody: %d %s, want 400 on field approval", status, b)
		}
	})
}

// TestCallCheck: a call made with check runs nothing and says whether it would be
// taken and whether a person must confirm it first: an update that changes nothing is
// refused naming the arguments (before anyone could be asked), a real one is taken, on
// the account's label, needing a confirmation under confirm "destructive"; GitHub hears
// of neither.
func TestCallCheck(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		conn := w.connect(w.admin, goodToken, true)
		var created agentBody
		w.want(w.admin, http.MethodPost, "/api/agents", agentJSON(t, map[string]any{
			"name": "Careful", "confirm": "destructive",
			"tools": []map[string]string{{"tool": "github_update_issue", "connection_id": conn}},
		}), http.StatusCreated, &created)
		var key struct {
			Key string `json:"key"`
		}
		w.want(w.admin, http.MethodPost, "/api/agents/"+created.ID+"/keys", `{"name":"careful"}`, http.StatusCreated, &key)
		agentKey := actor{key: key.Key, userID: w.admin.userID, tenant: w.a.ID}

		status, b := w.do(agentKey, http.MethodPost, "/api/tools/github_update_issue/call", `{"check":true,"arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}`)
		if e := decodeError(t, b); status != http.StatusBadRequest || e.Error.Code != "invalid" || !strings.Contains(e.Error.Message, "at least one field to change") {
			t.Errorf("check of an update that changes nothing: %d %s, want 400 invalid", status, b)
		}
		var got struct {
			Tool              string `json:"tool"`
			ConnectionID      string `json:"connection_id"`
			Account           string `json:"account"`
			NeedsConfirmation bool   `json:"needs_confirmation"`
		}
		w.want(agentKey, http.MethodPost, "/api/tools/github_update_issue/call", `{"check":true,"arguments":{"owner":"octo-org","repo":"hello","issue_number":7,"state":"closed"}}`, http.StatusOK, &got)
		if got.ConnectionID != conn || got.Account == "" || strings.HasPrefix(got.Account, "con_") || !got.NeedsConfirmation {
			t.Errorf("check of a real update = %+v, want taken on %s by its label, needing a confirmation", got, conn)
		}
		for _, r := range w.github.requests() {
			if strings.HasPrefix(r, "PATCH ") {
				t.Errorf("a check reached GitHub: %q", r)
			}
		}
	})
}
