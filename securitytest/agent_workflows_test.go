package securitytest

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// adminToken is the GitHub token of the admin's shared connection.
const adminToken = "ghp_AdminToken0123456789abcdefghijklmnopq"

// agentTenant is a tenant with an owner, an admin and a member, each with a key.
type agentTenant struct {
	slug                   string
	owner, admin, member   string // keys
	ownerID, adminID, mbID string
}

func (h *hub) agentTenant(slug string) agentTenant {
	h.t.Helper()
	ten, err := h.tenants.CreateTenant(context.Background(), slug, slug)
	if err != nil {
		h.t.Fatal(err)
	}
	at := agentTenant{slug: slug}
	at.ownerID, at.owner = h.user(ten.ID, "owner@"+slug+".test", switchboard.RoleOwner)
	at.adminID, at.admin = h.user(ten.ID, "admin@"+slug+".test", switchboard.RoleAdmin)
	at.mbID, at.member = h.user(ten.ID, "member@"+slug+".test", switchboard.RoleMember)
	return at
}

// connect makes a GitHub connection with the key's token and returns its id.
func (h *hub) connect(key, token string, shared bool) string {
	h.t.Helper()
	body, _ := json.Marshal(map[string]any{"provider": "github", "token": token, "shared": shared})
	var c struct{ ID string }
	h.want(key, http.MethodPost, "/api/connections", string(body), http.StatusCreated, &c)
	return c.ID
}

// agentWithKey makes an agent with the tools (tool → connection id, "" for a
// workflow) as the key's user, and a key of it; it returns the agent's id and key.
func (h *hub) agentWithKey(key, name string, tools [][2]string) (string, string) {
	h.t.Helper()
	body, _ := json.Marshal(map[string]any{"name": name, "tools": toolInputs(tools)})
	var a struct{ ID string }
	h.want(key, http.MethodPost, "/api/agents", string(body), http.StatusCreated, &a)
	var k struct{ Key string }
	h.want(key, http.MethodPost, "/api/agents/"+a.ID+"/keys", `{"name":"`+name+`"}`, http.StatusCreated, &k)
	return a.ID, k.Key
}

func toolInputs(tools [][2]string) []map[string]string {
	out := make([]map[string]string, 0, len(tools))
	for _, t := range tools {
		out = append(out, map[string]string{"tool": t[0], "connection_id": t[1]})
	}
	return out
}

// TestAgentKeyWorkflowsStayInItsSelection: the key of the owner's agent, whose agent
// holds three read tools on the owner's private GitHub connection, cannot save a
// workflow, and cannot run one (selected by its agent, or sent as a run's input) that
// creates a repository on an admin's shared connection and a gist on the owner's
// private one: every step of a workflow run by an agent's key is checked against its
// agent's tools, each on its bound connection. GitHub receives no POST. A workflow
// of the agent's own tools still runs for it.
func TestAgentKeyWorkflowsStayInItsSelection(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		h := newHub(t, db)
		at := h.agentTenant("h3-co")
		shared := h.connect(at.admin, adminToken, true)
		private := h.connect(at.owner, victimToken, false)
		agentID, agentKey := h.agentWithKey(at.owner, "reader", [][2]string{
			{"github_get_me", private}, {"github_list_issues", private}, {"github_get_issue", private}})

		escape := "name: escape\nsteps:\n" +
			"  - {name: repo, tool: github_create_repository, connection: " + shared + ", args: {name: h3-repo}}\n" +
			"  - {name: gist, tool: github_create_gist, connection: " + private + ", args: {files: [{filename: a.txt, content: x}]}}\n"
		for _, path := range []string{"/api/workflows", "/api/workflows/dry-run"} {
			status, _, b := h.do(agentKey, http.MethodPost, path, workflowBody(escape), nil)
			if status != http.StatusForbidden || !strings.Contains(string(b), agentRefusal) {
				t.Errorf("POST %s as the agent: %d %s; want 403 saying %q", path, status, b, agentRefusal)
			}
		}

		// The owner may save it (the admin's connection is shared), and selects it for
		// the agent: its steps are still outside the agent's tools.
		h.want(at.owner, http.MethodPost, "/api/workflows", workflowBody(escape), http.StatusCreated, nil)
		mine := "name: mine\nsteps:\n  - {name: me, tool: github_get_me, connection: " + private + "}\n"
		h.want(at.owner, http.MethodPost, "/api/workflows", workflowBody(mine), http.StatusCreated, nil)
		update, _ := json.Marshal(map[string]any{"name": "reader", "version": 1, "tools": toolInputs([][2]string{
			{"github_get_me", private}, {"github_list_issues", private}, {"github_get_issue", private},
			{"run_flow__escape", ""}, {"run_flow__mine", ""}})})
		h.want(at.owner, http.MethodPut, "/api/agents/"+agentID, string(update), http.StatusOK, nil)

		for _, path := range []string{"/api/workflows/escape/runs", "/api/workflows/escape/dry-run"} {
			status, _, b := h.do(agentKey, http.MethodPost, path, `{"parameters":{}}`, nil)
			if status != http.StatusBadRequest || !strings.Contains(string(b), "github_create_repository is not one of this agent's tools") ||
				!strings.Contains(string(b), "github_create_gist is not one of this agent's tools") {
				t.Errorf("POST %s as the agent: %d %s; want 400 naming both steps' tools as not the agent's", path, status, b)
			}
		}
		// Nor does a run or a call of the selected workflow tool whose input carries a
		// definition of the caller's: each runs the workflow as saved, with the input as
		// its parameters, and is refused for its steps as the workflow's route refuses it.
		crafted := map[string]any{"workflow": "escape", "version": 1, "params": map[string]any{},
			"definition": map[string]any{"name": "escape", "steps": []map[string]any{
				{"name": "repo", "tool": "github_create_repository", "connection": shared, "args": map[string]any{"name": "h3-repo"}},
				{"name": "gist", "tool": "github_create_gist", "connection": private, "args": map[string]any{"files": []map[string]string{{"filename": "a.txt", "content": "x"}}}},
			}}}
		asRun, _ := json.Marshal(map[string]any{"tool": "run_flow__escape", "arguments": crafted})
		asCall, _ := json.Marshal(map[string]any{"arguments": crafted})
		if status, _, b := h.do(agentKey, http.MethodPost, "/api/runs", string(asRun), nil); status != http.StatusBadRequest ||
			!strings.Contains(string(b), "github_create_repository is not one of this agent's tools") || !strings.Contains(string(b), "github_create_gist is not one of this agent's tools") {
			t.Errorf("POST /api/runs of run_flow__escape with the agent's own definition: %d %s; want 400 naming both steps' tools as not the agent's", status, b)
		}
		if status, _, b := h.do(agentKey, http.MethodPost, "/api/tools/run_flow__escape/call", string(asCall), nil); status != http.StatusBadRequest ||
			!strings.Contains(string(b), "github_create_repository is not one of this agent's tools") || !strings.Contains(string(b), "github_create_gist is not one of this agent's tools") {
			t.Errorf("POST /api/tools/run_flow__escape/call with the agent's own definition: %d %s; want 400 naming both steps' tools as not the agent's", status, b)
		}

		// The agent's own tools still run through a workflow it selected.
		var run struct {
			ID string `json:"run_id"`
		}
		h.want(agentKey, http.MethodPost, "/api/workflows/mine/runs", `{"parameters":{}}`, http.StatusAccepted, &run)
		if state := h.settle(agentKey, "/api/runs/"+run.ID); state != "completed" {
			t.Errorf("the agent's run of workflow mine: %s, want completed", state)
		}
		gets := h.github.received(http.MethodGet)
		if len(gets) == 0 || gets[len(gets)-1].Path != "/user" || gets[len(gets)-1].Authorization != "Bearer "+victimToken {
			t.Errorf("GitHub's GET requests: %+v; want the run's GET /user with the owner's token last", gets)
		}
		if posts := h.github.received(http.MethodPost); len(posts) != 0 {
			t.Errorf("GitHub received POSTs: %+v; want none", posts)
		}
	})
}

// TestAgentKeyManagesNoMemberWorkflow: the key of the owner's agent neither replaces
// the webhook secret of a member's triggered workflow, nor replaces or deletes the
// workflow: each is a 403 saying an agent's key cannot, and the workflow, its version
// and its secret are the member's as before (a delivery signed with the agent's
// secret is refused, one signed with the member's is taken).
func TestAgentKeyManagesNoMemberWorkflow(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		h := newHub(t, db)
		at := h.agentTenant("m1-co")
		memberConn := h.connect(at.member, "ghp_MemberToken0123456789abcdefghijklmno", false)
		flow := "name: member_flow\ntriggers:\n  - github: {events: [issues]}\nsteps:\n  - {name: me, tool: github_get_me, connection: " + memberConn + "}\n"
		h.want(at.member, http.MethodPost, "/api/workflows", workflowBody(flow), http.StatusCreated, nil)
		const memberSecret, agentSecret = "member-secret-0123456789", "agent-secret-0123456789"
		h.want(at.member, http.MethodPut, "/api/workflows/member_flow/webhooks/github", `{"secret":"`+memberSecret+`"}`, http.StatusOK, nil)
		ownerConn := h.connect(at.owner, victimToken, false)
		_, agentKey := h.agentWithKey(at.owner, "owner-agent", [][2]string{{"github_get_me", ownerConn}})

		replaced := "name: member_flow\ntriggers:\n  - github: {events: [issues]}\nsteps:\n  - {name: me, tool: github_get_me, connection: " + ownerConn + "}\n"
		overwrite, _ := json.Marshal(map[string]any{"definition": replaced, "overwrite": true})
		tries := []struct{ method, path, body string }{
			{http.MethodPut, "/api/workflows/member_flow/webhooks/github", `{"secret":"` + agentSecret + `"}`},
			{http.MethodPut, "/api/workflows/member_flow", workflowBody(replaced)},
			{http.MethodPost, "/api/workflows", string(overwrite)},
			{http.MethodDelete, "/api/workflows/member_flow", ""},
		}
		for _, tr := range tries {
			status, _, b := h.do(agentKey, tr.method, tr.path, tr.body, nil)
			if status != http.StatusForbidden || !strings.Contains(string(b), agentRefusal) {
				t.Errorf("%s %s as the owner's agent: %d %s; want 403 saying %q", tr.method, tr.path, status, b, agentRefusal)
			}
		}
		var w struct {
			Version   int64  `json:"version"`
			UpdatedBy string `json:"updated_by"`
		}
		h.want(at.member, http.MethodGet, "/api/workflows/member_flow", "", http.StatusOK, &w)
		if w.Version != 1 || w.UpdatedBy != "user:"+at.mbID {
			t.Errorf("the member's workflow after the agent's tries: %+v; want version 1, updated by the member", w)
		}
		ping := func(secret string) int {
			return h.githubPing(at.slug, "member_flow", secret, "72d3162e-cc78-11e3-81ab-4c9367dc0958")
		}
		if got := ping(agentSecret); got != http.StatusUnauthorized {
			t.Errorf("a delivery signed with the agent's secret: %d, want 401", got)
		}
		if got := ping(memberSecret); got != http.StatusOK {
			t.Errorf("a delivery signed with the member's secret: %d, want 200", got)
		}
	})
}

// TestAdminSetsNoMemberWebhookSecret: an admin's key (the owner's too) does not replace
// the webhook secret of a member's triggered workflow, which runs as the member: a
// delivery signed with the admin's secret would otherwise run it with the member's
// token and the sender's parameters. Saving the workflow again takes it over (it then
// runs as the admin), which the admin may.
func TestAdminSetsNoMemberWebhookSecret(t *testing.T) {
	t.Parallel()
	h := newHub(t, testdb.SQLite(t))
	at := h.agentTenant("m1-admin-co")
	memberConn := h.connect(at.member, "ghp_MemberToken0123456789abcdefghijklmno", false)
	flow := "name: member_flow\ntriggers:\n  - github: {events: [issues]}\nsteps:\n  - {name: me, tool: github_get_me, connection: " + memberConn + "}\n"
	h.want(at.member, http.MethodPost, "/api/workflows", workflowBody(flow), http.StatusCreated, nil)
	const memberSecret, adminSecret = "member-secret-0123456789", "admin-secret-0123456789"
	h.want(at.member, http.MethodPut, "/api/workflows/member_flow/webhooks/github", `{"secret":"`+memberSecret+`"}`, http.StatusOK, nil)
	for _, key := range []string{at.admin, at.owner} {
		status, _, b := h.do(key, http.MethodPut, "/api/workflows/member_flow/webhooks/github", `{"secret":"`+adminSecret+`"}`, nil)
		if status != http.StatusForbidden || !strings.Contains(string(b), "only they may set its webhook secret") {
			t.Errorf("an admin sets the member's webhook secret: %d %s; want 403", status, b)
		}
	}
	ping := func(secret string) int {
		return h.githubPing(at.slug, "member_flow", secret, "72d3162e-cc78-11e3-81ab-4c9367dc0959")
	}
	if got := ping(adminSecret); got != http.StatusUnauthorized {
		t.Errorf("a delivery signed with the admin's secret: %d, want 401", got)
	}
	if got := ping(memberSecret); got != http.StatusOK {
		t.Errorf("a delivery signed with the member's secret: %d, want 200", got)
	}
}

// githubPing delivers GitHub's ping event to a workflow's webhook URL, signed with
// secret, and returns the status it got.
func (h *hub) githubPing(slug, workflow, secret, delivery string) int {
	h.t.Helper()
	body := `{"zen":"Keep it logically awesome.","hook_id":1}`
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	status, _, _ := h.do("", http.MethodPost, "/hooks/workflows/"+slug+"/"+workflow+"/github", body, map[string]string{
		"X-GitHub-Event": "ping", "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": "sha256=" + hex.EncodeToString(mac.Sum(nil))})
	return status
}
