package mcpadapter

import (
	"context"
	"errors"
	"net/http"

	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard/sessions"
)

// sessionCall is what the adapter decided about one request's session before handing
// the request to mcp-go, which asks its session id manager: the id an initialize
// issues, whether the id was checked, and whether the request is the adapter's own
// (a session restored on this node, a relayed message).
type sessionCall struct {
	id         string
	initialize bool // the adapter serves an initialize and records its session
	validated  bool
	internal   bool
}

type sessionCallKey struct{}

func withSessionCall(ctx context.Context, c *sessionCall) context.Context {
	return context.WithValue(ctx, sessionCallKey{}, c)
}

// internalCall reports whether ctx is a request the adapter made itself.
func internalCall(ctx context.Context) bool {
	c, ok := ctx.Value(sessionCallKey{}).(*sessionCall)
	return ok && c.internal
}

var errSessionNotChecked = errors.New("session id not checked by the adapter")

// Generate returns the id the adapter chose for the initialize (a new random one, or
// the recorded id of a session restored on this node). Only the adapter's initialize
// mints one: anything else gets "", which mcp-go answers without a session.
func (c *sessionCall) Generate() string {
	if c.id == "" && c.initialize {
		c.id = sessions.NewID()
	}
	return c.id
}

// Validate accepts the id only when the adapter checked it against the session records
// (tenant, principal, expiry) before serving the request.
func (c *sessionCall) Validate(string) (bool, error) {
	if !c.validated {
		return false, errSessionNotChecked
	}
	return false, nil
}

// Terminate does nothing: the adapter ends the record itself (DELETE, eviction,
// expiry) and tells the other nodes; mcp-go then only drops this node's state.
func (c *sessionCall) Terminate(string) (bool, error) { return false, nil }

// sessionIDs resolves mcp-go's session id manager per request: the adapter's decision
// for the request, carried in its context. Without one (mcp-go's shutdown passes no
// request) nothing is generated or accepted, and terminating only drops this node's
// state, so a node shutting down never ends a session for the others.
type sessionIDs struct{}

func (sessionIDs) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	if r != nil {
		if c, ok := r.Context().Value(sessionCallKey{}).(*sessionCall); ok {
			return c
		}
	}
	return &sessionCall{}
}

var _ server.SessionIdManagerResolver = sessionIDs{}
