package mcpadapter

import (
	"context"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
)

// taskLinks connects mcp-go's tasks to runs, so tasks/cancel cancels the run. mcp-go
// tells a task's id only to hooks (after tools/call answered with it), and the
// handler only sees the call's request; both see the same request Header map, which
// identifies the call.
type taskLinks struct {
	mu     sync.Mutex
	byCall map[uintptr]*pendingLink // call → its task id, once the hook saw it
	runs   map[string]taskRun       // task id → its run
	// early holds tasks/cancel that came before their task was linked to its run:
	// the client has the task id as soon as tools/call answers, which may be before
	// the handler has read it from the hook. link cancels the run when it gets there.
	early  map[string][]earlyCancel
	cancel func(p switchboard.Principal, runID string)
	now    func() time.Time
}

// earlyCancel is a tasks/cancel waiting for its task's run.
type earlyCancel struct {
	principal switchboard.Principal
	at        time.Time
}

// pendingLink is a call's task id on its way between the hook and the handler.
type pendingLink struct {
	ch      chan string
	created time.Time
}

// linkWait is how long a handler waits for its call's task id.
const linkWait = 5 * time.Second

// staleLink is the age after which a pending link nobody took is dropped: a call
// refused before its handler linked it (bad arguments), or a hook that fired after
// the handler gave up. Without it each such call would stay in byCall for good, and a
// later request whose Header map reused the address would read its stale task id.
const staleLink = 2 * linkWait

// taskRun is the run of a task, and whose it is.
type taskRun struct {
	principal switchboard.Principal
	runID     string
}

// newTaskLinks returns the links of a server whose runs cancel cancels.
func newTaskLinks(cancel func(p switchboard.Principal, runID string)) *taskLinks {
	return &taskLinks{byCall: map[uintptr]*pendingLink{}, runs: map[string]taskRun{}, early: map[string][]earlyCancel{}, cancel: cancel, now: time.Now}
}

// callKey identifies a call by its request's Header map (0 when it has none).
func callKey(h http.Header) uintptr {
	if h == nil {
		return 0
	}
	return reflect.ValueOf(h).Pointer()
}

// slot returns the channel that receives the call's task id, dropping pending links
// older than staleLink.
func (l *taskLinks) slot(key uintptr) chan string {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for k, pl := range l.byCall {
		if k != key && now.Sub(pl.created) > staleLink {
			delete(l.byCall, k)
		}
	}
	l.sweepEarly(now)
	pl, ok := l.byCall[key]
	if !ok || now.Sub(pl.created) > staleLink {
		pl = &pendingLink{ch: make(chan string, 1), created: now}
		l.byCall[key] = pl
	}
	return pl.ch
}

// maxEarly bounds the tasks whose tasks/cancel is held before they are linked, and
// maxEarlyPerTask the callers held for one task: a client naming task ids that never
// come cannot grow the map past them, and another caller's cancel of the same id does
// not replace the owner's.
const (
	maxEarly        = 1024
	maxEarlyPerTask = 4
)

// holdCancel keeps a tasks/cancel of a task not linked to its run yet, for link to
// act on; l.mu is held.
func (l *taskLinks) holdCancel(taskID string, p switchboard.Principal) {
	now := l.now()
	l.sweepEarly(now)
	held, ok := l.early[taskID]
	if ok && len(held) < maxEarlyPerTask || !ok && len(l.early) < maxEarly {
		l.early[taskID] = append(held, earlyCancel{principal: p, at: now})
	}
}

// sweepEarly drops the held cancels older than staleLink; l.mu is held.
func (l *taskLinks) sweepEarly(now time.Time) {
	for id, held := range l.early {
		if now.Sub(held[0].at) > staleLink {
			delete(l.early, id)
		}
	}
}

// link waits (briefly) for the call's task id and records the task's run; it returns
// a function that forgets both.
func (l *taskLinks) link(key uintptr, p switchboard.Principal, runID string) func() {
	if key == 0 {
		return func() {}
	}
	var taskID string
	select {
	case taskID = <-l.slot(key):
	case <-time.After(linkWait): // the hook never ran: not a task of this server
	}
	l.mu.Lock()
	delete(l.byCall, key)
	canceled := false
	if taskID != "" {
		l.runs[taskID] = taskRun{principal: p, runID: runID}
		for _, ec := range l.early[taskID] {
			canceled = canceled || sameCaller(ec.principal, p)
		}
		delete(l.early, taskID)
	}
	l.mu.Unlock()
	if canceled && runID != "" {
		l.cancel(p, runID)
	}
	return func() {
		l.mu.Lock()
		delete(l.runs, taskID)
		l.mu.Unlock()
	}
}

// taskHooks registers the hooks that learn task ids, cancel runs, and show a task
// whose run waits for its person as input_required.
func (x *runsExt) taskHooks() server.ServerOption {
	return func(s *server.MCPServer) {
		hooks := s.GetHooks()
		if hooks == nil {
			hooks = &server.Hooks{}
			server.WithHooks(hooks)(s)
		}
		hooks.AddAfterCallTool(func(_ context.Context, _ any, req *mcp.CallToolRequest, result any) {
			created, ok := result.(*mcp.CreateTaskResult)
			if !ok || req == nil || callKey(req.Header) == 0 {
				return
			}
			select {
			case x.links.slot(callKey(req.Header)) <- created.Task.TaskId:
			default:
			}
		})
		hooks.AddAfterGetTask(func(ctx context.Context, _ any, _ *mcp.GetTaskRequest, res *mcp.GetTaskResult) {
			if res != nil {
				x.inputStatus(ctx, &res.Task)
			}
		})
		hooks.AddAfterListTasks(func(ctx context.Context, _ any, _ *mcp.ListTasksRequest, res *mcp.ListTasksResult) {
			if res == nil {
				return
			}
			for i := range res.Tasks {
				x.inputStatus(ctx, &res.Tasks[i])
			}
		})
		hooks.AddAfterCancelTask(func(ctx context.Context, _ any, req *mcp.CancelTaskRequest, _ *mcp.CancelTaskResult) {
			if req == nil {
				return
			}
			p, asked := switchboard.PrincipalFrom(ctx)
			if !asked {
				return
			}
			x.links.mu.Lock()
			tr, ok := x.links.runs[req.Params.TaskId]
			if !ok {
				x.links.holdCancel(req.Params.TaskId, p)
			}
			x.links.mu.Unlock()
			if !ok || !sameCaller(p, tr.principal) {
				return
			}
			_, _ = x.o.Runs.Cancel(context.WithoutCancel(ctx), tr.principal, tr.runID)
		})
	}
}

// sameCaller reports whether two principals are the same caller of the same tenant.
func sameCaller(a, b switchboard.Principal) bool {
	return a.TenantID == b.TenantID && a.ID() == b.ID()
}
