package agents_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers"
)

// fakeRemote is a provider whose tools exist per connection, as a remote MCP server's
// do: the tools of connections of provider "mcp", named <connection name>_<tool>.
type fakeRemote struct {
	mu    sync.Mutex
	tools map[string][]*providers.Tool // by connection id
	asked []string
}

func (f *fakeRemote) connectionTools(_ context.Context, c providers.Connection) ([]*providers.Tool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, c.ID)
	return f.tools[c.ID], nil
}

func TestAgentsSelectDynamicTools(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		remote := &fakeRemote{tools: map[string][]*providers.Tool{}}
		spec := &providers.Spec{Name: "mcp", Title: "Remote MCP server", Tools: remote.connectionTools}
		r := newRig(t, db, *spec)
		op := &providers.Operation[struct{}, struct{}]{Name: "echo", Hints: providers.Hints{ReadOnly: true}}
		echo, err := providers.NewConnectionTool(spec, "docs_echo", op, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := connections.Connection{OwnerUserID: r.a.UserID, Provider: "mcp", AuthKind: "none", AccountID: "https://mcp.example.com/mcp", AccountLabel: "docs", Shared: true}
		if err := r.conns.Create(ctx, r.a.TenantID, &c, connections.Credentials{}); err != nil {
			t.Fatal(err)
		}
		remoteConn := c.ID
		remote.tools[remoteConn] = []*providers.Tool{echo}

		a, err := r.svc.Create(ctx, r.a, agents.Input{Name: "Docs", Tools: []agents.ToolInput{
			{Tool: "docs_echo", ConnectionID: remoteConn},
			{Tool: "github_get_issue", ConnectionID: r.connA},
		}})
		if err != nil {
			t.Fatalf("create with a remote tool: %v", err)
		}
		if len(a.Tools) != 2 || a.Tools[0].Tool != "docs_echo" || a.Tools[0].ConnectionID != remoteConn {
			t.Errorf("tools = %+v", a.Tools)
		}
		tests := []struct {
			name  string
			tool  agents.ToolInput
			field string
		}{
			{name: "a tool the remote does not have", tool: agents.ToolInput{Tool: "docs_nope", ConnectionID: remoteConn}, field: "tools[0].tool"},
			{name: "a remote tool on a GitHub connection", tool: agents.ToolInput{Tool: "docs_echo", ConnectionID: r.connA}, field: "tools[0].tool"},
			{name: "a GitHub tool on the remote connection", tool: agents.ToolInput{Tool: "github_get_issue", ConnectionID: remoteConn}, field: "tools[0].connection_id"},
			{name: "another tenant's remote connection", tool: agents.ToolInput{Tool: "docs_echo", ConnectionID: remoteConn}, field: "tools[0].connection_id"},
		}
		for i, tt := range tests {
			p := r.a
			if i == len(tests)-1 {
				p = r.b
			}
			_, err := r.svc.Create(ctx, p, agents.Input{Name: "Bad", Tools: []agents.ToolInput{tt.tool}})
			if err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("%s: err = %v, want an invalid error on %s", tt.name, err, tt.field)
			}
		}
	})
}
