package mcpadapter

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
)

// On 2026-07-28 a server cannot send a request to its client during a call: it answers
// the call with the requests it needs answered (inputRequests, resultType
// input_required) and an opaque requestState, and the client calls again with the
// answers (inputResponses) and that requestState. A remote MCP server's requests
// (elicitation, sampling, roots) come to the hub while its call runs, whatever the
// remote's own version: the hub keeps such a call running in the background, answers
// the client's call with the remote's request, and hands the client's answer to the
// remote when the client calls again. The call is held on the node that runs it.

// pendingStatePrefix starts the requestState of a call held for the client's answers,
// so that it is told apart from a confirmation's (requestStates).
const pendingStatePrefix = "held."

// pendingLifetime bounds how long a held call waits for the client's next call.
const pendingLifetime = 15 * time.Minute

// maxPendingCalls bounds the calls one node holds for their clients' answers.
const maxPendingCalls = 1024

// pendingCalls are the calls held for their clients' answers, by requestState.
type pendingCalls struct {
	mu sync.Mutex
	m  map[string]*pendingCall
}

// pendingCall is one call that runs in the background while its client answers what
// the remote server asked.
type pendingCall struct {
	owner  string // who called which tool with which arguments (pendingOwner)
	asks   chan *inputAsk
	done   chan callOutcome
	cancel context.CancelFunc
	round  int
	// waiting is the request the client was given and has not answered yet, under key.
	waiting *inputAsk
	key     string
	expiry  *time.Timer
	// answered is set once the call's first request was answered (input_required):
	// the call's progress and log notifications have no stream to go to after it.
	answered atomic.Bool
}

// inputAsk is a request of the remote server waiting for the client's answer.
type inputAsk struct {
	method string
	params json.RawMessage
	reply  chan inputAnswer
}

type inputAnswer struct {
	raw json.RawMessage
	err error
}

type callOutcome struct {
	res *mcp.CallToolResult
	err error
}

type pendingKey struct{}

// pendingFrom returns the held call a context belongs to, if any.
func pendingFrom(ctx context.Context) *pendingCall {
	pc, _ := ctx.Value(pendingKey{}).(*pendingCall)
	return pc
}

// ask hands the remote's request to the client through the held call and waits for the
// answer, or for ctx (the remote's request) to end.
func (pc *pendingCall) ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	a := &inputAsk{method: method, params: params, reply: make(chan inputAnswer, 1)}
	select {
	case pc.asks <- a:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case ans := <-a.reply:
		return ans.raw, ans.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// pendingOwner binds a held call to who made it, where, and the call itself.
func pendingOwner(p switchboard.Principal, agentID string, req mcp.CallToolRequest) string {
	args, _ := rawArguments(req)
	sum := sha256.Sum256(args)
	return strings.Join([]string{string(p.TenantID), p.ID(), p.KeyID, agentID, req.Params.Name, base64.RawURLEncoding.EncodeToString(sum[:])}, "|")
}

// hold registers pc under a new requestState.
func (c *pendingCalls) hold(pc *pendingCall) (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	state := pendingStatePrefix + base64.RawURLEncoding.EncodeToString(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*pendingCall{}
	}
	if len(c.m) >= maxPendingCalls {
		return "", switchboard.Errorf(switchboard.CodeUnavailable, "too many calls wait for their clients' answers on this node; try again later")
	}
	c.m[state] = pc
	return state, nil
}

// take removes and returns the call held under state, when owner made it.
func (c *pendingCalls) take(state, owner string) (*pendingCall, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pc := c.m[state]
	if pc == nil {
		return nil, switchboard.Invalid("requestState", "names no call waiting for an answer here (it finished, expired after 15 minutes, or was answered already); call the tool again without inputResponses")
	}
	if pc.owner != owner {
		return nil, switchboard.Invalid("requestState", "was not issued for this call (another tool, other arguments or another caller); call the tool again without inputResponses")
	}
	delete(c.m, state)
	return pc, nil
}

// drop forgets the call held under state, if it still is.
func (c *pendingCalls) drop(state string) {
	c.mu.Lock()
	delete(c.m, state)
	c.mu.Unlock()
}

// roundTrips lets a call of the stateless version relay what a remote MCP server asks
// during it (see the top of this file): the call runs in the background, and each
// request of the remote's becomes an input_required answer; the client's next call
// with its requestState carries the answer back and waits again.
func (s *scope) roundTrips(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		info := server.RequestProtocolInfoFromContext(ctx)
		if info == nil || !info.Modern || req.Params.Task != nil {
			return next(ctx, req)
		}
		p, ok := switchboard.PrincipalFrom(ctx)
		if !ok {
			return nil, errors.New("no principal in context")
		}
		owner := pendingOwner(p, s.agentID, req)
		pending := &s.adapter.pending
		if state := req.Params.RequestState; strings.HasPrefix(state, pendingStatePrefix) {
			pc, err := pending.take(state, owner)
			if err != nil {
				return s.adapter.toolError(err), nil
			}
			pc.expiry.Stop()
			pc.answer(req.Params.InputResponses)
			return s.awaitPending(ctx, pc)
		}
		// The call outlives this request when the remote asks something: it ends with
		// the client's cancellation, the hub's shutdown, or when the client does not
		// come back with the answer.
		bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		stop := context.AfterFunc(s.adapter.life, cancel)
		pc := &pendingCall{owner: owner, asks: make(chan *inputAsk), done: make(chan callOutcome, 1), cancel: cancel}
		bctx = context.WithValue(bctx, pendingKey{}, pc)
		go func() {
			defer stop()
			defer cancel()
			res, err := next(bctx, req)
			pc.done <- callOutcome{res: res, err: err}
		}()
		return s.awaitPending(ctx, pc)
	}
}

// answer gives the remote the client's answer to the request it was shown: the
// response under its key, or an error when the client called again without one.
func (pc *pendingCall) answer(responses mcp.InputResponses) {
	a := pc.waiting
	pc.waiting = nil
	if a == nil {
		return
	}
	resp, ok := responses[pc.key]
	if !ok {
		a.reply <- inputAnswer{err: fmt.Errorf("the client called again without an answer to %s (inputResponses.%s)", a.method, pc.key)}
		return
	}
	raw, err := json.Marshal(resp)
	if err == nil && (len(raw) == 0 || string(raw) == "null") {
		err = fmt.Errorf("the client's answer to %s (inputResponses.%s) is empty", a.method, pc.key)
	}
	a.reply <- inputAnswer{raw: raw, err: err}
}

// awaitPending waits for the held call's outcome, or for the remote's next request,
// which it answers to the client as input_required. When the client's request ends
// first (its cancellation, on this version), the call is cancelled.
func (s *scope) awaitPending(ctx context.Context, pc *pendingCall) (*mcp.CallToolResult, error) {
	select {
	case o := <-pc.done:
		return o.res, o.err
	case a := <-pc.asks:
		var ir mcp.InputRequest
		body, _ := json.Marshal(map[string]any{"method": a.method, "params": a.params})
		if a.method == string(mcp.MethodListRoots) {
			body, _ = json.Marshal(map[string]any{"method": a.method})
		}
		if err := json.Unmarshal(body, &ir); err != nil {
			a.reply <- inputAnswer{err: fmt.Errorf("relay %s to the client: %w", a.method, err)}
			return s.awaitPending(ctx, pc)
		}
		state, err := s.adapter.pending.hold(pc)
		if err != nil {
			a.reply <- inputAnswer{err: err}
			return s.awaitPending(ctx, pc)
		}
		pc.round++
		pc.answered.Store(true)
		pc.waiting, pc.key = a, fmt.Sprintf("upstream_%d", pc.round)
		pc.expiry = time.AfterFunc(pendingLifetime, func() {
			s.adapter.pending.drop(state)
			pc.cancel()
		})
		res := &mcp.CallToolResult{
			Result:               mcp.Result{ResultType: mcp.ResultTypeInputRequired},
			MultiRoundTripResult: mcp.MultiRoundTripResult{InputRequests: mcp.InputRequests{pc.key: ir}, RequestState: state},
		}
		return res, nil
	case <-ctx.Done():
		pc.cancel()
		return nil, ctx.Err()
	}
}
