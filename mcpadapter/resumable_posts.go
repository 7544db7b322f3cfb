package mcpadapter

import (
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/switchboard-hub/switchboard/mcptransport"
)

// A tools/call of a session answers as an SSE stream whose first event is a priming
// event (an id and no data, as 2025-11-25 has servers prime a client to reconnect):
// a client that loses the stream before the answer (the call runs on, see
// serveRequest) GETs the MCP URL with the session id and that id as Last-Event-ID and
// is replayed the answer (mcptransport.CallStream.Resume).

// primes reports whether a request of the session is answered on a primed stream:
// a tools/call, of a version that knows priming events, from a client that reads SSE.
func primes(r *http.Request, msg mcptransport.Message, version string) bool {
	return msg.Method == string(mcp.MethodToolsCall) && version >= mcp.ProtocolVersion20251125 &&
		strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// streams reports whether a request is a call answered on a stream the hub keeps
// (mcptransport.CallStream): a tools/call from a client that reads SSE.
func streams(r *http.Request, msg mcptransport.Message) bool {
	return msg.Method == string(mcp.MethodToolsCall) && strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}
