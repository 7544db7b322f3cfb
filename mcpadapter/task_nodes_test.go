package mcpadapter

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/mcptransport"
)

// A 2026-07-28 task running on node A whose tool asks its client a form: tasks/get on
// node B shows the task input_required with the request as A shows it (same key,
// method and params), tasks/update on B answers it on A, and the task completes with
// the answer on either node. Another principal's answers, refused on B or relayed
// forged to A, change nothing.
func TestModernTaskInputRequestsAcrossNodes(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		if err := e.reg.Register(jobsSpec(make(chan struct{}))); err != nil {
			t.Fatal(err)
		}
		a, b, buses := twoNodes(t, e, db)
		path := "/mcp/" + e.ann.TenantSlug
		onA := modernClient{t: t, url: a.URL + path, tasks: true}
		onB := modernClient{t: t, url: b.URL + path, tasks: true}
		bobOnB := modernClient{t: t, url: b.URL + path, tasks: true, key: keyBob}

		id := onA.call("jobs_ask_name", nil)["taskId"].(string)
		asking := func(c modernClient, node string) map[string]any {
			t.Helper()
			var got map[string]any
			testwait.Until(t, "node "+node+" to show the task's input request", func() bool {
				got = c.result("tasks/get", map[string]any{"taskId": id})
				return got["status"] == "input_required"
			})
			return got
		}
		fromA, fromB := asking(onA, "A"), asking(onB, "B")
		want := map[string]any{"input_1": map[string]any{"method": "elicitation/create", "params": map[string]any{"mode": "form", "message": "your name?",
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}}}
		if diff := cmp.Diff(want, fromA["inputRequests"]); diff != "" {
			t.Errorf("input requests on node A (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(fromA["inputRequests"], fromB["inputRequests"]); diff != "" {
			t.Errorf("input requests on node B differ from node A's (-A +B):\n%s", diff)
		}

		// Bob may not answer ann's task on B: not his, so not found, and not relayed.
		answer := func(name string) map[string]any {
			return map[string]any{"taskId": id, "inputResponses": map[string]any{"input_1": map[string]any{"action": "accept", "content": map[string]any{"name": name}}}}
		}
		if msg := bobOnB.post("tasks/update", answer("Mallory"), nil); rpcCode(msg) != mcp.INVALID_PARAMS {
			t.Errorf("another principal's tasks/update on node B = %v, want -32602 (unknown task)", msg)
		}
		// Nor does an answer relayed in another principal's name count on A.
		delivered := taken(buses[0], mcptransport.KindTaskInput)
		body, _ := json.Marshal(mcptransport.TaskInputResponses{TaskID: id, InputResponses: map[string]json.RawMessage{"input_1": json.RawMessage(`{"action":"accept","content":{"name":"Mallory"}}`)}})
		forged := mcptransport.RelayMessage{Kind: mcptransport.RelayTaskInput, Node: "node_forged", Tenant: e.bob.TenantID, Principal: e.bob.ID(), Body: body}
		if err := mcptransport.FeedRelay(buses[1]).Publish(context.Background(), forged); err != nil {
			t.Fatal(err)
		}
		testwait.Recv(t, delivered, "the forged answer to reach node A")
		if got := onA.result("tasks/get", map[string]any{"taskId": id}); got["status"] != "input_required" || cmp.Diff(want, got["inputRequests"]) != "" {
			t.Errorf("task after another principal's answers = %v, want still input_required with its request", got)
		}

		// Ann answers on B: the task, running on A, completes with her answer.
		if ack := onB.result("tasks/update", answer("Alice")); len(ack) != 1 || ack["resultType"] != "complete" {
			t.Errorf("tasks/update on node B = %v, want an empty ack", ack)
		}
		for node, c := range map[string]modernClient{"A": onA, "B": onB} {
			var done map[string]any
			testwait.Until(t, "the task to end, seen on node "+node, func() bool {
				done = c.result("tasks/get", map[string]any{"taskId": id})
				return done["status"] != "working" && done["status"] != "input_required"
			})
			if done["status"] != "completed" || resultText(done["result"]) != "Hello, accept:Alice" || done["inputRequests"] != nil {
				t.Errorf("task on node %s = %v, want completed with ann's answer", node, done)
			}
		}
	})
}
