package mcpadapter

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/mcptransport"
)

// outage returns err as the hub's unavailable error (retry in 5 s) when it says the
// database does not answer, else as it is.
func outage(err error) *switchboard.Error {
	e := switchboard.AsError(err)
	if e.Code == switchboard.CodeInternal && switchboard.DatabaseDown(err) {
		return switchboard.Unavailable(err)
	}
	return e
}

// answerUnavailable answers a request the hub cannot serve for now (e, coded
// unavailable with a RetryAfter) in MCP's own shape, with the Retry-After header: a
// tools/call gets a tool result with isError saying nothing was run and when to retry
// (as a refused call does), another JSON-RPC request a JSON-RPC error under its id,
// anything else (a notification, a GET stream) the HTTP error.
func answerUnavailable(w http.ResponseWriter, r *http.Request, e *switchboard.Error) {
	id, method, ok := peekRequest(r)
	switch {
	case ok && method == string(mcp.MethodToolsCall):
		writeToolRefusal(w, id, e)
	case ok:
		writeRPCRefusal(w, id, e)
	default:
		writeError(w, e)
	}
}

// sessionsUnavailable answers a request whose MCP session could not be read or
// recorded (sessions are rows in the database): unavailable, retry in 5 s, as a
// JSON-RPC error under the request's id, or the HTTP error for a message without one.
func sessionsUnavailable(w http.ResponseWriter, id json.RawMessage, err error) {
	e := outage(err)
	if e.Code != switchboard.CodeUnavailable {
		e = &switchboard.Error{Code: switchboard.CodeUnavailable, Message: "sessions are unavailable; retry in 5 s", RetryAfter: switchboard.DatabaseRetry, Err: err}
	}
	if !mcptransport.ValidID(id) {
		writeError(w, e)
		return
	}
	writeRPCRefusal(w, id, e)
}

// writeRPCRefusal answers the JSON-RPC request id (null when nil) with e, a refusal
// to retry later, as an error with e's status (503 or 429) and Retry-After: its
// message for people, and in data the hub's code and the seconds to wait for programs.
func writeRPCRefusal(w http.ResponseWriter, id json.RawMessage, e *switchboard.Error) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	secs := int((e.RetryAfter + time.Second - 1) / time.Second)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	w.WriteHeader(e.Code.HTTPStatus())
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": mcp.JSONRPC_VERSION, "id": id,
		"error": map[string]any{"code": mcp.INTERNAL_ERROR, "message": e.Message,
			"data": map[string]any{"code": e.Code, "retry_after_seconds": secs}},
	})
}
