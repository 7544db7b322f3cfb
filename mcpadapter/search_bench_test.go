package mcpadapter

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/hub"
	"github.com/switchboard-hub/switchboard/router"
)

// BenchmarkSearchTools measures one search_tools call of tool search mode over a
// catalog of 1,000 tools, the mode's reason to exist, and reports the size of the
// answer besides the size of the full list it replaces.
func BenchmarkSearchTools(b *testing.B) {
	reg := providers.NewRegistry()
	ops := make([]providers.Op, 1000)
	areas := []string{"issue", "pull request", "channel", "message", "record", "ticket", "file", "user", "comment", "project"}
	verbs := []string{"create", "get", "list", "update", "delete"}
	for i := range ops {
		area, verb := areas[i%len(areas)], verbs[(i/len(areas))%len(verbs)]
		ops[i] = &providers.Operation[noteIn, noteOut]{
			Name:        fmt.Sprintf("%s_%s_%03d", verb, strings.Fields(area)[0], i),
			Title:       fmt.Sprintf("%s %s %d", verb, area, i),
			Description: fmt.Sprintf("%s a %s in the account's workspace (variant %d).", verb, area, i),
			Hints:       providers.Hints{ReadOnly: verb == "get" || verb == "list"},
		}
	}
	if err := reg.Register(providers.Spec{Name: "bulk", Title: "Bulk", Verify: notesSpec().Verify, Operations: ops}); err != nil {
		b.Fatal(err)
	}
	conns := &memConns{}
	conns.set(connections.Connection{ID: "con_a", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "bulk", AccountLabel: "a", Status: connections.StatusActive})
	ag := newMemAgents()
	ag.setSettings(agents.Settings{TenantID: "ten_a", Confirm: agents.ConfirmNever, ToolMode: agents.ToolModeSearch})
	rtr := router.New(router.Options{Registry: reg, Connections: conns})
	if err := reg.Register(hub.SearchSpec(rtr)); err != nil {
		b.Fatal(err)
	}
	a := New(Options{Router: rtr, Agents: ag})
	s := a.newScope(alice, "")
	defer s.close(context.Background())
	if err := s.refresh(context.Background()); err != nil {
		b.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = searchToolName
	req.Params.Arguments = map[string]any{"query": "create pull request", "limit": 10}
	ctx := switchboard.WithPrincipal(context.Background(), alice)
	var answer int
	b.ResetTimer()
	for range b.N {
		res, err := s.state.Load().handler(ctx, req)
		if err != nil || res.IsError {
			b.Fatalf("search: %v %v", err, res)
		}
		answer = len(firstText(res))
	}
	b.StopTimer()
	full := 0
	for _, name := range s.state.Load().order {
		t := s.state.Load().hub[name].tool()
		raw, _ := t.MarshalJSON()
		full += len(raw)
	}
	b.ReportMetric(float64(answer), "answer-bytes")
	b.ReportMetric(float64(full), "full-list-bytes")
}
