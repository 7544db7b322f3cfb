package mcptransport

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/sessions"
)

// SessionNotFound is the JSON-RPC error code of an unknown session, as the official SDKs
// use it.
const SessionNotFound = -32001

// OpenSession is a request of an issued session that the session rules admitted: the
// session's id and record. Close must be called once the request is served.
type OpenSession struct {
	ID     string
	Record sessions.Record
	Close  func()
}

// Open applies the session rules to a request of a session-based protocol version other
// than initialize: it must carry a recorded, live session of the same credential at the
// same URL (400 without the Mcp-Session-Id header, 404 for an unknown, ended or foreign
// session, so the client initializes again). Open answers a DELETE (ending the session)
// and notifications/initialized itself; for any other request it restores the session
// on ep (from its record, read afresh: another node may have changed it) and marks it
// used. ok is false when Open answered the request itself; unavailable answers when the
// session's record cannot be read.
func (r *Records) Open(w http.ResponseWriter, req *http.Request, msg Message, ep *Endpoint, p switchboard.Principal, agentID string, clock func() time.Time,
	unavailable func(w http.ResponseWriter, id json.RawMessage, err error)) (OpenSession, bool) {
	ctx := req.Context()
	now := clock()
	id := req.Header.Get(server.HeaderKeySessionID)
	if id == "" {
		msg.Refuse(w, http.StatusBadRequest, mcp.INVALID_REQUEST,
			"the Mcp-Session-Id header is required: send the session id that initialize returned, or initialize first")
		return OpenSession{}, false
	}
	rec, err := r.Live(ctx, p, agentID, id, now)
	if err != nil {
		if switchboard.CodeOf(err) == switchboard.CodeNotFound {
			msg.Refuse(w, http.StatusNotFound, SessionNotFound, "session not found: it ended or expired; initialize a new session")
			return OpenSession{}, false
		}
		r.logger().ErrorContext(ctx, "read MCP session", "tenant", p.TenantID, "err", err)
		unavailable(w, msg.ID, err)
		return OpenSession{}, false
	}
	if req.Method == http.MethodDelete {
		r.End(ctx, p.TenantID, id)
		w.WriteHeader(http.StatusOK)
		return OpenSession{}, false
	}
	if msg.Method == string(mcp.MethodNotificationInitialized) && len(msg.ID) == 0 {
		// The end of initialize, which mcp-go does nothing with: the session is not
		// restored for it, so a client that stops here holds no memory either.
		w.WriteHeader(http.StatusAccepted)
		return OpenSession{}, false
	}
	load := func() (sessions.Record, error) { return r.Store.Get(ctx, p.TenantID, id) }
	if err := ep.Begin(ctx, id, now, load); err != nil {
		if switchboard.CodeOf(err) == switchboard.CodeNotFound {
			msg.Refuse(w, http.StatusNotFound, SessionNotFound, "session not found: it ended or expired; initialize a new session")
			return OpenSession{}, false
		}
		r.logger().ErrorContext(ctx, "restore MCP session", "tenant", p.TenantID, "err", err)
		msg.Refuse(w, http.StatusInternalServerError, mcp.INTERNAL_ERROR, "internal error")
		return OpenSession{}, false
	}
	r.Touch(ctx, p.TenantID, id, now)
	return OpenSession{ID: id, Record: rec, Close: func() { ep.End(id, clock()) }}, true
}

// logger is the Records' logger, or slog's default.
func (r *Records) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.Default()
}
