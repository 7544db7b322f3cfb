package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// A call that needs an account its person has not connected (a tool of a provider
// listed by the catalog setting "all"), a connection that needs reconnecting, or a
// scope the connection was not granted, asks the person to connect from the
// conversation: a connect link (connections.IssueConnectLink), bound to the person,
// single use, valid ten minutes, given to the client as a URL-mode elicitation. Before
// 2026-07-28 the hub sends elicitation/create (mode url) and, once the person accepted,
// waits for the connection, sends notifications/elicitation/complete and runs the call;
// where it cannot send a request (no session, or a client that takes the call's
// answer as one JSON body, with no stream to ask on) the call answers -32042 (URLElicitationRequired) and
// the client's retry runs once the connection is made. On 2026-07-28 the call answers
// input_required with a url entry, and the client's next call waits for the connection
// and runs. A client without URL elicitation gets a tool error carrying the link. The
// link's state is in the database, so any node sees the connection made.

// ConnectLinks is what the adapter needs of the connections service to ask for a
// connection from the conversation.
type ConnectLinks interface {
	IssueConnectLink(ctx context.Context, p switchboard.Principal, in connections.ConnectLinkInput) (connections.ConnectLink, error)
	ConnectLinkDone(ctx context.Context, tenant switchboard.TenantID, id string) (connectionID string, done bool, err error)
}

// ConnectPath is the path of the connect pages, followed by a link's secret.
const ConnectPath = "/connect/"

// connectKey names the connect link among a call's input requests.
const connectKey = "switchboard_connect"

// connectStatePrefix starts the requestState of a call that asked for a connection.
const connectStatePrefix = "connect."

// connectPoll is how often a call waiting for its connection reads its link.
const connectPoll = 250 * time.Millisecond

// connectedOnceKey marks a call run again after its connection was made: it does not
// ask again.
type connectedOnceKey struct{}

// connectNeed is what a call needs connected before it can run; Provider is empty
// when it needs nothing.
type connectNeed struct {
	connections.ConnectLinkInput
	why string
}

// connectNeedOf says what the call needs connected: an account of an unconnected
// provider, the reconnection of its connection, or the scopes the tool needs that its
// connection lacks.
func connectNeedOf(t *hubTool, connID string) connectNeed {
	b := t.binding
	if b.Unconnected() {
		// Only the scopes the tool needs are asked; another tool asks for its own
		// when called (incremental authorization).
		return connectNeed{ConnectLinkInput: connections.ConnectLinkInput{Provider: b.Tool.Provider.Name, Scopes: b.Tool.Info.Scopes},
			why: fmt.Sprintf("%s needs a %s account, and none is connected.", b.Tool.Name, b.Tool.Provider.Title)}
	}
	for _, c := range b.Connections {
		if c.ID != connID {
			continue
		}
		if c.NeedsReconnect {
			return connectNeed{ConnectLinkInput: connections.ConnectLinkInput{Provider: b.Tool.Provider.Name, ConnectionID: c.ID},
				why: fmt.Sprintf("The %s account %q needs reconnecting before %s can run.", b.Tool.Provider.Title, c.Label, b.Tool.Name)}
		}
		if missing := router.MissingScopes(b.Tool, c); len(missing) > 0 && b.Tool.Provider.OAuth != nil {
			return connectNeed{ConnectLinkInput: connections.ConnectLinkInput{Provider: b.Tool.Provider.Name, ConnectionID: c.ID, Scopes: missing},
				why: fmt.Sprintf("%s needs access the %s account %q has not granted (%s).", b.Tool.Name, b.Tool.Provider.Title, c.Label, strings.Join(missing, ", "))}
		}
	}
	return connectNeed{}
}

// connectFirst asks the person to connect what the call needs, as the client can (see
// the top of this file). It returns the result to answer, or, once the connection is
// made and the call may run, nil and true.
func (s *scope) connectFirst(ctx context.Context, req mcp.CallToolRequest, p switchboard.Principal, rreq router.Request, need connectNeed) (*mcp.CallToolResult, bool, error) {
	a := s.adapter
	links := a.opts.ConnectLinks
	call := stateCall{p: p, agentID: s.agentID, origin: runs.Origin(connectKey), rreq: rreq}
	now := a.opts.Now
	if now == nil {
		now = time.Now
	}
	states := requestStates{key: a.opts.ConnectStateKey, now: now}
	info := server.RequestProtocolInfoFromContext(ctx)
	modern := info != nil && info.Modern

	// 2026-07-28: the call comes again with the person's answer to the link it gave.
	if modern && req.Params.RequestState != "" && strings.HasPrefix(req.Params.RequestState, connectStatePrefix) {
		linkID, state, _ := strings.Cut(strings.TrimPrefix(req.Params.RequestState, connectStatePrefix), ".")
		call.rreq.ConnectionID = "link:" + linkID
		if err := states.check(state, call); err != nil {
			a.opts.Router.Refused(p, rreq, err)
			return a.toolError(err), false, nil
		}
		answer := server.ElicitationResponse(req.Params.InputResponses, connectKey)
		if answer == nil || answer.Action != mcp.ElicitationResponseActionAccept {
			return notConnected(rreq.Tool, answer), false, nil
		}
		if res := s.awaitConnection(ctx, p, linkID, ""); res != nil {
			return res, false, nil
		}
		a.sendComplete(ctx, nil, linkID)
		return nil, true, nil
	}

	link, err := links.IssueConnectLink(ctx, p, need.ConnectLinkInput)
	if err != nil {
		a.opts.Router.Refused(p, rreq, err)
		return a.toolError(err), false, nil
	}
	url := a.opts.PublicURL + ConnectPath + link.Secret
	message := need.why + " Open this link to connect it (it works once, for the next 10 minutes); the call runs once it is connected."
	params := mcp.ElicitationParams{Mode: mcp.ElicitationModeURL, Message: message, ElicitationID: link.ID, URL: url}
	if !canElicitURL(ctx) {
		return connectLinkResult(rreq.Tool, need.why, url), false, nil
	}
	if modern {
		call.rreq.ConnectionID = "link:" + link.ID
		state := connectStatePrefix + link.ID + "." + states.issue(call)
		return server.NewInputRequestBuilder(state).Elicit(connectKey, params).ToolResult(), false, nil
	}
	srv := server.ServerFromContext(ctx)
	sess := server.ClientSessionFromContext(ctx)
	if srv == nil || sess == nil || mcptransport.CallStreamFrom(ctx) == nil {
		// No stream to ask on: the client takes the call's answer as one JSON body.
		return nil, false, mcp.URLElicitationRequiredError{Elicitations: []mcp.ElicitationParams{params}}
	}
	answer, err := srv.RequestURLElicitation(ctx, sess, link.ID, url, message)
	if errors.Is(err, server.ErrElicitationNotSupported) || errors.Is(err, server.ErrNoActiveSession) {
		// The call cannot ask and wait: the client connects, then calls again.
		return nil, false, mcp.URLElicitationRequiredError{Elicitations: []mcp.ElicitationParams{params}}
	}
	if err != nil {
		return connectLinkResult(rreq.Tool, need.why+" (The client could not show the link: "+clipText(err.Error(), 200)+".)", url), false, nil
	}
	if answer.Action != mcp.ElicitationResponseActionAccept {
		return notConnected(rreq.Tool, answer), false, nil
	}
	if res := s.awaitConnection(ctx, p, link.ID, url); res != nil {
		return res, false, nil
	}
	a.sendComplete(ctx, sess, link.ID)
	return nil, true, nil
}

// credentialsRefused reports whether a call failed because the provider refused its
// connection's credentials (the connection now needs reconnecting).
func credentialsRefused(err error) bool {
	var ue *providers.UpstreamError
	if errors.As(err, &ue) {
		return ue.Code == switchboard.CodeReconnect
	}
	return switchboard.CodeOf(err) == switchboard.CodeReconnect
}

// connectRetry reports whether a call answers a connect link the hub gave (2026-07-28).
func connectRetry(req mcp.CallToolRequest) bool {
	return strings.HasPrefix(req.Params.RequestState, connectStatePrefix)
}

// runConnected runs the call again once its connection is made: with the scope's tools
// refreshed (the tool is now on the connection), and without asking again.
func (s *scope) runConnected(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	req.Params.RequestState, req.Params.InputResponses = "", nil
	return s.state.Load().handler(context.WithValue(ctx, connectedOnceKey{}, true), req)
}

// asksToConnect reports whether a call may ask its person to connect.
func (s *scope) asksToConnect(ctx context.Context) bool {
	return s.adapter.opts.ConnectLinks != nil && ctx.Value(connectedOnceKey{}) == nil
}

// awaitConnection waits until the link led to a connection; else the result to
// answer: the link expired, or the call ended first.
func (s *scope) awaitConnection(ctx context.Context, p switchboard.Principal, linkID, url string) *mcp.CallToolResult {
	a := s.adapter
	tick := time.NewTicker(connectPoll)
	defer tick.Stop()
	for {
		_, done, err := a.opts.ConnectLinks.ConnectLinkDone(ctx, p.TenantID, linkID)
		if err != nil {
			return a.toolError(err)
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			msg := "The call ended before the account was connected."
			if url != "" {
				msg += " Once it is connected at " + url + ", call the tool again."
			}
			return mcp.NewToolResultError(msg)
		case <-tick.C:
		}
	}
}

// sendComplete tells the client the URL elicitation is complete: on the session where
// the call came, or on the call's own stream.
func (a *Adapter) sendComplete(ctx context.Context, sess server.ClientSession, id string) {
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return
	}
	if sess != nil {
		if err := srv.SendElicitationComplete(ctx, sess, id); err == nil {
			return
		}
	}
	_ = srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationElicitationComplete), map[string]any{"elicitationId": id})
}

// canElicitURL reports whether the client of this request can open a URL for the
// person (URL-mode elicitation), declared in this request's metadata (2026-07-28) or
// when its session was initialized.
func canElicitURL(ctx context.Context) bool {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.ClientCapabilities != nil && info.ClientCapabilities.Elicitation != nil && info.ClientCapabilities.Elicitation.URL != nil
	}
	ci, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo)
	if !ok {
		return false
	}
	e := ci.GetClientCapabilities().Elicitation
	return e != nil && e.URL != nil
}

// connectLinkResult is the answer to a client that cannot open the link itself: a
// tool error carrying it, for the agent to show the person.
func connectLinkResult(tool, why, url string) *mcp.CallToolResult {
	res := mcp.NewToolResultError(fmt.Sprintf("%s Not run. Show the person this link to connect it (it works once, for the next 10 minutes): %s — then call %s again.", why, url, tool))
	res.Meta = mcp.NewMetaFromMap(map[string]any{"switchboard/connect_url": url})
	return res
}

// notConnected is the answer when the person declined or dismissed the link.
func notConnected(tool string, answer *mcp.ElicitationResult) *mcp.CallToolResult {
	how := "did not open"
	if answer != nil && answer.Action == mcp.ElicitationResponseActionDecline {
		how = "declined"
	}
	return mcp.NewToolResultError(fmt.Sprintf("The person %s the link to connect the account %s needs, so nothing was run. Do not retry unless they ask for it.", how, tool))
}
