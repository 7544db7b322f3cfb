package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// On 2026-07-28 tasks are the tasks extension (io.modelcontextprotocol/tasks), which
// the hub serves itself, as mcp-go knows only the tasks of 2025-11-25. The server
// decides which calls become tasks: a tools/call of a tool that runs as a task
// (optional or required, providers.Info.Task) from a client that declared the
// extension in the request's clientCapabilities is started as a run and answered at
// once with the task (a flat CreateTaskResult, resultType "task"); the task's id is
// the run's. tasks/get answers the task with its outcome inlined (result once
// completed, error once failed, inputRequests while it waits for the client, the
// questions of a workflow's run that waits for its person included),
// tasks/update hands the client's inputResponses to the run, tasks/cancel cancels
// it; tasks/result and tasks/list do not exist on that version. A tool's own error
// is a completed task whose result has isError; only a failure of the hub's
// (internal) fails the task. A required tool called by a client that did not declare
// the extension is refused with -32021. A tool that asks before its task
// (providers.Info.AsksBeforeTask) is answered with its questions, input_required
// rounds as a direct call's, until it continues as a task. The input requests of a
// task wait on the node that runs it, which records them with the run whenever they
// change (runs.Executor.RecordInputRequests), so tasks/get on any node shows them; a
// tasks/update on another node reaches it over the fleet's relay (task_nodes.go). The
// answers to the questions a call asks before its task (requestState "task.…") are
// taken only by the node that asked them.

// modernTaskPoll is the pollIntervalMs a task suggests, at least this.
const modernTaskPoll = 500 * time.Millisecond

// modernTaskParams are the params of tools/call and tasks/* as the tasks layer reads them.
type modernTaskParams struct {
	Name           string                     `json:"name"`
	Arguments      json.RawMessage            `json:"arguments"`
	RequestState   string                     `json:"requestState"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	TaskID         string                     `json:"taskId"`
	// Task is the legacy hint of a client that asks for a task (tolerated on 2026-07-28).
	Task json.RawMessage `json:"task"`
}

// declaresTasks reports whether a request's client capabilities declare the tasks extension.
func declaresTasks(msg mcptransport.Message) bool {
	if caps := msg.Params.Meta.ClientCapabilities(); caps != nil {
		_, ok := caps.Extensions[TasksExtension]
		return ok
	}
	return false
}

// modernTasks returns the extension that serves the tasks of 2026-07-28, if any.
func (a *Adapter) modernTasks() *runsExt {
	for _, e := range a.opts.Extensions {
		if e.tasks != nil {
			return e.tasks
		}
	}
	return nil
}

// serveModern answers the tasks extension's part of a 2026-07-28 request and reports
// whether it did: tasks/get, tasks/update and tasks/cancel, and a tools/call that
// becomes a task (or that needs one and cannot have it).
func (x *runsExt) serveModern(w http.ResponseWriter, r *http.Request, s *scope, msg mcptransport.Message) bool {
	var params modernTaskParams
	switch msg.Method {
	case string(mcp.MethodToolsCall):
		if json.Unmarshal(msg.RawParams, &params) != nil || params.Name == "" {
			return false
		}
		return x.serveModernCall(w, r, s, msg, params)
	case string(mcp.MethodTasksGet), string(mcp.MethodTasksCancel), "tasks/update":
	default:
		return false
	}
	if err := json.Unmarshal(msg.RawParams, &params); err != nil {
		mcptransport.WriteRPCError(w, http.StatusBadRequest, msg.ID, mcp.INVALID_PARAMS,
			"params must hold taskId (a string) and, for tasks/update, inputResponses (an object): "+err.Error())
		return true
	}
	if params.TaskID == "" {
		mcptransport.WriteRPCError(w, http.StatusBadRequest, msg.ID, mcp.INVALID_PARAMS, "params.taskId must be a non-empty string")
		return true
	}
	if !taskHeadersMatch(w, r, msg, params.TaskID) {
		return true
	}
	p, ok := switchboard.PrincipalFrom(r.Context())
	if !ok {
		mcptransport.WriteRPCError(w, http.StatusInternalServerError, msg.ID, mcp.INTERNAL_ERROR, "no principal")
		return true
	}
	ctx := r.Context()
	v, err := x.o.Runs.Get(ctx, p, params.TaskID)
	if err != nil {
		if switchboard.CodeOf(err) == switchboard.CodeNotFound {
			mcptransport.WriteRPCError(w, http.StatusOK, msg.ID, mcp.INVALID_PARAMS, "unknown taskId "+params.TaskID+": no task of yours has this id")
		} else {
			x.o.Logger.ErrorContext(ctx, "read task", "task", params.TaskID, "err", err)
			mcptransport.WriteRPCError(w, http.StatusOK, msg.ID, mcp.INTERNAL_ERROR, "internal error")
		}
		return true
	}
	switch msg.Method {
	case string(mcp.MethodTasksGet):
		writeRPCResult(w, msg.ID, x.detailedTask(ctx, s, p, v))
	case string(mcp.MethodTasksCancel):
		// Cancelling a task that ended already is acknowledged alike: it stays as it ended.
		if !v.State.Final() {
			if _, err := x.o.Runs.Cancel(context.WithoutCancel(ctx), p, v.ID); err != nil && switchboard.CodeOf(err) != switchboard.CodeConflict {
				x.o.Logger.ErrorContext(ctx, "cancel task", "task", v.ID, "err", err)
				mcptransport.WriteRPCError(w, http.StatusOK, msg.ID, mcp.INTERNAL_ERROR, "internal error")
				return true
			}
		}
		writeRPCResult(w, msg.ID, map[string]any{"resultType": mcp.ResultTypeComplete})
	default: // tasks/update
		if err := x.update(ctx, s, p, v, params.InputResponses); err != nil {
			mcptransport.WriteRPCError(w, http.StatusOK, msg.ID, mcp.INVALID_PARAMS, errorText(err))
			return true
		}
		writeRPCResult(w, msg.ID, map[string]any{"resultType": mcp.ResultTypeComplete})
	}
	return true
}

// taskHeadersMatch checks the routing headers of a tasks/* request: Mcp-Method names
// the method and Mcp-Name the task (SEP-2243, SEP-2663); a different one, or no
// Mcp-Method, is refused with -32020 (400). A request without Mcp-Name is served, as
// clients that route tasks by the body (the official Go SDK's) send none.
func taskHeadersMatch(w http.ResponseWriter, r *http.Request, msg mcptransport.Message, taskID string) bool {
	if got := r.Header.Get(mcp.HeaderMethod); got != msg.Method {
		mcptransport.WriteRPCError(w, http.StatusBadRequest, msg.ID, mcp.HEADER_MISMATCH,
			fmt.Sprintf("header %s %q does not match the request's method %q", mcp.HeaderMethod, got, msg.Method))
		return false
	}
	if len(r.Header.Values(mcp.HeaderName)) == 0 {
		return true
	}
	name, ok := mcp.DecodeHeaderValue(r.Header.Get(mcp.HeaderName))
	if !ok || name != taskID {
		mcptransport.WriteRPCError(w, http.StatusBadRequest, msg.ID, mcp.HEADER_MISMATCH,
			fmt.Sprintf("header %s %q does not match params.taskId %q", mcp.HeaderName, r.Header.Get(mcp.HeaderName), taskID))
		return false
	}
	return true
}

// serveModernCall answers a tools/call that runs as a task: one of a tool that prefers
// or requires one, from a client that declared the extension, is started as a run and
// answered with the task (an optional tool's call only when the client's legacy task
// hint asks for one: else it answers directly, the server's choice); one of a tool that needs a task, from a client that did not, is
// refused with -32021. Any other call (and a call answering a round of input
// requests) goes on to the tool as usual.
func (x *runsExt) serveModernCall(w http.ResponseWriter, r *http.Request, s *scope, msg mcptransport.Message, params modernTaskParams) bool {
	ctx := r.Context()
	if s.ensure(ctx) != nil {
		return false // the usual path reports it
	}
	t, ok := s.hubTool(params.Name)
	if !ok || t.binding.Tool == nil {
		return false
	}
	support := t.binding.Tool.Info.Task
	if !declaresTasks(msg) {
		if support == providers.TaskRequired {
			writeMissingTasks(w, msg)
			return true
		}
		return false
	}
	asked := len(params.Task) > 0 && string(params.Task) != "null"
	if support == providers.TaskForbidden || support == providers.TaskOptional && !asked {
		return false // it answers at once: the server decides no task for it
	}
	taskState := strings.HasPrefix(params.RequestState, taskStatePrefix)
	if !taskState && (params.RequestState != "" || len(params.InputResponses) > 0) {
		return false // a round of input requests of a direct call (input_requests.go)
	}
	sc := s.Scope()
	if !taskState && s.asksToConnect(ctx) && t.binding.Unconnected() {
		return false // the person connects an account first (connect.go)
	}
	if err := mcp.ValidateStandardHeaders(r.Header.Get, mcp.ProtocolVersion20260728, mcp.MethodToolsCall, msg.RawParams); err != nil {
		mcptransport.WriteRPCError(w, http.StatusBadRequest, msg.ID, mcp.HEADER_MISMATCH, err.Error())
		return true
	}
	p, ok := switchboard.PrincipalFrom(ctx)
	if !ok {
		return false
	}
	args := params.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	rtr := s.adapter.opts.Router
	rreq, _, err := sc.Resolve(ctx, params.Name, args)
	if err != nil {
		rtr.Refused(p, router.Request{Tool: params.Name, Args: args}, err)
		writeRPCResult(w, msg.ID, completeResult(x.hubError(ctx, sc, err)))
		return true
	}
	if taskState {
		// The client answers the questions a call asked before its task.
		id := strings.TrimPrefix(params.RequestState, taskStatePrefix)
		v, err := x.o.Runs.Get(ctx, p, id)
		in := x.inputs.get(id)
		if err != nil || in == nil || v.Tool != rreq.Tool || in.isCreated() {
			err := switchboard.Invalid("requestState", "names no call of this tool waiting for your answers here (it was answered, ended or expired); call the tool again without inputResponses")
			writeRPCResult(w, msg.ID, completeResult(x.hubError(ctx, sc, err)))
			return true
		}
		in.answer(params.InputResponses)
		x.awaitCreation(ctx, w, msg, p, v, in)
		return true
	}
	in := newTaskInputs(p)
	v, err := x.o.Runs.Start(context.WithoutCancel(ctx), p, runs.Call{Tool: rreq.Tool, ConnectionID: rreq.ConnectionID, Args: rreq.Args, Origin: runs.OriginTask, Caller: in})
	if err != nil {
		writeRPCResult(w, msg.ID, completeResult(x.hubError(ctx, sc, err)))
		return true
	}
	x.inputs.add(v.ID, in)
	in.bind(x.recordInputs(p, v.ID))
	go x.forgetInputs(p, v.ID, in)
	if t.binding.Tool.Info.AsksBeforeTask {
		// Answered with the task once the tool has its input; a client that does not
		// come back with its answers leaves the call to be cancelled.
		time.AfterFunc(pendingLifetime, func() {
			if !in.isCreated() {
				_, _ = x.o.Runs.Cancel(context.Background(), p, v.ID)
			}
		})
		x.awaitCreation(ctx, w, msg, p, v, in)
		return true
	}
	in.create()
	writeRPCResult(w, msg.ID, x.createTaskResult(v, in))
	return true
}

// taskStatePrefix starts the requestState of a call that asks before its task: the
// run's id follows (only its principal may read or answer it).
const taskStatePrefix = "task."

// createTaskResult is the answer of a tools/call that created a task.
func (x *runsExt) createTaskResult(v runs.View, in *taskInputs) map[string]any {
	task := x.taskFields(v, in)
	task["resultType"] = "task"
	return task
}

// awaitCreation answers a call that asks before its task: with its open questions
// (input_required, requestState naming the run), or with the task once the tool
// continues as one or ended. When the client's request ends first, nothing is answered.
func (x *runsExt) awaitCreation(ctx context.Context, w http.ResponseWriter, msg mcptransport.Message, p switchboard.Principal, v runs.View, in *taskInputs) {
	for {
		in.mu.Lock()
		escalated, open := in.escalated || in.ended, len(in.asks) > 0
		in.mu.Unlock()
		switch {
		case escalated:
			in.create()
			if now, err := x.o.Runs.Get(context.WithoutCancel(ctx), p, v.ID); err == nil {
				v = now
			}
			writeRPCResult(w, msg.ID, x.createTaskResult(v, in))
			return
		case open:
			writeRPCResult(w, msg.ID, map[string]any{"resultType": mcp.ResultTypeInputRequired,
				"inputRequests": in.open(), "requestState": taskStatePrefix + v.ID})
			return
		}
		select {
		case <-in.changed:
		case <-ctx.Done():
			return
		}
	}
}

// forgetInputs drops a task's input requests once its run ended.
func (x *runsExt) forgetInputs(p switchboard.Principal, id string, in *taskInputs) {
	ctx, cancel := context.WithTimeout(context.Background(), taskWait)
	defer cancel()
	for ctx.Err() == nil {
		v, err := x.o.Runs.Wait(ctx, p, id, x.o.TaskPoll)
		if err == nil && v.State.Final() || switchboard.CodeOf(err) == switchboard.CodeNotFound {
			break
		}
		t := time.NewTimer(x.o.TaskPoll)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	in.end()
	x.inputs.remove(id)
}

// completeResult is a direct call's result as 2026-07-28 answers it.
func completeResult(res *mcp.CallToolResult) *mcp.CallToolResult {
	res.ResultType = mcp.ResultTypeComplete
	return res
}

// taskStatus is a run's state as a task's status.
func taskStatus(s runs.State) string {
	if s == runs.StateCanceled {
		return "cancelled"
	}
	return string(s)
}

// taskFields are the Task fields of a run (those of CreateTaskResult and DetailedTask).
func (x *runsExt) taskFields(v runs.View, in *taskInputs) map[string]any {
	poll := x.o.TaskPoll
	if poll < modernTaskPoll {
		poll = modernTaskPoll
	}
	status := taskStatus(v.State)
	if v.State == runs.StateWorking && (in != nil && in.pending() || in == nil && recordedInputs(v) != nil) {
		status = string(mcp.TaskStatusInputRequired)
	}
	return map[string]any{
		"taskId":         v.ID,
		"status":         status,
		"createdAt":      v.CreatedAt.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt":  v.UpdatedAt.UTC().Format(time.RFC3339Nano),
		"ttlMs":          nil, // kept as long as the hub keeps its runs
		"pollIntervalMs": poll.Milliseconds(),
	}
}

// confirmationKey is the input request of a task whose run waits for its confirmation.
const confirmationKey = "confirmation"

// detailedTask is tasks/get's answer: the task with its outcome inlined.
func (x *runsExt) detailedTask(ctx context.Context, s *scope, p switchboard.Principal, v runs.View) map[string]any {
	in := x.inputs.get(v.ID)
	task := x.taskFields(v, in)
	task["resultType"] = mcp.ResultTypeComplete
	switch {
	case v.State == runs.StateCompleted:
		task["result"] = x.taskResult(ctx, s, p, v)
	case v.State == runs.StateFailed && v.Error != nil && v.Error.Code != string(switchboard.CodeInternal):
		// The tool ran and failed (the upstream refused, the arguments were wrong): a
		// tool's error, as a direct call answers it.
		task["status"] = string(mcp.TaskStatusCompleted)
		task["result"] = mcp.NewToolResultError(v.Error.Message)
	case v.State == runs.StateFailed:
		msg := "the task failed"
		if v.Error != nil {
			msg = v.Error.Message
		}
		task["error"] = map[string]any{"code": mcp.INTERNAL_ERROR, "message": msg}
	case v.State == runs.StateCanceled && v.Error != nil:
		task["statusMessage"] = v.Error.Message
	case v.State == runs.StateInputRequired:
		task["statusMessage"] = inputStatusMessage(v)
		if x.pausedFlow(v) {
			if reqs := x.flowInputRequests(ctx, p, v); reqs != nil {
				task["inputRequests"] = reqs
			}
		}
		if v.Elicitation != nil && !v.Paused() && v.Elicitation.Action == "" {
			task["inputRequests"] = map[string]any{confirmationKey: map[string]any{
				"method": string(mcp.MethodElicitationCreate),
				"params": map[string]any{"mode": "form", "message": v.Elicitation.Message,
					"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}}},
			}}
		}
	case in != nil && in.pending():
		// Read once more: a request asked since taskFields looked shows with its status.
		if reqs := in.open(); len(reqs) > 0 {
			task["inputRequests"] = reqs
			task["status"] = string(mcp.TaskStatusInputRequired)
		}
	case in == nil && v.State == runs.StateWorking && recordedInputs(v) != nil:
		// Running on another node, which recorded them with the run.
		task["inputRequests"] = recordedInputs(v)
	}
	return task
}

// taskResult is a completed task's result: the run's output as a direct call would
// have answered it.
func (x *runsExt) taskResult(ctx context.Context, s *scope, p switchboard.Principal, v runs.View) *mcp.CallToolResult {
	if x.o.Answer != nil {
		if res, ok := x.o.Answer(ctx, p, v); ok {
			return completeResult(contentResult(res))
		}
	}
	if t, ok := s.hubTool(v.Tool); ok {
		if cr, ok := recordedContent(t.binding.Tool, v.Output); ok {
			return completeResult(contentResult(cr))
		}
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(v.Output))}}
	if len(v.Output) > 0 && v.Output[0] == '{' {
		res.StructuredContent = json.RawMessage(v.Output)
	}
	return completeResult(res)
}

// recordedContent reads the output a run of the tool recorded as the MCP content it
// answered in: that of a tool without an output schema, or of one with (run_workflow)
// whose content comes with the structured content the schema describes.
func recordedContent(t *providers.Tool, output json.RawMessage) (*providers.ContentResult, bool) {
	if t == nil {
		return nil, false
	}
	var cr providers.ContentResult
	if json.Unmarshal(output, &cr) != nil || cr.Content == nil || len(t.OutputSchema) > 0 && len(cr.StructuredContent) == 0 {
		return nil, false
	}
	return &cr, true
}

// update hands a task the client's inputResponses: each answers the input request
// under its key (others are ignored), on this node or, relayed, on the node running
// the task; and the confirmation of a run that waits for one accepts, declines or
// cancels it. v is the caller's own run (Runs.Get checked it).
func (x *runsExt) update(ctx context.Context, s *scope, p switchboard.Principal, v runs.View, responses map[string]json.RawMessage) error {
	if raw, ok := responses[confirmationKey]; ok && v.State == runs.StateInputRequired && !v.Paused() {
		var ans struct {
			Action string `json:"action"`
		}
		if err := json.Unmarshal(raw, &ans); err != nil || ans.Action == "" {
			return switchboard.Invalid("inputResponses."+confirmationKey, "must be an elicitation result with an action (accept, decline or cancel)")
		}
		if _, err := x.o.Runs.Answer(context.WithoutCancel(ctx), p, v.ID, ans.Action); err != nil {
			return err
		}
	}
	if x.pausedFlow(v) {
		return x.answerFlowInputs(ctx, p, v, responses)
	}
	if in := x.inputs.get(v.ID); in != nil {
		in.answer(responses)
		return nil
	}
	return x.relayInputs(ctx, s.adapter, p, v, responses)
}

// writeRPCResult writes a JSON-RPC result.
func writeRPCResult(w http.ResponseWriter, id json.RawMessage, result any) {
	body, err := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": id, "result": result})
	if err != nil {
		mcptransport.WriteRPCError(w, http.StatusInternalServerError, id, mcp.INTERNAL_ERROR, "encode result: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// taskInputs is the client a task's run turns to (providers.Caller): what the run asks
// waits, under a key of its own, for the client's tasks/update. Log messages have no
// stream to go to and are dropped. It lives on the node that runs the task, and
// records the open requests with the run for the other nodes.
type taskInputs struct {
	// tenant and principal are the task's owner, the only one whose answers count.
	tenant    switchboard.TenantID
	principal string
	mu        sync.Mutex
	n         int
	asks      map[string]*inputAsk
	// record stores the open requests with the run (nil: none open), once the run
	// exists (bind); recorded says the last one stored some.
	record   func(json.RawMessage)
	recorded bool
	// recording serializes the records, so the last stored is the latest.
	recording sync.Mutex
	// changed is signalled when a request is asked, the call continues as a task, or
	// it ended.
	changed chan struct{}
	// escalated: the tool continues as a task (ContinueAsTask); ended: its run ended;
	// created: the client was given the task.
	escalated, ended, created bool
}

func newTaskInputs(p switchboard.Principal) *taskInputs {
	return &taskInputs{tenant: p.TenantID, principal: p.ID(), asks: map[string]*inputAsk{}, changed: make(chan struct{}, 1)}
}

// owns reports whether the task is the principal's (by tenant and Principal.ID).
func (in *taskInputs) owns(tenant switchboard.TenantID, principal string) bool {
	return in.tenant == tenant && in.principal == principal
}

// bind has the inputs record their open requests with record from now on (the run
// exists), those asked already included.
func (in *taskInputs) bind(record func(json.RawMessage)) {
	in.mu.Lock()
	in.record = record
	in.mu.Unlock()
	in.sync()
}

// sync records the open requests as they are now, when they differ from none and
// from what was recorded last (none, after none, is not written again). Only requests
// asked or answered write: a task that asks nothing never does.
func (in *taskInputs) sync() {
	in.recording.Lock()
	defer in.recording.Unlock()
	in.mu.Lock()
	record, open, recorded := in.record, len(in.asks) > 0, in.recorded
	in.mu.Unlock()
	if record == nil || !open && !recorded {
		return
	}
	var raw json.RawMessage
	if open {
		raw, _ = json.Marshal(in.open()) // a map of strings and raw JSON params
	}
	record(raw)
	in.mu.Lock()
	in.recorded = open
	in.mu.Unlock()
}

func (in *taskInputs) signal() {
	select {
	case in.changed <- struct{}{}:
	default:
	}
}

// ContinueAsTask has a call that asks before its task answered with the task
// (providers.ContinueAsTask).
func (in *taskInputs) ContinueAsTask() {
	in.mu.Lock()
	in.escalated = true
	in.mu.Unlock()
	in.signal()
}

func (in *taskInputs) end() {
	in.mu.Lock()
	in.ended = true
	in.mu.Unlock()
	in.signal()
}

func (in *taskInputs) create() {
	in.mu.Lock()
	in.created = true
	in.mu.Unlock()
}

func (in *taskInputs) isCreated() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.created
}

func (*taskInputs) Log(map[string]any) {}

// Ask waits for the client's answer to the run's request, or for the run's end.
func (in *taskInputs) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	a := &inputAsk{method: method, params: params, reply: make(chan inputAnswer, 1)}
	in.mu.Lock()
	in.n++
	key := fmt.Sprintf("input_%d", in.n)
	in.asks[key] = a
	in.mu.Unlock()
	in.signal()
	in.sync()
	defer func() {
		in.mu.Lock()
		delete(in.asks, key)
		in.mu.Unlock()
		in.sync()
	}()
	select {
	case ans := <-a.reply:
		return ans.raw, ans.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// pending reports whether a request waits for the client's answer.
func (in *taskInputs) pending() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.asks) > 0
}

// open returns the requests waiting for the client's answers, by key.
func (in *taskInputs) open() map[string]any {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make(map[string]any, len(in.asks))
	for key, a := range in.asks {
		req := map[string]any{"method": a.method}
		if a.method != string(mcp.MethodListRoots) && len(a.params) > 0 {
			req["params"] = a.params
		}
		out[key] = req
	}
	return out
}

// answer gives each waiting request its response, when the client sent one.
func (in *taskInputs) answer(responses map[string]json.RawMessage) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for key, raw := range responses {
		a, ok := in.asks[key]
		if !ok {
			continue
		}
		delete(in.asks, key)
		if len(raw) == 0 || string(raw) == "null" {
			a.reply <- inputAnswer{err: fmt.Errorf("the client's answer to %s (inputResponses.%s) is empty", a.method, key)}
			continue
		}
		a.reply <- inputAnswer{raw: raw}
	}
}

// taskInputsByRun are the inputs of the tasks running on this node, by run id.
type taskInputsByRun struct {
	mu sync.Mutex
	m  map[string]*taskInputs
}

func (t *taskInputsByRun) add(id string, in *taskInputs) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]*taskInputs{}
	}
	t.m[id] = in
}

func (t *taskInputsByRun) get(id string) *taskInputs {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[id]
}

func (t *taskInputsByRun) remove(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, id)
}
