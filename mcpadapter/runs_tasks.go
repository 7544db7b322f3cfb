package mcpadapter

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
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
//
// mcp-go hands the task the context of the HTTP request that created it, which ends
// as soon as the task is answered; the run is therefore detached from it, and
// tasks/cancel reaches it through taskLinks.
func (x *runsExt) runAsTask(ctx context.Context, sc Scope, b router.Binding, req mcp.CallToolRequest, rreq router.Request) (*mcp.CallToolResult, error) {
	p, _ := switchboard.PrincipalFrom(ctx)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskWait)
	defer cancel()
	call := runs.Call{Tool: rreq.Tool, ConnectionID: rreq.ConnectionID, Args: rreq.Args, Origin: runs.OriginTask}
	v, err := x.o.Runs.Start(ctx, p, call)
	if err != nil {
		go x.links.link(callKey(req.Header), p, "")() // drain the task id the hook sends
		return x.hubError(ctx, sc, err), nil
	}
	forget := x.links.link(callKey(req.Header), p, v.ID)
	defer forget()
	done, err := x.o.Runs.Wait(ctx, p, v.ID, x.o.TaskPoll)
	if err != nil {
		return x.hubError(ctx, sc, err), nil
	}
	return runResult(done), nil
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
