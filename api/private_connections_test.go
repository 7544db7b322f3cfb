package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

const getIssue7 = `{"arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}`

// createAgent creates an agent as who with the tools (tool, connection id pairs) and
// returns it.
func (w *world) createAgent(who actor, name string, tools ...[2]string) agentBody {
	w.t.Helper()
	var a agentBody
	w.want(who, http.MethodPost, "/api/agents", agentJSON(w.t, map[string]any{"name": name, "tools": toolList(tools)}), http.StatusCreated, &a)
	return a
}

// putAgent replaces the agent's name and tools as who and returns the status and body.
func (w *world) putAgent(who actor, a agentBody, name string, tools ...[2]string) (int, []byte) {
	w.t.Helper()
	return w.do(who, http.MethodPut, "/api/agents/"+a.ID, agentJSON(w.t, map[string]any{"name": name, "version": a.Version, "tools": toolList(tools)}))
}

func toolList(tools [][2]string) []map[string]string {
	out := []map[string]string{}
	for _, t := range tools {
		out = append(out, map[string]string{"tool": t[0], "connection_id": t[1]})
	}
	return out
}

// agentKey creates a key for the agent as who.
func (w *world) agentKey(who actor, agentID string) actor {
	w.t.Helper()
	var k struct {
		Key string `json:"key"`
	}
	w.want(who, http.MethodPost, "/api/agents/"+agentID+"/keys", `{"name":"bot"}`, http.StatusCreated, &k)
	return actor{key: k.Key, tenant: who.tenant}
}

// githubCalls counts the fake GitHub's requests for issue 7 with the token.
func (w *world) githubCalls(token string) int {
	return len(slices.DeleteFunc(w.github.requests(), func(r string) bool {
		return r != "GET /repos/octo-org/hello/issues/7 Bearer "+token
	}))
}

// TestAdminCannotActThroughPrivateConnections covers an attack and its
// variants: an admin binding the owner's private GitHub connection to the owner's agent
// and taking a key for it; an admin editing an agent already bound to it; an admin's
// key (made before or after) for a member's agent bound to the member's private Slack.
// The private connection runs only for its owner's keys and agents its owner saved last.
func TestAdminCannotActThroughPrivateConnections(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		owner := w.admin // the tenant's owner
		admin := w.newUser(w.a.ID, "admin@a.test", switchboard.RoleAdmin)
		private := w.connect(owner, goodToken, false)
		shared := w.connect(admin, otherToken, true)

		// The exact attack: the admin binds the owner's private connection to the
		// owner's agent. Refused, naming the field, and nothing changes.
		plain := w.createAgent(owner, "Owner's helper", [2]string{"github_get_issue", shared})
		status, b := w.putAgent(admin, plain, "Owner's helper", [2]string{"github_create_issue", private})
		if e := decodeError(t, b); status != http.StatusBadRequest || e.Error.Field != "tools[0].connection_id" || !strings.Contains(e.Error.Message, "private connection") {
			t.Errorf("admin binding the owner's private connection: %d %s", status, b)
		}
		var unchanged agentBody
		w.want(owner, http.MethodGet, "/api/agents/"+plain.ID, "", http.StatusOK, &unchanged)
		if unchanged.Version != plain.Version || len(unchanged.Tools) != 1 || unchanged.Tools[0].ConnectionID != shared {
			t.Errorf("the refused edit changed the agent: %+v", unchanged)
		}

		// The owner's own agent on the private connection, with the owner's key, runs.
		bound := w.createAgent(owner, "Triage", [2]string{"github_get_issue", private}, [2]string{"github_list_issue_comments", shared})
		ownersKey := w.agentKey(owner, bound.ID)
		w.want(ownersKey, http.MethodPost, "/api/tools/github_get_issue/call", getIssue7, http.StatusOK, nil)
		if got := w.githubCalls(goodToken); got != 1 {
			t.Fatalf("GitHub saw %d calls with the owner's token, want 1", got)
		}

		// An admin gets no key for it.
		status, b = w.do(admin, http.MethodPost, "/api/agents/"+bound.ID+"/keys", `{"name":"mine now"}`)
		if e := decodeError(t, b); status != http.StatusForbidden || !strings.Contains(e.Error.Message, "github_get_issue") {
			t.Errorf("admin creating a key for the owner's agent: %d %s", status, b)
		}

		// An admin may still edit the agent (rename it), keeping the binding, but the
		// binding stops running: the owner did not save the agent last.
		status, b = w.putAgent(admin, bound, "Triage (renamed)", [2]string{"github_get_issue", private}, [2]string{"github_list_issue_comments", shared})
		if status != http.StatusOK {
			t.Fatalf("admin renaming the owner's agent: %d %s", status, b)
		}
		var renamed agentBody
		w.want(owner, http.MethodGet, "/api/agents/"+bound.ID, "", http.StatusOK, &renamed)
		if renamed.UpdatedBy != admin.userID || renamed.CreatedBy != owner.userID {
			t.Errorf("after the admin's edit: created_by %q updated_by %q, want %q and %q", renamed.CreatedBy, renamed.UpdatedBy, owner.userID, admin.userID)
		}
		status, b = w.do(ownersKey, http.MethodPost, "/api/tools/github_get_issue/call", getIssue7)
		if e := decodeError(t, b); status != http.StatusForbidden || !strings.Contains(e.Error.Message, "private connection") {
			t.Errorf("the agent's call after the admin's edit: %d %s", status, b)
		}
		if got := w.githubCalls(goodToken); got != 1 {
			t.Errorf("GitHub saw %d calls with the owner's token, want still 1", got)
		}
		// Its private tool is no longer listed for the agent; the shared one is.
		var listed struct {
			Tools []struct {
				Tool        string `json:"tool"`
				Connections []struct {
					ID string `json:"id"`
				} `json:"connections"`
			} `json:"tools"`
		}
		w.want(ownersKey, http.MethodGet, "/api/tools", "", http.StatusOK, &listed)
		var onConnections []string // the run tools, which every caller has, run on none
		for _, tl := range listed.Tools {
			if len(tl.Connections) > 0 {
				onConnections = append(onConnections, tl.Tool)
			}
		}
		if len(onConnections) != 1 || onConnections[0] != "github_list_issue_comments" {
			t.Errorf("the agent's tools on connections after the admin's edit: %v, want only github_list_issue_comments", onConnections)
		}
		// Nor does it start in the background.
		status, b = w.do(ownersKey, http.MethodPost, "/api/runs", `{"tool":"github_get_issue","arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}`)
		if e := decodeError(t, b); status != http.StatusForbidden || e.Error.Code != "forbidden" {
			t.Errorf("the agent's run after the admin's edit: %d %s", status, b)
		}
		// The admin cannot slip a new private binding in with the edit either.
		status, b = w.putAgent(admin, renamed, "Triage", [2]string{"github_get_issue", private}, [2]string{"github_create_issue", private})
		if e := decodeError(t, b); status != http.StatusBadRequest || e.Error.Field != "tools[1].connection_id" {
			t.Errorf("admin adding a private binding while keeping one: %d %s", status, b)
		}

		// The owner saves the agent again: the binding runs again.
		if status, b := w.putAgent(owner, renamed, "Triage", [2]string{"github_get_issue", private}); status != http.StatusOK {
			t.Fatalf("owner saving the agent: %d %s", status, b)
		}
		w.want(ownersKey, http.MethodPost, "/api/tools/github_get_issue/call", getIssue7, http.StatusOK, nil)
		if got := w.githubCalls(goodToken); got != 2 {
			t.Errorf("GitHub saw %d calls with the owner's token, want 2", got)
		}
	})
}

// TestAdminKeyForMembersAgentSkipsMembersPrivateSlack: a member's agent posts through
// the member's private Slack for the member's key only. A key an admin made while the
// agent had no private tool stays shared-only once the member binds the Slack, and the
// admin can neither bind the member's Slack nor make a key once it is bound.
func TestAdminKeyForMembersAgentSkipsMembersPrivateSlack(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		admin := w.admin
		slack := w.connectSlack(w.member, slackMemberToken, false)
		agent := w.createAgent(w.member, "Announcer")
		earlyAdminKey := w.agentKey(admin, agent.ID) // before any private tool

		status, b := w.putAgent(admin, agent, "Announcer", [2]string{"slack_post_message", slack})
		if e := decodeError(t, b); status != http.StatusBadRequest || e.Error.Field != "tools[0].connection_id" {
			t.Errorf("admin binding the member's private Slack: %d %s", status, b)
		}
		if status, b := w.putAgent(w.member, agent, "Announcer", [2]string{"slack_post_message", slack}); status != http.StatusOK {
			t.Fatalf("member binding their own Slack: %d %s", status, b)
		}
		membersKey := w.agentKey(w.member, agent.ID)
		if status, b := w.do(admin, http.MethodPost, "/api/agents/"+agent.ID+"/keys", `{"name":"late"}`); status != http.StatusForbidden {
			t.Errorf("admin creating a key for the member's agent bound to the member's Slack: %d %s", status, b)
		}

		post := `{"arguments":{"channel":"C0GENERAL1","text":"%s"}}`
		status, b = w.do(earlyAdminKey, http.MethodPost, "/api/tools/slack_post_message/call", strings.Replace(post, "%s", "from the admin", 1))
		if e := decodeError(t, b); status != http.StatusForbidden || e.Error.Code != "forbidden" {
			t.Errorf("the admin's earlier key posting through the member's Slack: %d %s", status, b)
		}
		w.want(membersKey, http.MethodPost, "/api/tools/slack_post_message/call", strings.Replace(post, "%s", "from the member", 1), http.StatusOK, nil)
		if diff := cmp.Diff([]string{slackMemberToken + " C0GENERAL1 from the member"}, w.slack.messages()); diff != "" {
			t.Errorf("messages Slack got (-want +got):\n%s", diff)
		}
		var keys struct {
			Keys []struct {
				CreatedBy string `json:"created_by"`
			} `json:"keys"`
		}
		w.want(w.member, http.MethodGet, "/api/agents/"+agent.ID+"/keys", "", http.StatusOK, &keys)
		var by []string
		for _, k := range keys.Keys {
			by = append(by, k.CreatedBy)
		}
		slices.Sort(by)
		want := []string{admin.userID, w.member.userID}
		slices.Sort(want)
		if diff := cmp.Diff(want, by); diff != "" {
			t.Errorf("who created the agent's keys (-want +got):\n%s", diff)
		}
	})
}
