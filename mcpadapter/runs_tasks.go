package mcpadapter

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// binding returns the router binding of one of the scope's hub tools.
func (sc Scope) binding(name string) (router.Binding, bool) {
	if sc.s == nil {
		return router.Binding{}, false
	}
	t, ok := sc.s.hubTool(name)
	if !ok {
		return router.Binding{}, false
	}
	return t.binding, true
}

// taskWait bounds how long a task waits for its run (a run that needs a confirmation
// fails sooner, when nobody gives it).
const taskWait = time.Hour

// runAsTask runs a task-augmented tools/call as a run: mcp-go has answered the client
// with the task already and calls this in the background; the task's result is the
// run's, and the run is listed with the caller's other runs. A call the caller's
// policy wants confirmed waits, input_required, for its approval page or
// switchboard_submit_elicitation (the executor decides, as for every run).
func (x *runsExt) runAsTask(ctx context.Context, sc Scope, b router.Binding, req mcp.CallToolRequest, rreq router.Request) (*mcp.CallToolResult, error) {
	call := runs.Call{Tool: rreq.Tool, ConnectionID: rreq.ConnectionID, Args: rreq.Args, Origin: runs.OriginTask}
	start := func(ctx context.Context, p switchboard.Principal) (runs.View, error) {
		return x.o.Runs.Start(ctx, p, call)
	}
	return x.task(ctx, sc, req, start, func(ctx context.Context, v runs.View) (*mcp.CallToolResult, error) {
		if x.o.Answer != nil {
			p, _ := switchboard.PrincipalFrom(ctx)
			if res, ok := x.o.Answer(ctx, p, v); ok {
				return contentResult(res), nil
			}
		}
		if cr, ok := recordedContent(b.Tool, v.Output); ok && v.State == runs.StateCompleted {
			res := contentResult(cr)
			res.Meta = mcp.NewMetaFromMap(map[string]any{"switchboard/run_id": v.ID, "switchboard/state": string(v.State)})
			return res, nil
		}
		return runResult(v), nil
	})
}

// task runs a task-augmented call as the run start starts, and answers the run once it
// ended (not while it waits for its person) as answer renders it (given a context that outlives the request). Any tool's
// task runs through it: the hub tools' and other extensions'.
//
// mcp-go hands the task the context of the HTTP request that created it, which ends
// as soon as the task is answered; the run is therefore detached from it (and from the
// request's place, as the run is admitted on its own), and tasks/cancel reaches it
// through taskLinks.
func (x *runsExt) task(ctx context.Context, sc Scope, req mcp.CallToolRequest, start func(context.Context, switchboard.Principal) (runs.View, error),
	answer func(context.Context, runs.View) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	p, _ := switchboard.PrincipalFrom(ctx)
	ctx, cancel := context.WithTimeout(limits.WithSlot(context.WithoutCancel(ctx), nil), taskWait)
	defer cancel()
	v, err := start(ctx, p)
	if err != nil {
		go x.links.link(callKey(req.Header), p, "")() // drain the task id the hook sends
		return x.hubError(ctx, sc, err), nil
	}
	forget := x.links.link(callKey(req.Header), p, v.ID)
	defer forget()
	done, err := x.waitEnd(ctx, p, v.ID)
	if err != nil {
		return x.hubError(ctx, sc, err), nil
	}
	return answer(ctx, done)
}

// waitEnd waits for a task's run to end: one that pauses for its person's input (a
// workflow's step asking for data) shows input_required at tasks/get meanwhile
// (inputStatus), and goes on once answered.
func (x *runsExt) waitEnd(ctx context.Context, p switchboard.Principal, id string) (runs.View, error) {
	for {
		v, err := x.o.Runs.Wait(ctx, p, id, x.o.TaskPoll)
		if err != nil || !v.Paused() {
			return v, err
		}
		t := time.NewTimer(x.o.TaskPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, ctx.Err()
		case <-t.C:
		}
	}
}

// runResult renders a finished run as the tool result a direct call would have given.
func runResult(v runs.View) *mcp.CallToolResult {
	var res *mcp.CallToolResult
	switch {
	case v.State == runs.StateCompleted:
		res = &mcp.CallToolResult{
			Content:           []mcp.Content{mcp.NewTextContent(string(v.Output))},
			StructuredContent: json.RawMessage(v.Output),
		}
	case v.Error != nil:
		res = mcp.NewToolResultError(v.Error.Message)
	default:
		res = mcp.NewToolResultError("The run ended " + string(v.State) + ".")
	}
	res.Meta = mcp.NewMetaFromMap(map[string]any{"switchboard/run_id": v.ID, "switchboard/state": string(v.State)})
	return res
}
