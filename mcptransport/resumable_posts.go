package mcptransport

import (
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// A tools/call of a session answers as an SSE stream whose first event is a priming
// event (an id and no data, as 2025-11-25 has servers prime a client to reconnect):
// a client that loses the stream before the answer (the call runs on, see
// serveRequest) GETs the MCP URL with the session id and that id as Last-Event-ID and
// is replayed the answer (CallStream.Resume).

// Primes reports whether a request of the session is answered on a primed stream:
// a tools/call, of a version that knows priming events, from a client that reads SSE.
func Primes(r *http.Request, msg Message, version string) bool {
	return msg.Method == string(mcp.MethodToolsCall) && version >= mcp.ProtocolVersion20251125 &&
		strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// Streams reports whether a request is a call answered on a stream the hub keeps
// (CallStream): a tools/call from a client that reads SSE.
func Streams(r *http.Request, msg Message) bool {
	return msg.Method == string(mcp.MethodToolsCall) && strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}
