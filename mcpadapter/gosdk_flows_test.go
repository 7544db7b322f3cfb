package mcpadapter

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/sessions"
)

// sdkHeard is what the official Go SDK's client heard: resources/updated URIs and
// tools/list_changed.
type sdkHeard struct {
	mu      sync.Mutex
	updated []string
	changed int
}

func (h *sdkHeard) seen(uri string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, u := range h.updated {
		if u == uri {
			return true
		}
	}
	return false
}

func (h *sdkHeard) changes() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed
}

// sdkStructured decodes a result's structuredContent into v.
func sdkStructured(t *testing.T, res *sdk.CallToolResult, v any) {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil || json.Unmarshal(raw, v) != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
}

func sdkText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestGoSDKFlows drives a saved workflow's flow tools with the official Go SDK's
// client (v1.8.0) on each protocol version the hub speaks, at node A of two nodes
// whose runs store their changes on node B's change feed: the trio and its versioned
// trio are listed with _meta and the flow's own output schema; run_flow_async__
// answers an instance_id, query_flow__ its status and typed output, run_flow__ waits
// for the end; a flow instance subscribed to (resources/subscribe before 2026-07-28,
// subscriptions/listen on it, or subscribe_flow) is heard of when its state changes;
// and a workflow deactivated, activated and deleted tells the session
// (tools/list_changed), marks its tools [DEACTIVATED] or [DELETED], and refuses their
// calls with a clear tool error.
func TestGoSDKFlows(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
			t.Run(version, func(t *testing.T) {
				t.Parallel()
				goSDKFlows(t, db, version)
			})
		}
	})
}

func goSDKFlows(t *testing.T, db *gorm.DB, version string) {
	buses := nodeBuses(t, db)
	e := buildRunsEnv(t, db, nil, nil, true, buses[1])
	e.saveWorkflows(t, noteWorkflow, holdWorkflow)
	store := sessions.NewStore(db)
	a := e.node(t, store, mcptransport.FeedRelay(buses[0]))
	e.node(t, store, mcptransport.FeedRelay(buses[1]))
	nodeA, nodeB := e.adapters[1], e.adapters[2]
	t.Cleanup(runs.OnStateChange(buses[0], nodeA.RunChanged))
	t.Cleanup(runs.OnStateChange(buses[1], nodeB.RunChanged))
	e.workflows.Changed = func(tenant switchboard.TenantID) {
		for _, ad := range e.adapters {
			ad.Refresh(tenant)
		}
	}
	ctx := context.Background()
	h := &sdkHeard{}
	client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-flows", Version: "1"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			h.mu.Lock()
			h.updated = append(h.updated, req.Params.URI)
			h.mu.Unlock()
		},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			h.mu.Lock()
			h.changed++
			h.mu.Unlock()
		},
	})
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint: a.URL + "/mcp/" + e.ann.TenantSlug, HTTPClient: &http.Client{Transport: keyTransport{key: keyAnn}},
	}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	call := func(name string, args map[string]any) *sdk.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("call %s: %v", name, err)
		}
		return res
	}
	tools := func() map[string]*sdk.Tool {
		t.Helper()
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		out := map[string]*sdk.Tool{}
		for _, tl := range res.Tools {
			out[tl.Name] = tl
		}
		return out
	}

	// The trio and its versioned trio.
	listed := tools()
	for name, kind := range map[string]string{"run_flow__note": "run_flow", "run_flow_async__note": "run_flow_async", "query_flow__note": "query_flow",
		"run_flow__note_1": "run_flow", "run_flow_async__note_1": "run_flow_async", "query_flow__note_1": "query_flow"} {
		tl := listed[name]
		if tl == nil {
			t.Fatalf("%s is not listed", name)
		}
		if tl.Meta["kind"] != kind || tl.Meta["model_name"] != "note" || tl.Meta["version"] != "1" || tl.Meta["model_id"] == "" || tl.Meta["model_id"] == nil {
			t.Errorf("%s _meta = %v", name, tl.Meta)
		}
	}
	schema, _ := json.Marshal(listed["query_flow__note"].OutputSchema)
	if !strings.Contains(string(schema), `"output":{"properties":{"id":`) || !strings.Contains(string(schema), `"required":["instance_id","name","state","created_at","updated_at"]`) {
		t.Errorf("query_flow__note's output schema = %s", schema)
	}

	var started struct {
		InstanceID string `json:"instance_id"`
	}
	res := call("run_flow_async__note_1", map[string]any{"text": "later"})
	sdkStructured(t, res, &started)
	if res.IsError || started.InstanceID == "" {
		t.Fatalf("run_flow_async__note_1 = %s", sdkText(res))
	}
	e.waitRun(t, e.ann, started.InstanceID)
	var answer struct {
		Output map[string]any `json:"output"`
		Status struct {
			InstanceID string `json:"instance_id"`
			Name       string `json:"name"`
			State      string `json:"state"`
			CreatedAt  string `json:"created_at"`
			UpdatedAt  string `json:"updated_at"`
		} `json:"status"`
	}
	res = call("query_flow__note", map[string]any{"instance_id": started.InstanceID})
	sdkStructured(t, res, &answer)
	if res.IsError || answer.Status.InstanceID != started.InstanceID || answer.Status.Name != "note" || answer.Status.State != "completed" ||
		answer.Status.CreatedAt == "" || answer.Status.UpdatedAt == "" || answer.Output["id"] == nil {
		t.Errorf("query_flow__note = %s", sdkText(res))
	}
	res = call("run_flow__note", map[string]any{"text": "now", "_context": map[string]any{"thread_id": "th_1", "environment_id": "live"}})
	sdkStructured(t, res, &answer)
	if res.IsError || answer.Status.State != "completed" || answer.Output["id"] == nil {
		t.Errorf("run_flow__note = %s", sdkText(res))
	}

	// Following instances.
	held := func() string {
		t.Helper()
		res := call("run_flow_async__hold", map[string]any{})
		var s struct {
			InstanceID string `json:"instance_id"`
		}
		sdkStructured(t, res, &s)
		if res.IsError || s.InstanceID == "" {
			t.Fatalf("run_flow_async__hold = %s", sdkText(res))
		}
		return s.InstanceID
	}
	first, second := held(), held()
	uri := "switchboard://flows/" + first
	if version == "2026-07-28" {
		// Subscribe holds a subscriptions/listen stream open until Unsubscribe.
		go func() { _ = cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}) }()
		testwait.Until(t, "the subscriptions/listen stream to take "+uri, func() bool {
			nodeA.mu.Lock()
			s := nodeA.scopes[scopeKey(e.ann, "")]
			nodeA.mu.Unlock()
			return s != nil && len(s.subs.matching(func(u string) bool { return u == uri })) > 0
		})
	} else if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("resources/subscribe: %v", err)
	}
	var sub struct {
		Subscribed bool   `json:"subscribed"`
		Message    string `json:"message"`
	}
	res = call("subscribe_flow", map[string]any{"instance_id": second})
	sdkStructured(t, res, &sub)
	if version == "2026-07-28" {
		if res.IsError || sub.Subscribed || !strings.Contains(sub.Message, "subscriptions/listen") {
			t.Errorf("subscribe_flow on 2026-07-28 = %s; want not subscribed, pointing at subscriptions/listen", sdkText(res))
		}
	} else if res.IsError || !sub.Subscribed {
		t.Errorf("subscribe_flow = %s", sdkText(res))
	}
	if r := call("cancel_flow", map[string]any{"instance_id": first}); r.IsError {
		t.Fatalf("cancel_flow = %s", sdkText(r))
	}
	testwait.Until(t, "notifications/resources/updated for "+uri, func() bool { return h.seen(uri) })
	e.up.Release()
	if version != "2026-07-28" {
		testwait.Until(t, "notifications/resources/updated for the instance subscribe_flow followed", func() bool { return h.seen("switchboard://flows/" + second) })
	}
	if err := cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: uri}); err != nil {
		t.Errorf("unsubscribe: %v", err)
	}

	// Lifecycle.
	lifecycle := func(what string, change func() error, marker, refusal string) {
		t.Helper()
		before := h.changes()
		if err := change(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		testwait.Until(t, "tools/list_changed after the workflow was "+what, func() bool { return h.changes() > before })
		tl := tools()["run_flow__note"]
		if tl == nil {
			t.Fatalf("run_flow__note is not listed once the workflow was %s", what)
		}
		if marker != "" && !strings.HasPrefix(tl.Description, marker+" ") || marker == "" && strings.HasPrefix(tl.Description, "[") {
			t.Errorf("once %s, run_flow__note is described %q", what, tl.Description)
		}
		r := call("run_flow__note", map[string]any{"text": "x"})
		if refusal == "" && r.IsError || refusal != "" && (!r.IsError || !strings.Contains(sdkText(r), refusal)) {
			t.Errorf("once %s, run_flow__note = %v %s", what, r.IsError, sdkText(r))
		}
	}
	lifecycle("deactivated", func() error { return e.workflows.SetActive(ctx, e.ann, "note", false) }, "[DEACTIVATED]", "flow note is deactivated")
	lifecycle("activated", func() error { return e.workflows.SetActive(ctx, e.ann, "note", true) }, "", "")
	lifecycle("deleted", func() error { return e.workflows.Delete(ctx, e.ann, "note") }, "[DELETED]", "flow note was deleted")
}
