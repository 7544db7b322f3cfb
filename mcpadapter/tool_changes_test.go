package mcpadapter

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/workflows"
)

// TestWorkflowSavedWithOtherParametersNotifiesListChanged: a workflow saved again
// under the same name with other parameters keeps its tool's name but changes its
// input schema: once Refresh returns the sessions list the new schema, and they get
// tools/list_changed.
func TestWorkflowSavedWithOtherParametersNotifiesListChanged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	params := `{"type":"object","properties":{"k":{"type":"string"}},"required":["k"]}`
	ext := Extension{Name: "workflows", Tools: func(_ context.Context, sc Scope) ([]server.ServerTool, error) {
		mu.Lock()
		defer mu.Unlock()
		w := workflows.Workflow{Name: "echo", Definition: `{"name":"echo","parameters":` + params + `,"steps":[{"name":"one","tool":"notes_last_note"}]}`}
		def, err := (&workflows.Service{}).Tool(w)
		if err != nil {
			return nil, err
		}
		return []server.ServerTool{{Tool: newToolDef(def, false, providers.ProfileFull).tool}}, nil
	}}
	e.adapter.opts.Extensions = []Extension{ext}
	c, err := e.client(t, "acme", "key-alice")
	if err != nil {
		t.Fatal(err)
	}
	toolNames(t, c)
	changed := listChanged(t, c)
	waitStream(t, e, alice, "")

	mu.Lock()
	params = `{"type":"object","properties":{"k":{"type":"string"},"n":{"type":"integer"}},"required":["k","n"]}`
	mu.Unlock()
	// What Service.Changed calls after the save; the list is rebuilt when it returns.
	e.adapter.Refresh("ten_a")
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(res.Tools, func(tool mcp.Tool) bool { return tool.Name == "run_flow__echo" })
	if i < 0 {
		t.Fatalf("run_flow__echo not listed: %v", toolNames(t, c))
	}
	b, _ := json.Marshal(res.Tools[i].InputSchema)
	if raw := string(res.Tools[i].RawInputSchema); raw != "" {
		b = []byte(raw)
	}
	var schema struct {
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(b, &schema); err != nil || !slices.Contains(schema.Required, "k") || !slices.Contains(schema.Required, "n") {
		t.Fatalf("run_flow__echo input schema once Refresh returned = %s, want k and n required", b)
	}
	testwait.Recv(t, changed, "tools/list_changed after run_flow__echo's parameters changed")
}
