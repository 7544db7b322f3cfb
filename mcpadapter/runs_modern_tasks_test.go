package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
)

// jobOp is a tool of the jobs test provider: connectionless, answering MCP content.
type jobOp struct {
	name      string
	task      providers.TaskSupport
	asksFirst bool
	run       func(ctx context.Context, args map[string]any) (*providers.ContentResult, error)
}

func (o jobOp) Info() providers.Info {
	return providers.Info{Name: o.name, Title: o.name, Description: "A test job.", Task: o.task, AsksBeforeTask: o.asksFirst,
		Hints: providers.Hints{ReadOnly: true, ClosedWorld: true}}
}

func (jobOp) InputSchema() (*jsonschema.Schema, error) {
	return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}, nil
}

func (jobOp) OutputSchema() (*jsonschema.Schema, error) { return nil, nil }

func (o jobOp) Invoke(ctx context.Context, _ *providers.Call, args json.RawMessage) (any, error) {
	m := map[string]any{}
	_ = json.Unmarshal(args, &m)
	return o.run(ctx, m)
}

func jobText(s string) *providers.ContentResult {
	b, _ := json.Marshal(map[string]any{"type": "text", "text": s})
	return &providers.ContentResult{Content: []json.RawMessage{b}}
}

// jobAsk asks the calling client one form and returns the answered name.
func jobAsk(ctx context.Context, message string) (string, error) {
	c := providers.CallerFrom(ctx)
	if c == nil {
		return "", errors.New("no client to ask")
	}
	raw, err := c.Ask(ctx, "elicitation/create", json.RawMessage(`{"mode":"form","message":"`+message+`","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`))
	if err != nil {
		return "", err
	}
	var a struct {
		Action  string `json:"action"`
		Content struct {
			Name string `json:"name"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", err
	}
	return a.Action + ":" + a.Content.Name, nil
}

// jobsSpec is the jobs provider: greet (never a task), wait (until release or its
// cancellation), tool_error (a tool result with isError), broken (an internal error),
// required (only as a task), two_questions (asks two forms at once within its task),
// name_first (asks a name before its task), ask_name (asks a name within its task).
func jobsSpec(release <-chan struct{}) providers.Spec {
	ops := []providers.Op{
		jobOp{name: "jobs_quick", run: func(context.Context, map[string]any) (*providers.ContentResult, error) {
			return jobText("quick"), nil
		}},
		jobOp{name: "jobs_greet", task: providers.TaskForbidden, run: func(_ context.Context, args map[string]any) (*providers.ContentResult, error) {
			return jobText(fmt.Sprintf("Hello, %v!", args["name"])), nil
		}},
		jobOp{name: "jobs_wait", task: providers.TaskPreferred, run: func(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-release:
				return jobText("waited"), nil
			}
		}},
		jobOp{name: "jobs_tool_error", task: providers.TaskPreferred, run: func(context.Context, map[string]any) (*providers.ContentResult, error) {
			r := jobText("the job failed")
			r.IsError = true
			return r, nil
		}},
		jobOp{name: "jobs_broken", task: providers.TaskPreferred, run: func(context.Context, map[string]any) (*providers.ContentResult, error) {
			return nil, switchboard.Internal(errors.New("broken on purpose"))
		}},
		jobOp{name: "jobs_required", task: providers.TaskRequired, run: func(context.Context, map[string]any) (*providers.ContentResult, error) {
			return jobText("required done"), nil
		}},
		jobOp{name: "jobs_two_questions", task: providers.TaskPreferred, run: func(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
			var wg sync.WaitGroup
			answers := make([]string, 2)
			errs := make([]error, 2)
			for i := range answers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					answers[i], errs[i] = jobAsk(ctx, fmt.Sprintf("question %d", i+1))
				}()
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				return nil, err
			}
			sort.Strings(answers)
			return jobText(strings.Join(answers, " ")), nil
		}},
		jobOp{name: "jobs_ask_name", task: providers.TaskPreferred, run: func(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
			name, err := jobAsk(ctx, "your name?")
			if err != nil {
				return nil, err
			}
			return jobText("Hello, " + name), nil
		}},
		jobOp{name: "jobs_name_first", task: providers.TaskRequired, asksFirst: true, run: func(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
			name, err := jobAsk(ctx, "your name?")
			if err != nil {
				return nil, err
			}
			providers.ContinueAsTask(ctx)
			return jobText("Hello, " + name), nil
		}},
	}
	return providers.Spec{Name: "jobs", Title: "Jobs", Description: "Test jobs.", Connectionless: true, OwnNames: true, Operations: ops}
}

// modernClient posts 2026-07-28 requests as ann (or the key's principal), declaring
// the tasks extension or not.
type modernClient struct {
	t     *testing.T
	url   string
	tasks bool
	key   string // keyAnn when empty
}

func (c modernClient) post(method string, params map[string]any, header map[string]string) map[string]any {
	c.t.Helper()
	caps := map[string]any{"elicitation": map[string]any{}}
	if c.tasks {
		caps["extensions"] = map[string]any{TasksExtension: map[string]any{}}
	}
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": caps}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	key := c.key
	if key == "" {
		key = keyAnn
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
	req.Header.Set(mcp.HeaderMethod, method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set(mcp.HeaderName, name)
	}
	if id, ok := params["taskId"].(string); ok {
		req.Header.Set(mcp.HeaderName, id)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if i := strings.Index(string(raw), "data: "); i >= 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw = []byte(strings.TrimSpace(strings.SplitN(string(raw[i+6:]), "\n", 2)[0]))
	}
	var msg map[string]any
	if err := json.Unmarshal(raw, &msg); err != nil {
		c.t.Fatalf("%s: status %d %s", method, resp.StatusCode, raw)
	}
	return msg
}

// result returns a response's result, failing the test on an error.
func (c modernClient) result(method string, params map[string]any) map[string]any {
	c.t.Helper()
	msg := c.post(method, params, nil)
	res, ok := msg["result"].(map[string]any)
	if !ok {
		c.t.Fatalf("%s %v = %v, want a result", method, params, msg)
	}
	return res
}

func (c modernClient) call(tool string, args map[string]any) map[string]any {
	c.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	return c.result("tools/call", map[string]any{"name": tool, "arguments": args})
}

// settled polls tasks/get until the task leaves working.
func (c modernClient) settled(id string) map[string]any {
	c.t.Helper()
	var got map[string]any
	testwait.Until(c.t, "task "+id+" to leave working", func() bool {
		got = c.result("tasks/get", map[string]any{"taskId": id})
		return got["status"] != "working"
	})
	return got
}

func rpcCode(msg map[string]any) int {
	e, _ := msg["error"].(map[string]any)
	code, _ := e["code"].(float64)
	return int(code)
}

func resultText(res any) string {
	m, _ := res.(map[string]any)
	content, _ := m["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	block, _ := content[0].(map[string]any)
	s, _ := block["text"].(string)
	return s
}

// TestModernTasks runs the tasks extension of 2026-07-28: the server decides which
// calls are tasks (by the tool's task support and the client's declaration), answers
// them with a flat CreateTaskResult, and tasks/get inlines the outcome: a tool's error
// as a completed task with isError, the hub's failure as a failed one; input the task's
// tool asks is the task's inputRequests, answered through tasks/update one by one.
func TestModernTasks(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		release := make(chan struct{})
		if err := e.reg.Register(jobsSpec(release)); err != nil {
			t.Fatal(err)
		}
		url := e.srv.URL + "/mcp/" + e.ann.TenantSlug
		plain := modernClient{t: t, url: url}
		c := modernClient{t: t, url: url, tasks: true}

		// Listed: each tool's execution.taskSupport.
		support := map[string]any{}
		for _, tool := range c.result("tools/list", nil)["tools"].([]any) {
			m := tool.(map[string]any)
			if ex, ok := m["execution"].(map[string]any); ok {
				support[m["name"].(string)] = ex["taskSupport"]
			} else {
				support[m["name"].(string)] = nil
			}
		}
		for name, want := range map[string]any{"jobs_greet": nil, "jobs_quick": "optional", "jobs_wait": "optional", "jobs_required": "required"} {
			if got, ok := support[name]; !ok || got != want {
				t.Errorf("tools/list: %s taskSupport = %v (listed %v), want %v", name, got, ok, want)
			}
		}

		// A tool that needs a task, from a client that does not take tasks: -32021.
		msg := plain.post("tools/call", map[string]any{"name": "jobs_required", "arguments": map[string]any{}}, nil)
		if rpcCode(msg) != mcp.MISSING_REQUIRED_CLIENT_CAPABILITY {
			t.Fatalf("required tool without the extension = %v, want -32021", msg)
		}
		if data, _ := json.Marshal(msg["error"].(map[string]any)["data"]); string(data) != `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}` {
			t.Errorf("required tool without the extension: data = %s, want requiredCapabilities naming the extension", data)
		}
		// A task-supporting tool from such a client answers directly.
		close(release)
		if res := plain.call("jobs_wait", nil); res["resultType"] != "complete" || res["taskId"] != nil || resultText(res) != "waited" {
			t.Errorf("optional tool without the extension = %v, want its direct result", res)
		}

		// A tool that never runs as a task answers directly, a legacy task param notwithstanding.
		res := c.result("tools/call", map[string]any{"name": "jobs_greet", "arguments": map[string]any{"name": "World"}, "task": map[string]any{"ttl": 1000}})
		if res["resultType"] != "complete" || res["taskId"] != nil || resultText(res) != "Hello, World!" {
			t.Errorf("forbidden tool = %v, want its direct result", res)
		}

		// A tool that may run as a task but ends soon (the default) answers directly:
		// the server decides, and it decides no task for it.
		res = c.result("tools/call", map[string]any{"name": "jobs_quick", "arguments": map[string]any{}})
		if res["resultType"] != "complete" || res["taskId"] != nil || resultText(res) != "quick" {
			t.Errorf("optional tool from a client that takes tasks = %v, want its direct result", res)
		}

		// A task: flat, then completed with its result inlined.
		created := c.call("jobs_required", nil)
		if created["resultType"] != "task" || created["task"] != nil || created["taskId"] == nil || created["status"] == nil || created["requestState"] != nil {
			t.Fatalf("required tool = %v, want a flat CreateTaskResult", created)
		}
		if _, ok := created["ttlMs"]; !ok || created["pollIntervalMs"] == nil {
			t.Errorf("CreateTaskResult = %v, want ttlMs and pollIntervalMs", created)
		}
		done := c.settled(created["taskId"].(string))
		if done["status"] != "completed" || resultText(done["result"]) != "required done" || done["resultType"] != "complete" {
			t.Errorf("tasks/get = %v, want completed with the result inlined", done)
		}

		// A tool's error is a completed task with isError; the hub's failure a failed one.
		done = c.settled(c.call("jobs_tool_error", nil)["taskId"].(string))
		if r, _ := done["result"].(map[string]any); done["status"] != "completed" || r["isError"] != true {
			t.Errorf("tool error task = %v, want completed with result.isError", done)
		}
		done = c.settled(c.call("jobs_broken", nil)["taskId"].(string))
		if e, _ := done["error"].(map[string]any); done["status"] != "failed" || done["result"] != nil || e["code"] != float64(mcp.INTERNAL_ERROR) {
			t.Errorf("failed task = %v, want failed with an inlined error and no result", done)
		}

		// Input the task's tool asks: both questions at once, answered one by one.
		id := c.call("jobs_two_questions", nil)["taskId"].(string)
		var waiting map[string]any
		testwait.Until(t, "two input requests", func() bool {
			waiting = c.result("tasks/get", map[string]any{"taskId": id})
			reqs, _ := waiting["inputRequests"].(map[string]any)
			return len(reqs) == 2
		})
		if waiting["status"] != "input_required" {
			t.Errorf("tasks/get = %v, want input_required", waiting)
		}
		var keys []string
		for k := range waiting["inputRequests"].(map[string]any) {
			keys = append(keys, k)
		}
		ack := c.result("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{keys[0]: map[string]any{"action": "accept", "content": map[string]any{"name": "a"}}, "unknown": map[string]any{}}})
		if len(ack) != 1 || ack["resultType"] != "complete" {
			t.Errorf("tasks/update = %v, want an empty ack", ack)
		}
		partial := c.result("tasks/get", map[string]any{"taskId": id})
		if reqs, _ := partial["inputRequests"].(map[string]any); partial["status"] != "input_required" || len(reqs) != 1 || reqs[keys[1]] == nil {
			t.Errorf("tasks/get after a partial update = %v, want input_required with %s only", partial, keys[1])
		}
		c.result("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{keys[1]: map[string]any{"action": "accept", "content": map[string]any{"name": "b"}}}})
		if done := c.settled(id); done["status"] != "completed" || resultText(done["result"]) != "accept:a accept:b" {
			t.Errorf("task after both answers = %v, want completed with both", done)
		}

		// A tool asking before its task: an input_required round, then the task.
		round := c.call("jobs_name_first", nil)
		reqs, _ := round["inputRequests"].(map[string]any)
		if round["resultType"] != "input_required" || round["taskId"] != nil || len(reqs) != 1 || round["requestState"] == nil {
			t.Fatalf("name_first round 1 = %v, want input_required without a task", round)
		}
		var key string
		for k := range reqs {
			key = k
		}
		created = c.result("tools/call", map[string]any{"name": "jobs_name_first", "arguments": map[string]any{}, "requestState": round["requestState"],
			"inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}}})
		if created["resultType"] != "task" || created["taskId"] == nil || created["requestState"] != nil || created["inputRequests"] != nil {
			t.Fatalf("name_first round 2 = %v, want the task", created)
		}
		if done := c.settled(created["taskId"].(string)); resultText(done["result"]) != "Hello, accept:Alice" {
			t.Errorf("name_first task = %v, want the name gathered before it", done)
		}
		// Its requestState does not serve twice.
		again := c.result("tools/call", map[string]any{"name": "jobs_name_first", "arguments": map[string]any{}, "requestState": round["requestState"],
			"inputResponses": map[string]any{key: map[string]any{"action": "accept"}}})
		if again["isError"] != true {
			t.Errorf("name_first with a used requestState = %v, want a tool error", again)
		}
	})
}

// TestModernTaskCancelAndRefusals cancels a 2026-07-28 task (an empty ack, also once
// it ended) and checks what the tasks extension refuses: an unknown task (-32602), the
// methods the version removed (-32601), a routing header naming another task (-32020),
// and tasks/* from a client without the extension (-32021).
func TestModernTaskCancelAndRefusals(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		if err := e.reg.Register(jobsSpec(make(chan struct{}))); err != nil {
			t.Fatal(err)
		}
		url := e.srv.URL + "/mcp/" + e.ann.TenantSlug
		c := modernClient{t: t, url: url, tasks: true}
		id := c.call("jobs_wait", nil)["taskId"].(string)
		if got := c.result("tasks/get", map[string]any{"taskId": id}); got["taskId"] != id {
			t.Errorf("tasks/get right after the task = %v", got)
		}
		for range 2 {
			if ack := c.result("tasks/cancel", map[string]any{"taskId": id}); len(ack) != 1 || ack["resultType"] != "complete" {
				t.Errorf("tasks/cancel = %v, want an empty ack", ack)
			}
		}
		if got := c.settled(id); got["status"] != "cancelled" {
			t.Errorf("cancelled task = %v, want cancelled", got)
		}
		if msg := c.post("tasks/get", map[string]any{"taskId": "run_unknown"}, nil); rpcCode(msg) != mcp.INVALID_PARAMS {
			t.Errorf("tasks/get of an unknown task = %v, want -32602", msg)
		}
		for _, method := range []string{"tasks/result", "tasks/list"} {
			if msg := c.post(method, map[string]any{"taskId": id}, nil); rpcCode(msg) != mcp.METHOD_NOT_FOUND {
				t.Errorf("%s = %v, want -32601", method, msg)
			}
		}
		if msg := c.post("tasks/get", map[string]any{"taskId": id}, map[string]string{mcp.HeaderName: "another"}); rpcCode(msg) != mcp.HEADER_MISMATCH {
			t.Errorf("tasks/get with Mcp-Name naming another task = %v, want -32020", msg)
		}
		plain := modernClient{t: t, url: url}
		for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
			if msg := plain.post(method, map[string]any{"taskId": id}, nil); rpcCode(msg) != mcp.MISSING_REQUIRED_CLIENT_CAPABILITY {
				t.Errorf("%s without the extension = %v, want -32021", method, msg)
			}
		}
	})
}

// TestRequiredTaskToolBefore20260728 lists a tool that runs only as a task with
// execution.taskSupport required on 2025-11-25 and refuses its call without a task as
// that version says (-32601).
func TestRequiredTaskToolBefore20260728(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		if err := e.reg.Register(jobsSpec(make(chan struct{}))); err != nil {
			t.Fatal(err)
		}
		c := e.connect(t, e.ann, keyAnn, "2025-11-25", nil)
		ctx := context.Background()
		list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		support := map[string]mcp.TaskSupport{}
		for _, tool := range list.Tools {
			if tool.Execution != nil {
				support[tool.Name] = tool.Execution.TaskSupport
			}
		}
		if support["jobs_required"] != mcp.TaskSupportRequired || support["jobs_wait"] != mcp.TaskSupportOptional || support["jobs_greet"] != "" {
			t.Errorf("taskSupport listed = %v, want jobs_required required, jobs_wait optional, jobs_greet none", support)
		}
		_, err = c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "jobs_required", Arguments: map[string]any{}}})
		if !errors.Is(err, mcp.ErrMethodNotFound) {
			t.Errorf("required tool without a task on 2025-11-25: err = %v, want -32601", err)
		}
	})
}
