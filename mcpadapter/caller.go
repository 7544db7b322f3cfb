package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/providers"
)

// caller is the MCP client of one tool call (or prompts/get), as providers.Caller:
// what a remote MCP server sends during the call (log messages, elicitation and
// sampling requests), and what a tool or a prompt asks itself, reaches the client
// through it.
type caller struct {
	s   *scope
	ctx context.Context // the tool call's: it holds the client's session
}

// Log sends the remote's log message to the client, at the client's log level.
func (c caller) Log(params map[string]any) {
	level, _ := params["level"].(string)
	logger, _ := params["logger"].(string)
	n := mcp.NewLoggingMessageNotification(mcp.LoggingLevel(level), logger, params["data"])
	c.s.deliver(c.ctx, func(ctx context.Context) error { return c.s.mcp.SendLogMessageToClient(ctx, n) })
}

// Ask sends the remote's request to the client and returns the client's answer. The
// request ends with ctx (the remote's) or with the call. On 2026-07-28 the request
// goes back to the client as the call's input_required answer (roundTrips); before,
// as a request of the hub's own during the call.
func (c caller) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	rctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	if err := clientTakes(c.ctx, method); err != nil {
		noteMissing(c.ctx, err) // on 2026-07-28 a failed call is then refused for it
		return nil, err
	}
	if pc := pendingFrom(c.ctx); pc != nil {
		return pc.ask(rctx, method, params)
	}
	if info := server.RequestProtocolInfoFromContext(c.ctx); info != nil && info.Modern {
		// A task's run on 2026-07-28: no request of the client's waits for an answer.
		return nil, fmt.Errorf("switchboard cannot relay %s to a 2026-07-28 client during a task; call the tool without a task", method)
	}
	var res any
	var err error
	switch method {
	case string(mcp.MethodElicitationCreate):
		var p mcp.ElicitationParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("elicitation/create params: %w", err)
		}
		res, err = c.s.mcp.RequestElicitation(rctx, mcp.ElicitationRequest{Request: mcp.Request{Method: method}, Params: p})
	case string(mcp.MethodSamplingCreateMessage), string(mcp.MethodListRoots):
		if cs := mcptransport.CallStreamFrom(c.ctx); cs != nil {
			// On the call's stream, before its result (mcp-go would use the GET stream).
			raw, err := c.s.adapter.askOnStream(rctx, cs, method, params)
			if !errors.Is(err, mcptransport.ErrCallEnded) {
				return raw, err
			}
		}
		if method == string(mcp.MethodListRoots) {
			res, err = c.s.mcp.RequestRoots(rctx, mcp.ListRootsRequest{Request: mcp.Request{Method: method}})
			break
		}
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("sampling/createMessage params: %w", err)
		}
		res, err = c.s.mcp.RequestSampling(rctx, mcp.CreateMessageRequest{Request: mcp.Request{Method: method}, CreateMessageParams: p})
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// AskAll asks the client the requests, each under its key (providers.InputAsker): on
// 2026-07-28 together, as one input_required answer of the held call (roundTrip);
// before, one after the other as Ask does. A request whose capability the client did
// not declare is not sent: its answer is the error saying so.
func (c caller) AskAll(ctx context.Context, reqs []providers.InputRequest) ([]providers.InputAnswer, error) {
	if len(reqs) > maxInputRequests {
		return nil, fmt.Errorf("a call asks at most %d requests at once, not %d", maxInputRequests, len(reqs))
	}
	seen := map[string]bool{}
	for _, r := range reqs {
		if r.Key == "" || seen[r.Key] {
			return nil, fmt.Errorf("each request a call asks at once needs a key of its own (%q is empty or given twice)", r.Key)
		}
		seen[r.Key] = true
	}
	out := make([]providers.InputAnswer, len(reqs))
	var asks []*inputAsk
	var at []int
	for i, r := range reqs {
		if err := clientTakes(c.ctx, r.Method); err != nil {
			out[i].Err = err
			continue
		}
		asks = append(asks, &inputAsk{key: r.Key, method: r.Method, params: r.Params})
		at = append(at, i)
	}
	if len(asks) == 0 {
		return out, nil
	}
	pc := pendingFrom(c.ctx)
	if pc == nil {
		for j, a := range asks {
			out[at[j]].Result, out[at[j]].Err = c.Ask(ctx, a.method, a.params)
		}
		return out, nil
	}
	rctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	answers, err := pc.askAll(rctx, asks)
	if err != nil {
		return nil, err
	}
	for j, a := range answers {
		out[at[j]] = providers.InputAnswer{Result: a.raw, Err: a.err, Round: a.round}
	}
	return out, nil
}

// clientTakes returns an error, naming what is missing, unless the client of this
// request declared the capability a request of the method needs: in the request's
// metadata on 2026-07-28, when its session was initialized before.
func clientTakes(ctx context.Context, method string) error {
	var caps *mcp.ClientCapabilities
	modern := false
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		caps, modern = info.ClientCapabilities, true
	} else if ci, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		cc := ci.GetClientCapabilities()
		caps = &cc
	}
	lacks := func(capability string) error {
		if modern {
			// The request declared its capabilities: it lacks one it needs.
			return missingCapability{capability: capability}
		}
		return errors.New("the calling client does not support " + capability)
	}
	switch method {
	case string(mcp.MethodElicitationCreate):
		if !canElicit(ctx) {
			return lacks("elicitation")
		}
	case string(mcp.MethodSamplingCreateMessage):
		if caps == nil || caps.Sampling == nil {
			return lacks("sampling")
		}
	case string(mcp.MethodListRoots):
		if caps == nil || caps.Roots == nil {
			return lacks("roots")
		}
	default:
		return fmt.Errorf("switchboard does not relay %s to the calling client", method)
	}
	return nil
}

// SubscribeResource subscribes the calling session to uri's updates, as its own
// resources/subscribe would (subscribe_flow). A 2026-07-28 client has no session to
// subscribe: it names the resource in subscriptions/listen.
func (c caller) SubscribeResource(_ context.Context, uri string) error {
	sess := server.ClientSessionFromContext(c.ctx)
	if info := server.RequestProtocolInfoFromContext(c.ctx); sess == nil || info != nil && info.Modern {
		return errors.New("on protocol version " + mcp.ProtocolVersion20260728 + " a client follows a resource by naming it in subscriptions/listen")
	}
	if !c.s.subs.add(uri, sess.SessionID()) {
		return fmt.Errorf("this session already follows %d resources, the most it may", maxSubscriptionsPerSession)
	}
	c.s.relaySubscription(c.ctx, sess, mcp.MethodResourcesSubscribe, uri)
	return nil
}
