package mcptransport

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
)

// Incoming is a request to an MCP URL as the transport read it: its body (a POST's,
// left readable again for the handlers), the JSON-RPC message in it, and whether it
// speaks the stateless protocol era (2026-07-28), by its header or its _meta.
type Incoming struct {
	Body   []byte
	Msg    Message
	Modern bool
}

// ReadIncoming reads a request's body, its message and its protocol era, and checks
// the envelope for that era. ok is false when it answered the request itself: a body
// over maxBody bytes or unreadable, an envelope the era refuses.
func ReadIncoming(w http.ResponseWriter, r *http.Request, maxBody int64) (Incoming, bool) {
	var in Incoming
	var env Envelope
	if r.Method == http.MethodPost {
		var err error
		in.Body, err = io.ReadAll(r.Body)
		if err != nil {
			WriteRPCError(w, http.StatusRequestEntityTooLarge, nil, mcp.PARSE_ERROR,
				fmt.Sprintf("the request body is unreadable or over %d bytes", maxBody))
			return in, false
		}
		r.Body = io.NopCloser(bytes.NewReader(in.Body))
		env = DecodeEnvelope(in.Body)
		if in.Msg, err = ReadMessage(env, in.Body); err != nil {
			in.Msg = Message{}
		}
	}
	in.Modern = mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) || mcp.IsModernProtocol(in.Msg.Params.Meta.ProtocolVersion())
	if r.Method == http.MethodPost {
		if fault := CheckEnvelope(env, in.Modern); fault != nil {
			fault.Write(w)
			return in, false
		}
	}
	return in, true
}
