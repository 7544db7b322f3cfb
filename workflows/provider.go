package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// Provider is the name of the provider whose tools are a tenant's saved workflows.
const Provider = "workflows"

// DefaultToolWait bounds how long a call of a workflow's tool waits for its run to end
// before it answers with the run's id to follow.
const DefaultToolWait = 30 * time.Second

// Spec is the provider of saved workflows: each of a tenant's workflows is a trio of
// tools, run_flow__<name> (runs it and waits), run_flow_async__<name> (starts it and
// answers its instance_id) and query_flow__<name> (a run's status and output), the
// same three for its version (…_<version>), and workflow_<name> where the tenant's
// setting keeps that name too (Store.SetToolAliases). It runs on no connection (each
// step runs on its own) and asks the person once for the whole run when the caller's
// confirm policy covers a step (ConfirmsItself). Register it with the registry the
// router reads.
func (s *Service) Spec() providers.Spec {
	return providers.Spec{Name: Provider, Title: "Workflows", Connectionless: true, ConfirmsItself: true, TenantTools: s.tenantTools}
}

// toolCache keeps each workflow's tools by its version, so their schemas are compiled
// once.
type toolCache struct {
	mu    sync.Mutex
	tools map[string]cachedTools // tenant + "\x00" + name
}

type cachedTools struct {
	id      string
	kept    []int64
	version int64
	state   string
	aliases bool
	tools   []*providers.Tool
}

// tenantTools lists the tenant's workflows as tools: those of active workflows, and
// for a while those of deactivated and deleted ones, marked so (ToolGrace).
func (s *Service) tenantTools(ctx context.Context, tenant switchboard.TenantID) ([]*providers.Tool, error) {
	ws, err := s.Store.listForTools(ctx, tenant, s.toolGrace())
	if err != nil {
		return nil, err
	}
	aliases, err := s.Store.ToolAliases(ctx, tenant)
	if err != nil {
		return nil, err
	}
	kept, err := s.Store.keptVersions(ctx, tenant)
	if err != nil {
		return nil, err
	}
	out := make([]*providers.Tool, 0, 3*len(ws))
	seen := map[string]bool{}
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	if s.cache.tools == nil {
		s.cache.tools = map[string]cachedTools{}
	}
	for _, w := range ws {
		key := string(tenant) + "\x00" + w.Name
		versions := keptOf(w, kept[w.ID])
		c, ok := s.cache.tools[key]
		if !ok || c.id != w.ID || c.version != w.Version || c.state != w.lifecycle() || c.aliases != aliases || !slices.Equal(c.kept, versionNumbers(versions)) {
			c = cachedTools{id: w.ID, version: w.Version, state: w.lifecycle(), aliases: aliases, kept: versionNumbers(versions), tools: s.Tools(w, aliases, versions...)}
			s.cache.tools[key] = c
		}
		for _, t := range c.tools {
			// A name a workflow's latest tools and another's versioned tools share
			// (a_2 and a at version 2) is the first one's.
			if !seen[t.Name] {
				seen[t.Name] = true
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// The kinds of a workflow's tools (their _meta kind).
const (
	// KindRun runs the workflow and waits for its end (run_flow__<name>).
	KindRun = "run_flow"
	// KindRunAsync starts its run and answers the instance_id (run_flow_async__<name>).
	KindRunAsync = "run_flow_async"
	// KindQuery answers a run's status and output (query_flow__<name>).
	KindQuery = "query_flow"
	// KindAlias is workflow_<name>, kept where the tenant's setting asks for it: it
	// runs the workflow and answers in ResultSchema.
	KindAlias = "workflow"
)

// FlowToolName is the name of a workflow's tool of that kind: of its latest version
// when version is 0, else of that version.
func FlowToolName(kind, name string, version int64) string {
	n := kind + "__" + name
	if kind == KindAlias {
		n = ToolPrefix + name
	}
	if version > 0 {
		n += "_" + strconv.FormatInt(version, 10)
	}
	return n
}

// RunToolName is the name of the tool that runs a workflow and waits: the tool its
// runs are recorded under.
func RunToolName(name string, version int64) string { return FlowToolName(KindRun, name, version) }

// ToolSchema is what a saved workflow's tool says of itself: its input schema (the
// workflow's parameters, else any object) and its description.
func ToolSchema(w Workflow) (input json.RawMessage, description string) {
	input = json.RawMessage(`{"type":"object"}`)
	if def, err := Parse([]byte(w.Definition)); err == nil && len(def.Parameters) > 0 && string(def.Parameters) != "null" {
		input = def.Parameters
	}
	desc := w.Description
	if desc == "" {
		desc = "Run the workflow " + w.Name + "."
	}
	return input, desc
}

// keptOf is the workflow's kept versions, its current one among them.
func keptOf(w Workflow, kept []Version) []Version {
	for _, v := range kept {
		if v.Version == w.Version {
			return kept
		}
	}
	return append(kept, Version{WorkflowID: w.ID, Version: w.Version, Definition: w.Definition})
}

func versionNumbers(vs []Version) []int64 {
	out := make([]int64, len(vs))
	for i, v := range vs {
		out[i] = v.Version
	}
	return out
}

// Tools are a saved workflow's tools: the trio of its latest version, the trio of
// each kept version (its current one when none is given), and workflow_<name> with
// aliases. A tool whose name would be too long is left out.
func (s *Service) Tools(w Workflow, aliases bool, kept ...Version) []*providers.Tool {
	var out []*providers.Tool
	kinds := []string{KindRun, KindRunAsync, KindQuery}
	for _, kind := range kinds {
		if t, err := s.flowTool(w, kind, 0); err == nil {
			out = append(out, t)
		}
	}
	if len(kept) == 0 {
		kept = []Version{{Version: w.Version, Definition: w.Definition}}
	}
	for _, v := range kept {
		wv := w
		wv.Definition = v.Definition
		for _, kind := range kinds {
			if t, err := s.flowTool(wv, kind, v.Version); err == nil {
				out = append(out, t)
			}
		}
	}
	if aliases {
		if t, err := s.flowTool(w, KindAlias, 0); err == nil {
			out = append(out, t)
		}
	}
	return out
}

// Tool is a saved workflow's tool that runs it and waits (run_flow__<name>).
func (s *Service) Tool(w Workflow) (*providers.Tool, error) { return s.flowTool(w, KindRun, 0) }

// flowTool builds one of a workflow's tools.
func (s *Service) flowTool(w Workflow, kind string, version int64) (*providers.Tool, error) {
	params, desc := ToolSchema(w)
	def, _ := Parse([]byte(w.Definition))
	var input, output json.RawMessage
	var err error
	hints := providers.Hints{Destructive: true}
	// The tools that wait for the run's end run as a task wherever the client takes
	// tasks (a run may take minutes, or wait for its person); the others answer at once.
	task := providers.TaskOptional
	switch kind {
	case KindRun, KindAlias:
		task = providers.TaskPreferred
	}
	switch kind {
	case KindRun:
		desc += " Runs the flow and waits for its end; answers its status, and its output once it completed."
		output = FlowOutputSchema(def, false)
	case KindRunAsync:
		desc += " (async) Starts the flow and answers its instance_id at once; follow it with " + FlowToolName(KindQuery, w.Name, version) + "."
		output = json.RawMessage(asyncOutputSchema)
	case KindQuery:
		desc = "Query the status and output of a run of the flow " + w.Name + " by its instance ID."
		input, output = json.RawMessage(queryInputSchema), FlowOutputSchema(def, true)
		hints = providers.Hints{ReadOnly: true, Idempotent: true, ClosedWorld: true}
	case KindAlias:
		desc += " (A workflow: answers with its result, or with a workflow_id to follow with switchboard_get_run when it takes longer.)"
		output = json.RawMessage(ResultSchema)
	}
	if input == nil {
		if input, err = withContextArg(params); err != nil {
			return nil, err
		}
	}
	switch w.lifecycle() {
	case LifecycleDeactivated:
		desc = "[DEACTIVATED] " + desc
	case LifecycleDeleted:
		desc = "[DELETED] " + desc
	}
	name := FlowToolName(kind, w.Name, version)
	op := &flowOp{svc: s, name: w.Name, version: version, kind: kind, state: w.lifecycle(),
		info: providers.Info{Name: w.Name, Title: "Workflow " + w.Name, Description: desc, Hints: hints, Task: task}}
	t, err := providers.NewConnectionTool(workflowSpec, name, op, input, output)
	if err != nil {
		return nil, err
	}
	// A flow's tools list their output schema whole, as the flow specification shows
	// them: output typed by the workflow's declared outputs, and the status's fields.
	t.ListedOutputSchema = output
	shown := w.Version
	if version > 0 {
		shown = version
	}
	t.Meta = map[string]any{"model_id": w.ID, "version": strconv.FormatInt(shown, 10), "model_name": w.Name, "kind": kind}
	return t, nil
}

// flowOp is one of a saved workflow's tools: it runs the workflow as the caller (and
// waits for its end, up to the Service's ToolWait), starts it, or reads one of the
// caller's runs of it.
type flowOp struct {
	svc     *Service
	name    string
	version int64 // 0: the latest
	kind    string
	state   string // the workflow's lifecycle when the tool was made
	info    providers.Info
}

var _ providers.Op = (*flowOp)(nil)

func (o *flowOp) Info() providers.Info { return o.info }

func (o *flowOp) InputSchema() (*jsonschema.Schema, error) {
	return nil, errors.New("a workflow's tool has the workflow's parameters as its schema")
}

func (o *flowOp) OutputSchema() (*jsonschema.Schema, error) {
	return nil, errors.New("a workflow's tool has the workflow's outputs as its output schema")
}

// runnable says why the tool's workflow does not run (deactivated or deleted).
func (o *flowOp) runnable() error {
	switch o.state {
	case LifecycleDeactivated:
		return switchboard.Errorf(switchboard.CodeConflict, "flow %s is deactivated: it does not run until a person activates it again", o.name)
	case LifecycleDeleted:
		return switchboard.Errorf(switchboard.CodeNotFound, "flow %s was deleted: it no longer runs, and this tool goes away soon", o.name)
	}
	return nil
}

// starts reports whether the tool starts runs of its workflow (every kind but query).
func (o *flowOp) starts() bool { return o.kind != KindQuery }

// Invoke runs, starts or queries the workflow for the call's principal.
func (o *flowOp) Invoke(ctx context.Context, c *providers.Call, args json.RawMessage) (any, error) {
	if err := o.runnable(); err != nil && o.kind != KindQuery {
		return nil, err
	}
	if o.kind == KindQuery {
		return o.svc.QueryFlow(ctx, c.Principal, o.name, args)
	}
	params, fc, err := SplitContext(args)
	if err != nil {
		return nil, err
	}
	if raw := fc.raw(); raw != nil {
		router.NoteAudit(ctx, "_context "+string(raw))
	}
	// The router records this call: the run it starts is not recorded again.
	so := StartOptions{Confirmed: c.Confirmed, Audited: true, Version: o.version, Context: fc.raw(), Tool: FlowToolName(o.kind, o.name, o.version)}
	switch o.kind {
	case KindRunAsync:
		return o.svc.StartFlow(ctx, c.Principal, o.name, params, so)
	case KindAlias:
		return o.svc.RunAndAnswer(ctx, c.Principal, o.name, params, so)
	default:
		return o.svc.RunFlow(ctx, c.Principal, o.name, params, so)
	}
}

// Confirmation says whether a run of the workflow with these parameters needs the
// person's confirmation under the caller's policy, and what to show them (a query
// never does).
func (o *flowOp) Confirmation(ctx context.Context, c *providers.Call, args json.RawMessage) (string, bool, error) {
	if !o.starts() {
		return "", false, nil
	}
	params, _, err := SplitContext(args)
	if err != nil {
		return "", false, err
	}
	return o.svc.Confirmation(ctx, c.Principal, o.name, params)
}

// Confirmation says whether a run of the named workflow with these parameters needs the
// person's confirmation under the principal's policy (one of its steps does), and the
// message that shows them what it will do.
func (s *Service) Confirmation(ctx context.Context, p switchboard.Principal, name string, params json.RawMessage) (string, bool, error) {
	plan, err := s.DryRun(ctx, p, name, params)
	if err != nil || !plan.NeedsConfirm {
		return "", false, err
	}
	shown := ConfirmMessage(name, plan)
	if len(params) > 0 && string(params) != "null" && string(params) != "{}" {
		shown += " Parameters: " + clipText(string(params), 1000)
	}
	return shown, true, nil
}

// RunAndAnswer starts a run of a saved workflow for the principal (input_required when
// the principal's policy wants the person to confirm it first and o.Confirmed is not
// set) and answers how it ended, or where it is when it has not ended within the
// Service's ToolWait. A run that ended failed, canceled or partial answers as a failed
// result with its status. A caller that asked for progress (providers.WithProgress)
// hears of the steps as they end. With o.ToEnd it waits for the run's end (and cancels
// it when ctx ends first), and the questions the run's steps ask go to the call's
// client (askWhilePaused).
func (s *Service) RunAndAnswer(ctx context.Context, p switchboard.Principal, name string, params json.RawMessage, o StartOptions) (*providers.ContentResult, error) {
	v, err := s.Start(ctx, p, name, params, o)
	if err != nil {
		return nil, err
	}
	if v.State == runs.StateWorking {
		v = s.waitUp(ctx, p, name, v, o.ToEnd)
	}
	if o.ToEnd {
		v = s.askWhilePaused(ctx, p, name, v, true)
		if ctx.Err() != nil && !v.State.Final() {
			// The run that waited for it ended (canceled, or out of time): so does the workflow's.
			if now, err := s.CancelBecause(context.WithoutCancel(ctx), p, v.ID, "the run that started it ended"); err == nil {
				v = now
			}
		}
	}
	ans := s.Answer(context.WithoutCancel(ctx), p, v)
	return providers.JSONContent(ans, ans.IsError)
}

// pollRun is how often a call waiting for its workflow run reads the run (one held by
// another node, and the steps of one whose caller hears of progress).
const pollRun = 250 * time.Millisecond

// wait waits, up to ToolWait, for a run to end. A caller that asked for progress is
// told as the run's steps end (progress: the steps ended, total: the workflow's steps),
// read from the run's step records, which every node sees.
func (s *Service) wait(ctx context.Context, p switchboard.Principal, name string, v runs.View) runs.View {
	return s.waitUp(ctx, p, name, v, false)
}

// waitUp is wait, or, toEnd, waits as long as ctx lasts rather than ToolWait.
func (s *Service) waitUp(ctx context.Context, p switchboard.Principal, name string, v runs.View, toEnd bool) runs.View {
	bound := s.ToolWait
	if bound <= 0 {
		bound = DefaultToolWait
	}
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if !toEnd {
		wctx, cancel = context.WithTimeout(ctx, bound)
	}
	defer cancel()
	if !providers.WantsProgress(ctx) {
		if v2, err := s.Runs.Wait(wctx, p, v.ID, pollRun); err == nil || v2.ID != "" {
			v = v2
		}
		return v
	}
	total := 0
	if _, prog, err := s.Program(ctx, p, name); err == nil {
		total = len(prog.Steps)
	}
	reported := 0
	for {
		pctx, pcancel := context.WithTimeout(wctx, pollRun)
		v2, err := s.Runs.Wait(pctx, p, v.ID, pollRun)
		pcancel()
		if err == nil || v2.ID != "" {
			v = v2
		}
		if done, serr := s.StepsEnded(ctx, p, v.ID); serr == nil && done > reported {
			reported = done
			providers.ReportProgress(ctx, float64(done), float64(total), fmt.Sprintf("%d of %d steps done", done, total))
		}
		if v.State.Final() || wctx.Err() != nil || err != nil && pctx.Err() == nil {
			return v
		}
	}
}

// IsTool reports whether a tool runs a saved workflow (one of its tools that start a
// run: not its query tool). Its Info.Name is the workflow's name.
func IsTool(t *providers.Tool) bool {
	_, ok := FlowOf(t)
	return ok
}

// FlowOf says which workflow, and which version of it (0: the latest), a tool runs;
// ok is false for any other tool.
func FlowOf(t *providers.Tool) (FlowRef, bool) {
	if t == nil {
		return FlowRef{}, false
	}
	op, ok := t.Op.(*flowOp)
	if !ok || !op.starts() {
		return FlowRef{}, false
	}
	return FlowRef{Name: op.name, Version: op.version}, true
}

// FlowRef names a workflow and one of its versions (0: the latest).
type FlowRef struct {
	Name    string
	Version int64
}
