package mcpadapter

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/runs"
)

// TestFlowToolsOverMCP: over each protocol version a client lists a saved workflow's
// run_flow__, run_flow_async__ and query_flow__ tools with their _meta; the async tool
// answers an instance_id, the query tool its status and typed output, the sync tool
// waits for the end, and each accepts _context, which the run records.
func TestFlowToolsOverMCP(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newWorkflowsEnv(t, db)
		e.saveWorkflows(t, noteWorkflow)
		for _, version := range []string{"2025-06-18", mcp.LATEST_PROTOCOL_VERSION} {
			c := e.connect(t, e.ann, keyAnn, version, nil)
			list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			metas := map[string]map[string]any{}
			for _, tool := range list.Tools {
				if tool.Meta != nil {
					metas[tool.Name] = tool.Meta.AdditionalFields
				}
			}
			for name, kind := range map[string]string{"run_flow__note": "run_flow", "run_flow_async__note": "run_flow_async", "query_flow__note": "query_flow", "run_flow__note_1": "run_flow"} {
				m := metas[name]
				if m["kind"] != kind || m["model_name"] != "note" || m["version"] != "1" || m["model_id"] == "" {
					t.Errorf("%s: %s _meta = %v", version, name, m)
				}
			}

			res := call(t, c, "run_flow_async__note", map[string]any{"text": "later", "_context": map[string]any{"thread_id": "th_9", "environment_id": "live"}})
			var started struct {
				InstanceID string `json:"instance_id"`
			}
			structured(t, res, &started)
			if res.IsError || started.InstanceID == "" {
				t.Fatalf("%s: async = %s", version, text(res))
			}
			if !e.audit.hasDetail("run_flow_async__note", `_context {"thread_id":"th_9","environment_id":"live"}`) {
				t.Errorf("%s: the call's audit row does not record its _context", version)
			}
			v := e.waitRun(t, e.ann, started.InstanceID)
			if v.State != runs.StateCompleted || string(v.Context) != `{"thread_id":"th_9","environment_id":"live"}` {
				t.Errorf("%s: run = %+v", version, v)
			}
			var q struct {
				Output map[string]any `json:"output"`
				Status struct {
					InstanceID string `json:"instance_id"`
					Name       string `json:"name"`
					State      string `json:"state"`
				} `json:"status"`
			}
			res = call(t, c, "query_flow__note", map[string]any{"instance_id": started.InstanceID})
			structured(t, res, &q)
			if res.IsError || q.Status.State != "completed" || q.Status.Name != "note" || q.Status.InstanceID != started.InstanceID || q.Output["id"] == nil {
				t.Errorf("%s: query = %s", version, text(res))
			}

			res = call(t, c, "run_flow__note", map[string]any{"text": "now", "_context": map[string]any{"agent_id": "agt_x"}})
			structured(t, res, &q)
			if res.IsError || q.Status.State != "completed" || q.Output["id"] == nil {
				t.Errorf("%s: run_flow__note = %s", version, text(res))
			}
			if res := call(t, c, "run_flow__note", map[string]any{"text": "x", "_context": map[string]any{"environment_id": "prod"}}); !res.IsError {
				t.Errorf("%s: environment_id prod = %s; want refused", version, text(res))
			}
		}
	})
}

// hasDetail reports whether a recorded call of the tool has that detail.
func (m *memAudit) hasDetail(tool, detail string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.events {
		if e.Tool == tool && e.Detail == detail {
			return true
		}
	}
	return false
}
