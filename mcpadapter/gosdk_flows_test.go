package mcpadapter

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
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

// sdkPerson is a Go SDK client's elicitation handler: it records the questions and
// answers each with action and content, or, silent, never answers (until the test
// ends).
type sdkPerson struct {
	action  string
	content map[string]any
	silent  chan struct{} // non-nil: never answer
	mu      sync.Mutex
	asked   []string
	schemas []string
}

func (p *sdkPerson) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	schema, _ := json.Marshal(req.Params.RequestedSchema)
	p.mu.Lock()
	p.asked = append(p.asked, req.Params.Message)
	p.schemas = append(p.schemas, string(schema))
	p.mu.Unlock()
	if p.silent != nil {
		select {
		case <-p.silent:
		case <-ctx.Done():
		}
		return nil, context.Canceled
	}
	return &sdk.ElicitResult{Action: p.action, Content: p.content}, nil
}

func (p *sdkPerson) questions() ([]string, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.asked), slices.Clone(p.schemas)
}

// TestGoSDKFlowInputStep drives a flow whose step asks its person with the official
// Go SDK's client (v1.8.0) on each protocol version the hub speaks: the question
// reaches the client as a form (its message and the step's schema); accepted, the run
// goes on with the answer and run_flow__ answers the output; declined, the run fails
// and the tool answers an error naming the refusal; unanswered within the step's
// timeout (on 2026-07-28, asked of a client that shows no forms), run_flow__ answers
// input_required with the question pending, and submit_flow_elicitation answers it
// later; and replay_flow_pending_elicitation shows
// a pending question to another session of the person, whose answer resumes the run.
func TestGoSDKFlowInputStep(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
			t.Run(version, func(t *testing.T) {
				t.Parallel()
				goSDKFlowInput(t, db, version)
			})
		}
	})
}

func goSDKFlowInput(t *testing.T, db *gorm.DB, version string) {
	e := newWorkflowsEnv(t, db)
	e.saveWorkflows(t, approveWorkflow, slowApproveWorkflow)
	ctx := context.Background()
	connect := func(p *sdkPerson) *sdk.ClientSession {
		t.Helper()
		opts := &sdk.ClientOptions{}
		if p != nil {
			opts.ElicitationHandler = p.elicit
		}
		client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-flow-input", Version: "1"}, opts)
		cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
			Endpoint: e.srv.URL + "/mcp/" + e.ann.TenantSlug, HTTPClient: &http.Client{Transport: keyTransport{key: keyAnn}},
		}, &sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		if got := cs.InitializeResult().ProtocolVersion; got != version {
			t.Fatalf("negotiated %s, want %s", got, version)
		}
		return cs
	}
	call := func(cs *sdk.ClientSession, name string, args map[string]any) (*sdk.CallToolResult, flowAnswer) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("call %s: %v", name, err)
		}
		var ans flowAnswer
		sdkStructured(t, res, &ans)
		return res, ans
	}

	// Accepted.
	yes := &sdkPerson{action: "accept", content: map[string]any{"approval_status": "approved", "comments": "ok by me"}}
	res, ans := call(connect(yes), "run_flow__approve", map[string]any{"text": "hello"})
	if res.IsError || ans.Status.State != "completed" || ans.Output["approval_status"] != "approved" || ans.Output["id"] == nil {
		t.Fatalf("accepted run_flow__approve = %s", sdkText(res))
	}
	asked, schemas := yes.questions()
	if len(asked) != 1 || asked[0] != "Write hello?" || !strings.Contains(schemas[0], `"approval_status":{"enum":["approved","rejected"],"type":"string"}`) {
		t.Errorf("the client was asked %q with %q", asked, schemas)
	}
	if reqs := e.up.Requests(); len(reqs) != 1 || reqs[0].Body != `{"text":"ok by me"}` {
		t.Errorf("upstream got %+v; want the note of the person's comments", reqs)
	}

	// Declined.
	no := &sdkPerson{action: "decline"}
	res, ans = call(connect(no), "run_flow__approve", map[string]any{"text": "bye"})
	if !res.IsError || ans.Status.State != "failed" || !strings.Contains(sdkText(res), "declined") {
		t.Errorf("declined run_flow__approve = %s", sdkText(res))
	}
	if asked, _ := no.questions(); len(asked) != 1 {
		t.Errorf("the declining client was asked %q", asked)
	}

	// Unanswered in time, then submitted.
	silent := &sdkPerson{silent: make(chan struct{})}
	modern := version == "2026-07-28"
	var quiet *sdk.ClientSession
	if modern {
		// On 2026-07-28 the client holds the call's round trip until its handler
		// answers: a client that shows no forms leaves the question pending instead.
		quiet = connect(nil)
	} else {
		quiet = connect(silent)
	}
	t.Cleanup(func() { close(silent.silent) }) // before the session closes, which waits for its handlers
	res, ans = call(quiet, "run_flow__slow_approve", map[string]any{})
	if res.IsError || ans.Status.State != "input_required" || len(ans.Elicitations) != 1 || !modern && !ans.Elicitations[0].TimedOut || !strings.Contains(sdkText(res), ans.Elicitations[0].ID) {
		t.Fatalf("unanswered run_flow__slow_approve = %s", sdkText(res))
	}
	res, _ = call(quiet, "submit_flow_elicitation", map[string]any{"instance_id": ans.Status.InstanceID, "elicitation_id": ans.Elicitations[0].ID,
		"response": map[string]any{"action": "accept", "content": map[string]any{"comments": "late"}}})
	if res.IsError {
		t.Fatalf("submit_flow_elicitation = %s", sdkText(res))
	}
	if v := e.waitRun(t, e.ann, ans.Status.InstanceID); v.State != runs.StateCompleted {
		t.Fatalf("the submitted run = %+v", v)
	}
	res, q := call(quiet, "query_flow__slow_approve", map[string]any{"instance_id": ans.Status.InstanceID})
	if res.IsError || q.Status.State != "completed" || q.Output["id"] == nil {
		t.Errorf("query_flow__slow_approve after the answer = %s", sdkText(res))
	}

	// Pending, then replayed to another session whose person answers.
	res, ans = call(quiet, "run_flow__slow_approve", map[string]any{})
	if ans.Status.State != "input_required" || len(ans.Elicitations) != 1 {
		t.Fatalf("second run_flow__slow_approve = %s", sdkText(res))
	}
	replayer := &sdkPerson{action: "accept", content: map[string]any{"comments": "replayed"}}
	res, err := connect(replayer).CallTool(ctx, &sdk.CallToolParams{Name: "replay_flow_pending_elicitation", Arguments: map[string]any{"instance_id": ans.Status.InstanceID}})
	if err != nil {
		t.Fatalf("replay_flow_pending_elicitation: %v", err)
	}
	var replay struct {
		Answered []string `json:"answered"`
	}
	sdkStructured(t, res, &replay)
	if res.IsError || len(replay.Answered) != 1 || replay.Answered[0] != ans.Elicitations[0].ID {
		t.Fatalf("replay_flow_pending_elicitation = %s", sdkText(res))
	}
	if asked, _ := replayer.questions(); len(asked) != 1 || asked[0] != "Write it?" {
		t.Errorf("the replaying client was asked %q", asked)
	}
	if v := e.waitRun(t, e.ann, ans.Status.InstanceID); v.State != runs.StateCompleted || !strings.Contains(string(v.Output), `"id"`) {
		t.Fatalf("the replayed run = %+v (output %s)", v, v.Output)
	}
	reqs := e.up.Requests()
	if last := reqs[len(reqs)-1]; last.Body != `{"text":"replayed"}` {
		t.Errorf("the replayed run wrote %s; want the replayed answer's comments", last.Body)
	}
}
