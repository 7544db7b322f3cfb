package mcptransport

import (
	"context"
	"errors"
	"net/http"

	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard/sessions"
)

// SessionCall is what the adapter decided about one request's session before handing
// the request to mcp-go, which asks its session id manager: the id an initialize
// issues, whether the id was checked, and whether the request is the adapter's own
// (a session restored on this node, a relayed message).
type SessionCall struct {
	ID         string
	Initialize bool // the adapter serves an initialize and records its session
	Validated  bool
	Internal   bool
}

type sessionCallKey struct{}

func WithSessionCall(ctx context.Context, c *SessionCall) context.Context {
	return context.WithValue(ctx, sessionCallKey{}, c)
}

// InternalCall reports whether ctx is a request the adapter made itself.
func InternalCall(ctx context.Context) bool {
	c, ok := ctx.Value(sessionCallKey{}).(*SessionCall)
	return ok && c.Internal
}

var errSessionNotChecked = errors.New("session id not checked by the adapter")

// Generate returns the id the adapter chose for the initialize (a new random one, or
// the recorded id of a session restored on this node). Only the adapter's initialize
// mints one: anything else gets "", which mcp-go answers without a session.
func (c *SessionCall) Generate() string {
	if c.ID == "" && c.Initialize {
		c.ID = sessions.NewID()
	}
	return c.ID
}

// Validate accepts the id only when the adapter checked it against the session records
// (tenant, principal, expiry) before serving the request.
func (c *SessionCall) Validate(string) (bool, error) {
	if !c.Validated {
		return false, errSessionNotChecked
	}
	return false, nil
}

// Terminate does nothing: the adapter ends the record itself (DELETE, eviction,
// expiry) and tells the other nodes; mcp-go then only drops this node's state.
func (c *SessionCall) Terminate(string) (bool, error) { return false, nil }

// SessionIDs resolves mcp-go's session id manager per request: the adapter's decision
// for the request, carried in its context. Without one (mcp-go's shutdown passes no
// request) nothing is generated or accepted, and terminating only drops this node's
// state, so a node shutting down never ends a session for the others.
type SessionIDs struct{}

func (SessionIDs) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	if r != nil {
		if c, ok := r.Context().Value(sessionCallKey{}).(*SessionCall); ok {
			return c
		}
	}
	return &SessionCall{}
}

var _ server.SessionIdManagerResolver = SessionIDs{}
