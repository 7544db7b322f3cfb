package mcpadapter

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestListedToolsIsWhatTheAgentURLLists checks the builder's preview against the
// agent URL itself: in both tool modes, ListedTools for the agent's selection returns
// exactly the definitions tools/list at its URL answers, management tools included.
func TestListedToolsIsWhatTheAgentURLLists(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mgmt := Extension{
		Name: "mgmt",
		Tools: func(context.Context, Scope) ([]server.ServerTool, error) {
			return []server.ServerTool{{Tool: mcp.NewTool("switchboard_ping", mcp.WithDescription("Answers pong."))}}, nil
		},
		TaskSupport: true,
	}
	// Like the workflow tools, this one is listed at tenant URLs only.
	tenantOnly := Extension{
		Name: "tenant-only",
		Tools: func(_ context.Context, sc Scope) ([]server.ServerTool, error) {
			if sc.AgentID != "" {
				return nil, nil
			}
			return []server.ServerTool{{Tool: mcp.NewTool("list_things", mcp.WithDescription("Tenant URLs only."))}}, nil
		},
	}
	e.adapter.opts.Extensions = []Extension{mgmt, tenantOnly}
	draft, _, err := e.agents.AgentAndSettings(context.Background(), "ten_a", "agt_triage")
	if err != nil {
		t.Fatal(err)
	}
	draft.ID = "" // a draft not saved yet
	for _, mode := range []agents.ToolMode{agents.ToolModeAll, agents.ToolModeSearch} {
		e.agents.setSettings(agents.Settings{TenantID: "ten_a", Confirm: agents.ConfirmNever, ToolMode: mode})
		e.adapter.AgentChanged("ten_a", "agt_triage")
		c, err := e.clientAt(t, "/mcp/acme/agents/agt_triage", "key-triage")
		if err != nil {
			t.Fatal(err)
		}
		// The agent's live scope rebuilds its lists in the background after the change.
		want := map[agents.ToolMode]int{agents.ToolModeAll: 2, agents.ToolModeSearch: 4}[mode]
		var res *mcp.ListToolsResult
		testwait.Until(t, "the agent URL's list in mode "+string(mode), func() bool {
			res, err = c.ListTools(context.Background(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			return len(res.Tools) == want
		})
		var served []string
		for _, tool := range res.Tools {
			raw, err := json.Marshal(tool)
			if err != nil {
				t.Fatal(err)
			}
			served = append(served, string(raw))
		}
		listed, gotMode, err := e.adapter.ListedTools(context.Background(), alice, draft)
		if err != nil || gotMode != mode {
			t.Fatalf("ListedTools in mode %s: mode %s, %v", mode, gotMode, err)
		}
		var got []string
		for _, raw := range listed {
			// Decoded and encoded again as the client's decoding did to the served ones.
			var tool mcp.Tool
			if err := json.Unmarshal(raw, &tool); err != nil {
				t.Fatal(err)
			}
			again, err := json.Marshal(tool)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(again))
		}
		// tools/list orders by name; the definitions are what must match.
		slices.Sort(served)
		slices.Sort(got)
		if diff := cmp.Diff(served, got); diff != "" {
			t.Errorf("mode %s: ListedTools differs from the agent URL's tools/list (-served +listed):\n%s", mode, diff)
		}
		if len(listed) != want {
			t.Errorf("mode %s: %d tools listed, want %d", mode, len(listed), want)
		}
	}
}
