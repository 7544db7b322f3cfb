package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// previewBody is the answer of POST /api/agents/preview.
type previewBody struct {
	ToolMode string `json:"tool_mode"`
	Tools    []struct {
		Name   string `json:"name"`
		Tokens int    `json:"tokens"`
	} `json:"tools"`
	Tokens int `json:"tokens"`
}

// TestAgentPreviewCountsWhatTheURLServes checks the builder's estimate source: the
// picked tools plus the five run-management tools every URL serves, or the three search
// tools in search mode; each with its tokens, summed.
func TestAgentPreviewCountsWhatTheURLServes(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		conn := w.connect(w.admin, goodToken, true)
		mgmt := []string{"switchboard_run_async", "switchboard_get_run", "switchboard_cancel_run", "switchboard_list_runs", "switchboard_submit_elicitation"}
		picked := []string{"github_get_issue", "github_create_issue"}
		search := []string{"search_tools", "describe_tool", "call_tool"}
		for _, tc := range []struct {
			mode, confirm, runTools string
			want                    []string
		}{
			// The run tools are listed where the confirm policy makes runs (auto), or when on.
			{"all", "destructive", "", append(append([]string{}, picked...), mgmt...)},
			{"all", "never", "", picked},
			{"all", "never", "on", append(append([]string{}, picked...), mgmt...)},
			{"search", "always", "", append(append([]string{}, search...), mgmt...)},
			{"search", "always", "off", search},
		} {
			var got previewBody
			w.want(w.member, http.MethodPost, "/api/agents/preview", agentJSON(t, map[string]any{"tool_mode": tc.mode, "confirm": tc.confirm, "run_tools": tc.runTools,
				"tools": []map[string]string{{"tool": "github_get_issue", "connection_id": conn}, {"tool": "github_create_issue", "connection_id": conn}}}),
				http.StatusOK, &got)
			var names []string
			sum := 0
			for _, tl := range got.Tools {
				names = append(names, tl.Name)
				if tl.Tokens < 20 {
					t.Errorf("mode %s: %s costs %d tokens, fewer than its name and schema take", tc.mode, tl.Name, tl.Tokens)
				}
				sum += tl.Tokens
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("mode %s, confirm %s, run tools %q: listed tools (-want +got):\n%s", tc.mode, tc.confirm, tc.runTools, diff)
			}
			if got.Tokens != sum || got.ToolMode != tc.mode {
				t.Errorf("mode %s: tokens %d (sum of tools %d), mode %q", tc.mode, got.Tokens, sum, got.ToolMode)
			}
		}
		// A tool bound to a connection the caller cannot use is not served, so not counted.
		var none previewBody
		w.want(w.ownerB, http.MethodPost, "/api/agents/preview", `{"run_tools":"on","tools":[{"tool":"github_get_issue","connection_id":"`+conn+`"}]}`, http.StatusOK, &none)
		if len(none.Tools) != len(mgmt) {
			t.Errorf("another tenant's preview with this tenant's connection lists %+v", none.Tools)
		}
		for field, body := range map[string]string{"tool_mode": `{"tool_mode":"some"}`, "confirm": `{"confirm":"maybe"}`, "run_tools": `{"run_tools":"yes"}`} {
			status, b := w.do(w.admin, http.MethodPost, "/api/agents/preview", body)
			if e := decodeError(t, b); status != http.StatusBadRequest || e.Error.Field != field {
				t.Errorf("a bad %s answered %d %+v", field, status, e)
			}
		}
	})
}

// TestAgentListShowsKeysAndLastUse checks the agents list's key count and last use.
func TestAgentListShowsKeysAndLastUse(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		conn := w.connect(w.admin, goodToken, true)
		var created agentBody
		w.want(w.admin, http.MethodPost, "/api/agents", agentJSON(t, map[string]any{"name": "Keys",
			"tools": []map[string]string{{"tool": "github_get_issue", "connection_id": conn}}}), http.StatusCreated, &created)
		var key struct {
			Key string `json:"key"`
		}
		w.want(w.admin, http.MethodPost, "/api/agents/"+created.ID+"/keys", `{"name":"one"}`, http.StatusCreated, &key)
		w.want(w.admin, http.MethodPost, "/api/agents/"+created.ID+"/keys", `{"name":"two"}`, http.StatusCreated, nil)
		type listed struct {
			Agents []struct {
				ActiveKeys int     `json:"active_keys"`
				LastUsedAt *string `json:"last_used_at"`
			} `json:"agents"`
		}
		var before listed
		w.want(w.admin, http.MethodGet, "/api/agents", "", http.StatusOK, &before)
		if len(before.Agents) != 1 || before.Agents[0].ActiveKeys != 2 || before.Agents[0].LastUsedAt != nil {
			t.Fatalf("before any use: %+v", before.Agents)
		}
		agentKey := actor{key: key.Key, userID: w.admin.userID, tenant: w.a.ID}
		w.want(agentKey, http.MethodGet, "/api/agents/"+created.ID, "", http.StatusOK, nil)
		// The key's last use is written in the background: wait for it, within a deadline.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			var after listed
			w.want(w.admin, http.MethodGet, "/api/agents", "", http.StatusOK, &after)
			if len(after.Agents) == 1 && after.Agents[0].LastUsedAt != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("30 s after the agent's key was used the list still says %+v", after.Agents)
			}
		}
	})
}
