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
// input schema; the live sessions get tools/list_changed and then list the new schema.
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
	e.adapter.Refresh("ten_a") // what Service.Changed calls after the save
	testwait.Recv(t, changed, "tools/list_changed after run_flow__echo's parameters changed")
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name != "run_flow__echo" {
			continue
		}
		b, _ := json.Marshal(tool.InputSchema)
		if raw := string(tool.RawInputSchema); raw != "" {
			b = []byte(raw)
		}
		var s struct {
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(b, &s); err != nil || !slices.Contains(s.Required, "k") || !slices.Contains(s.Required, "n") {
			t.Fatalf("run_flow__echo input schema after the change = %s, want k and n required", b)
		}
		return
	}
	t.Fatalf("run_flow__echo not listed: %v", toolNames(t, c))
}
