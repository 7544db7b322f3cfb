package mcpadapter

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/providers"
)

// On 2026-07-28 a server cannot send a request to its client during a call: it answers
// the call with the requests it needs answered (inputRequests, resultType
// input_required) and an opaque requestState, and the client calls again with the
// answers (inputResponses) and that requestState. What a call asks of its client comes
// to the hub while the call runs: a remote MCP server's requests (elicitation,
// sampling, roots), whatever the remote's own version, and a tool's or an extension
// prompt's own through providers.Caller (Ask, or AskAll with keys the tool names). The
// hub keeps such a call running in the background, answers the client's call with the
// requests (under the tool's keys, or upstream_N for a remote's), and hands the
// client's answers over when the client calls again. The requestState is the hub's:
// random, bound to who made which call, used once; any other is refused. A request the
// client calls again without an answer to (or with one that does not answer its
// method) is asked again, with a new requestState; answers under other keys are
// ignored. An answer the client sends with its first call, under the key a tool asks
// by, is taken without asking. The call is held on the node that runs it.

// pendingStatePrefix starts the requestState of a call held for the client's answers,
// so that it is told apart from a confirmation's (requestStates).
const pendingStatePrefix = "held."

// pendingLifetime bounds how long a held call waits for the client's next call.
const pendingLifetime = 15 * time.Minute

// maxPendingCalls bounds the calls one node holds for their clients' answers.
const maxPendingCalls = 1024

// maxInputRequests bounds the requests one AskAll makes at once.
const maxInputRequests = 16

// pendingCalls are the calls held for their clients' answers, by requestState.
type pendingCalls struct {
	mu sync.Mutex
	m  map[string]*pendingCall
}

// pendingCall is one call that runs in the background while its client answers what
// it asked.
type pendingCall struct {
	owner  string // who made which call with which arguments (pendingOwner)
	asks   chan []*inputAsk
	done   chan callOutcome
	cancel context.CancelFunc
	// round counts the input_required answers given, named the requests the hub named
	// (upstream_N: a remote server's, which come without a key).
	round, named int
	// given are the answers the client sent with its first call: each answers the
	// request asked under its key, once, without asking.
	given mcp.InputResponses
	// waiting are the requests the client was given and has not answered yet, by key.
	waiting map[string]*inputAsk
	expiry  *time.Timer
	// answered is set once the call's first request was answered (input_required):
	// the call's progress and log notifications have no stream to go to after it.
	answered atomic.Bool
}

// inputAsk is a request of the call's waiting for the client's answer.
type inputAsk struct {
	key    string // the call's own, or "" for the hub to name it
	method string
	params json.RawMessage
	reply  chan inputAnswer
}

type inputAnswer struct {
	raw   json.RawMessage
	err   error
	round int
}

// callOutcome is a held call's result (a *mcp.CallToolResult, a *mcp.GetPromptResult)
// or error.
type callOutcome struct {
	res any
	err error
}

type pendingKey struct{}

// pendingFrom returns the held call a context belongs to, if any.
func pendingFrom(ctx context.Context) *pendingCall {
	pc, _ := ctx.Value(pendingKey{}).(*pendingCall)
	return pc
}

// ask hands one request to the client through the held call, under a key of the
// hub's, and waits for the answer, or for ctx (the asker's) to end.
func (pc *pendingCall) ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	answers, err := pc.askAll(ctx, []*inputAsk{{method: method, params: params}})
	if err != nil {
		return nil, err
	}
	return answers[0].raw, answers[0].err
}

// askAll hands the requests to the client through the held call, in one round, and
// waits for every answer, or for ctx to end.
func (pc *pendingCall) askAll(ctx context.Context, asks []*inputAsk) ([]inputAnswer, error) {
	for _, a := range asks {
		a.reply = make(chan inputAnswer, 1)
	}
	select {
	case pc.asks <- asks:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	out := make([]inputAnswer, len(asks))
	for i, a := range asks {
		select {
		case out[i] = <-a.reply:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return out, nil
}

// pendingOwner binds a held tool call to who made it, where, and the call itself.
func pendingOwner(p switchboard.Principal, agentID string, req mcp.CallToolRequest) string {
	args, _ := rawArguments(req)
	return heldOwner(p, agentID, "tool", req.Params.Name, args)
}

// promptOwner binds a held prompts/get to who made it, where, and the prompt asked.
func promptOwner(p switchboard.Principal, agentID string, req mcp.GetPromptRequest) string {
	args, _ := json.Marshal(req.Params.Arguments)
	return heldOwner(p, agentID, "prompt", req.Params.Name, args)
}

func heldOwner(p switchboard.Principal, agentID, kind, name string, args json.RawMessage) string {
	sum := argsDigest(args)
	return strings.Join([]string{string(p.TenantID), p.ID(), p.KeyID, agentID, kind, name, base64.RawURLEncoding.EncodeToString(sum[:])}, "|")
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

// find returns the call held under state, when owner made it, or why not.
func (c *pendingCalls) find(state, owner string) (*pendingCall, error) {
	pc := c.m[state]
	if pc == nil {
		return nil, switchboard.Invalid("requestState", "names no call waiting for an answer here (it was altered, the call finished, expired after 15 minutes, or was answered already); call again without inputResponses")
	}
	if pc.owner != owner {
		return nil, switchboard.Invalid("requestState", "was not issued for this call (another tool or prompt, other arguments or another caller); call again without inputResponses")
	}
	return pc, nil
}

// check returns find's error, leaving the call held.
func (c *pendingCalls) check(state, owner string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.find(state, owner)
	return err
}

// take removes and returns the call held under state, when owner made it.
func (c *pendingCalls) take(state, owner string) (*pendingCall, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pc, err := c.find(state, owner)
	if err == nil {
		delete(c.m, state)
	}
	return pc, err
}

// drop forgets the call held under state, if it still is.
func (c *pendingCalls) drop(state string) {
	c.mu.Lock()
	delete(c.m, state)
	c.mu.Unlock()
}

// refuseHeldState answers a tools/call or prompts/get of the 2026-07-28 version whose
// requestState is a held call's (held.…) but not one this caller's same call waits
// under here (altered, forged, used already, expired, or another call's): invalid
// params, before mcp-go runs the request (a handler's error would be an internal
// one). It reports whether it answered.
func (a *Adapter) refuseHeldState(w http.ResponseWriter, s *scope, p switchboard.Principal, msg mcptransport.Message) bool {
	var state, owner string
	switch msg.Method {
	case string(mcp.MethodToolsCall):
		var req mcp.CallToolRequest
		if json.Unmarshal(msg.RawParams, &req.Params) != nil {
			return false
		}
		state, owner = req.Params.RequestState, pendingOwner(p, s.agentID, req)
	case string(mcp.MethodPromptsGet):
		var req mcp.GetPromptRequest
		if json.Unmarshal(msg.RawParams, &req.Params) != nil {
			return false
		}
		state, owner = req.Params.RequestState, promptOwner(p, s.agentID, req)
	}
	if !strings.HasPrefix(state, pendingStatePrefix) {
		return false
	}
	err := a.pending.check(state, owner)
	if err == nil {
		return false
	}
	mcptransport.WriteRPCError(w, http.StatusBadRequest, msg.ID, mcp.INVALID_PARAMS, err.Error())
	return true
}

// roundTrips lets a tool call of the stateless version relay what the tool or its
// remote server asks during it (see the top of this file).
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
		res, ir, err := s.roundTrip(ctx, pendingOwner(p, s.agentID, req), req.Params.MultiRoundTripParams, func(ctx context.Context) (any, error) {
			return next(ctx, req)
		})
		if ir != nil {
			return &mcp.CallToolResult{Result: mcp.Result{ResultType: mcp.ResultTypeInputRequired}, MultiRoundTripResult: *ir}, nil
		}
		out, _ := res.(*mcp.CallToolResult)
		return out, err
	}
}

// promptRoundTrips gives a prompt's handler its caller (providers.Caller), to ask the
// client what the prompt needs, and on the stateless version relays what it asks as a
// tool call's are (see the top of this file).
func (s *scope) promptRoundTrips(next server.PromptHandlerFunc) server.PromptHandlerFunc {
	return func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		run := func(ctx context.Context) (any, error) {
			return next(providers.WithCaller(ctx, caller{s: s, ctx: ctx}), req)
		}
		info := server.RequestProtocolInfoFromContext(ctx)
		if info == nil || !info.Modern {
			res, err := run(ctx)
			out, _ := res.(*mcp.GetPromptResult)
			return out, err
		}
		p, ok := switchboard.PrincipalFrom(ctx)
		if !ok {
			return nil, errors.New("no principal in context")
		}
		res, ir, err := s.roundTrip(ctx, promptOwner(p, s.agentID, req), req.Params.MultiRoundTripParams, run)
		if ir != nil {
			return &mcp.GetPromptResult{Result: mcp.Result{ResultType: mcp.ResultTypeInputRequired}, MultiRoundTripResult: *ir}, nil
		}
		out, _ := res.(*mcp.GetPromptResult)
		return out, err
	}
}

// roundTrip runs a call of the stateless version that may ask its client something:
// the first time in the background, as a held call; again, with the requestState of
// the input it waits for, by handing it the client's answers. It returns the call's
// outcome, or the input the call waits for.
func (s *scope) roundTrip(ctx context.Context, owner string, rt mcp.MultiRoundTripParams, run func(context.Context) (any, error)) (any, *mcp.MultiRoundTripResult, error) {
	pending := &s.adapter.pending
	if state := rt.RequestState; strings.HasPrefix(state, pendingStatePrefix) {
		pc, err := pending.take(state, owner)
		if err != nil {
			return nil, nil, err
		}
		pc.expiry.Stop()
		pc.answer(rt.InputResponses)
		return s.awaitPending(ctx, pc)
	}
	// The call outlives this request when it asks something: it ends with the client's
	// cancellation, the hub's shutdown, or when the client does not come back with the
	// answer.
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(s.adapter.life, cancel)
	pc := &pendingCall{owner: owner, asks: make(chan []*inputAsk), done: make(chan callOutcome, 1), cancel: cancel,
		given: rt.InputResponses, waiting: map[string]*inputAsk{}}
	bctx = context.WithValue(bctx, pendingKey{}, pc)
	go func() {
		defer stop()
		defer cancel()
		res, err := run(bctx)
		pc.done <- callOutcome{res: res, err: err}
	}()
	return s.awaitPending(ctx, pc)
}

// answer gives the requests the client was shown their answers, each under its key;
// a request without one (or with one that does not answer its method) stays waiting,
// to be asked again. Answers under other keys are ignored.
func (pc *pendingCall) answer(responses mcp.InputResponses) {
	for key, a := range pc.waiting {
		if raw, ok := answerFor(a.method, responses[key]); ok {
			a.reply <- inputAnswer{raw: raw, round: pc.round}
			delete(pc.waiting, key)
		}
	}
}

// answerFor returns the answer as JSON when it answers a request of the method: an
// object its result type reads (an elicitation's with an action).
func answerFor(method string, r mcp.InputResponse) (json.RawMessage, bool) {
	raw, err := json.Marshal(r)
	if err != nil || len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	if err := r.DecodeFor(mcp.MCPMethod(method)); err != nil {
		return nil, false
	}
	if method == string(mcp.MethodElicitationCreate) {
		switch r.Elicitation.Action {
		case mcp.ElicitationResponseActionAccept, mcp.ElicitationResponseActionDecline, mcp.ElicitationResponseActionCancel:
		default:
			return nil, false
		}
	}
	return raw, true
}

// awaitPending waits for the held call's outcome, or for what it asks next, which it
// answers to the client as input_required (with the requests still unanswered, if
// any, first). When the client's request ends first (its cancellation, on this
// version), the call is cancelled.
func (s *scope) awaitPending(ctx context.Context, pc *pendingCall) (any, *mcp.MultiRoundTripResult, error) {
	for {
		if len(pc.waiting) > 0 {
			if ir := s.inputRequired(pc); ir != nil {
				return nil, ir, nil
			}
			continue
		}
		select {
		case o := <-pc.done:
			return o.res, nil, o.err
		case asks := <-pc.asks:
			for _, a := range asks {
				if a.key != "" {
					if r, ok := pc.given[a.key]; ok {
						delete(pc.given, a.key)
						if raw, ok := answerFor(a.method, r); ok {
							a.reply <- inputAnswer{raw: raw}
							continue
						}
					}
				} else {
					pc.named++
					a.key = fmt.Sprintf("upstream_%d", pc.named)
				}
				if pc.waiting[a.key] != nil {
					a.reply <- inputAnswer{err: fmt.Errorf("%s is asked already under the key %q", a.method, a.key)}
					continue
				}
				pc.waiting[a.key] = a
			}
		case <-ctx.Done():
			pc.cancel()
			return nil, nil, ctx.Err()
		}
	}
}

// inputRequired holds the call under a new requestState and returns the input_required
// answer of the requests it waits for; nil when none is left to ask (each that could
// not be put to the client was answered with the error).
func (s *scope) inputRequired(pc *pendingCall) *mcp.MultiRoundTripResult {
	requests := mcp.InputRequests{}
	for key, a := range pc.waiting {
		var ir mcp.InputRequest
		body, _ := json.Marshal(map[string]any{"method": a.method, "params": a.params})
		if a.method == string(mcp.MethodListRoots) {
			body, _ = json.Marshal(map[string]any{"method": a.method})
		}
		if err := json.Unmarshal(body, &ir); err != nil {
			a.reply <- inputAnswer{err: fmt.Errorf("relay %s to the client: %w", a.method, err)}
			delete(pc.waiting, key)
			continue
		}
		requests[key] = ir
	}
	if len(requests) == 0 {
		return nil
	}
	state, err := s.adapter.pending.hold(pc)
	if err != nil {
		for key, a := range pc.waiting {
			a.reply <- inputAnswer{err: err}
			delete(pc.waiting, key)
		}
		return nil
	}
	pc.round++
	pc.answered.Store(true)
	pc.expiry = time.AfterFunc(pendingLifetime, func() {
		s.adapter.pending.drop(state)
		pc.cancel()
	})
	return &mcp.MultiRoundTripResult{InputRequests: requests, RequestState: state}
}
