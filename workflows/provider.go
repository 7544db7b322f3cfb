package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/runs"
)

// Provider is the name of the provider whose tools are a tenant's saved workflows.
const Provider = "workflows"

// DefaultToolWait bounds how long a call of a workflow's tool waits for its run to end
// before it answers with the run's id to follow.
const DefaultToolWait = 30 * time.Second

// Spec is the provider of saved workflows: each of a tenant's workflows is its tool
// workflow_<name>, whose input is the workflow's parameters. It runs on no connection
// (each step runs on its own) and asks the person once for the whole run when the
// caller's confirm policy covers a step (ConfirmsItself). Register it with the registry
// the router reads.
func (s *Service) Spec() providers.Spec {
	return providers.Spec{Name: Provider, Title: "Workflows", Connectionless: true, ConfirmsItself: true, TenantTools: s.tenantTools}
}

// toolCache keeps each workflow's tool by its version, so its schema is compiled once.
type toolCache struct {
	mu    sync.Mutex
	tools map[string]cachedTool // tenant + "\x00" + name
}

type cachedTool struct {
	version int64
	tool    *providers.Tool
}

// tenantTools lists the tenant's workflows as tools.
func (s *Service) tenantTools(ctx context.Context, tenant switchboard.TenantID) ([]*providers.Tool, error) {
	ws, err := s.Store.List(ctx, tenant, "")
	if err != nil {
		return nil, err
	}
	out := make([]*providers.Tool, 0, len(ws))
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	if s.cache.tools == nil {
		s.cache.tools = map[string]cachedTool{}
	}
	for _, w := range ws {
		key := string(tenant) + "\x00" + w.Name
		if c, ok := s.cache.tools[key]; ok && c.version == w.Version {
			out = append(out, c.tool)
			continue
		}
		t, err := s.Tool(w)
		if err != nil {
			continue // a name or schema no tool can have: the workflow's own pages say so
		}
		s.cache.tools[key] = cachedTool{version: w.Version, tool: t}
		out = append(out, t)
	}
	return out, nil
}

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
	return input, desc + " (A workflow: answers with its result, or with a workflow_id to follow with switchboard_get_run when it takes longer.)"
}

// Tool is a saved workflow as its tool.
func (s *Service) Tool(w Workflow) (*providers.Tool, error) {
	input, desc := ToolSchema(w)
	op := &workflowOp{svc: s, name: w.Name, info: providers.Info{Name: w.Name, Title: "Workflow " + w.Name, Description: desc,
		Hints: providers.Hints{Destructive: true}}}
	return providers.NewConnectionTool(workflowSpec, ToolPrefix+w.Name, op, input, json.RawMessage(ResultSchema))
}

// workflowOp runs a saved workflow: it starts the run as the caller and waits, up to
// DefaultToolWait, for its end.
type workflowOp struct {
	svc  *Service
	name string
	info providers.Info
}

var _ providers.Op = (*workflowOp)(nil)

func (o *workflowOp) Info() providers.Info { return o.info }

func (o *workflowOp) InputSchema() (*jsonschema.Schema, error) {
	return nil, errors.New("a workflow's tool has the workflow's parameters as its schema")
}

func (o *workflowOp) OutputSchema() (*jsonschema.Schema, error) {
	return nil, errors.New("a workflow's tool has ResultSchema as its output schema")
}

// Invoke starts the workflow's run for the call's principal (input_required when the
// principal's policy wants the person to confirm it first) and answers how it ended,
// or where it is when it has not ended within DefaultToolWait. A run that ended failed,
// canceled or partial answers as a failed result with its status.
func (o *workflowOp) Invoke(ctx context.Context, c *providers.Call, args json.RawMessage) (any, error) {
	// The router records this call: the run it starts is not recorded again.
	return o.svc.RunAndAnswer(ctx, c.Principal, o.name, args, StartOptions{Confirmed: c.Confirmed, Audited: true})
}

// Confirmation says whether a run of the workflow with these parameters needs the
// person's confirmation under the caller's policy, and what to show them.
func (o *workflowOp) Confirmation(ctx context.Context, c *providers.Call, args json.RawMessage) (string, bool, error) {
	return o.svc.Confirmation(ctx, c.Principal, o.name, args)
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
// hears of the steps as they end.
func (s *Service) RunAndAnswer(ctx context.Context, p switchboard.Principal, name string, params json.RawMessage, o StartOptions) (*providers.ContentResult, error) {
	v, err := s.Start(ctx, p, name, params, o)
	if err != nil {
		return nil, err
	}
	if v.State == runs.StateWorking {
		v = s.wait(ctx, p, name, v)
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
	bound := s.ToolWait
	if bound <= 0 {
		bound = DefaultToolWait
	}
	wctx, cancel := context.WithTimeout(ctx, bound)
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

// IsTool reports whether a tool is a saved workflow's (its provider is this one).
func IsTool(t *providers.Tool) bool {
	return t != nil && t.Provider != nil && t.Provider.Name == Provider
}
