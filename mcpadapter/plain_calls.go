package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard/mcptransport"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
)

// The adapter's answer to a plain tools/call. mcp-go v1.2.1's StreamableHTTPServer
// reads a posted body for its envelope and its era before handing it to the server,
// starts a goroutine and two channels per request for notifications, and encodes the
// result through CallToolResult.MarshalJSON's map, which its Encoder then compacts
// again: about 9% of all the CPU of a call in bench/ (bench/profiles/tools-call-16.md).
//
// A plain call is one the hub's own transport serves: it hands the body to the scope's
// server through mcp-go's public MCPServer.HandleMessage, with the context values
// mcp-go's transport gives it (the session, the supported protocol versions), so every
// hook, tool filter, middleware and validator of the server runs as it would, and it
// writes the answer's bytes as mcp-go writes them (TestPlainCallAnswersAsMCPGo compares
// the two on the same requests). A call is plain when nothing in it needs mcp-go's
// transport:
//   - a tools/call of a session-based protocol version, from a client that reads SSE
//     (the hub keeps the call's stream, mcptransport.CallStream, so its log lines go there as
//     before), whose session is quiet (Endpoint.Quiet) and declared neither elicitation
//     nor sampling: nothing during the call can turn to mcp-go's server requests (the
//     confirmation form, a remote server's elicitation) or multi round-trip bridge;
//   - no task, no progress token, no input responses;
//   - one of the scope's hub tools (not a remote MCP server's, whose results pass
//     through as the remote gave them), as the scope's server lists it.
//
// mcp-go's transport gives the server a request's HTTP headers under a context key of
// its own, which HandleMessage copies into CallToolRequest.Header; for a plain call the
// hub carries them under its own key, and the server's first hook (plainHeaders) copies
// them, so every hook and handler sees the headers as mcp-go would give them.
//
// Everything else goes to mcp-go as before. A notification mcp-go queues on the
// session while a plain call runs (list_changed from a refresh) is delivered with the
// session's next answer, not on this call's stream: which of the two happens with
// mcp-go depends on the moment too.

// plainServer is what a scope's plain calls need of its transport.
type plainServer struct {
	versions []string       // the transport's protocol versions, as mcp-go puts them in the context
	answered *atomic.Uint64 // plain calls answered (tests read it)
}

func newPlainServer(h *server.StreamableHTTPServer) plainServer {
	return plainServer{versions: server.FilterSupportedVersions(h), answered: new(atomic.Uint64)}
}

// plainTools are the listed tools whose calls may be plain: hub tools, not a remote
// MCP server's, that take a call without a task; a management tool listed under the
// same name (listed after, so mcp-go runs it) is not one.
func plainTools(st *scopeState, mgmt []server.ServerTool) map[string]bool {
	plain := make(map[string]bool, len(st.order))
	for _, name := range st.order {
		t := st.hub[name]
		def := t.tool()
		if t.binding.Tool.Provider != nil && t.binding.Tool.Provider.Name == remotemcp.Provider {
			continue
		}
		if def.Execution != nil && def.Execution.TaskSupport == mcp.TaskSupportRequired {
			continue
		}
		plain[name] = true
	}
	for _, t := range mgmt {
		delete(plain, t.Tool.Name)
	}
	return plain
}

// plainCall is a call the adapter answers itself, as plainCallOf read it.
type plainCall struct {
	session server.ClientSession
	body    []byte // the posted body, which HandleMessage reads as mcp-go's transport passes it
}

// plainCallOf returns the session's request as a plain call, or false when it is not
// one (see the top of this file); nothing was done either way.
func (s *scope) plainCallOf(r *http.Request, session string, msg mcptransport.Message, body []byte) (*plainCall, bool) {
	if r.Method != http.MethodPost || msg.Method != string(mcp.MethodToolsCall) ||
		msg.JSONRPC != mcp.JSONRPC_VERSION || len(msg.Result) > 0 || len(msg.Error) > 0 {
		return nil, false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, false
	}
	if v := r.Header.Get(mcp.HeaderProtocolVersion); v != "" && !mcp.IsValidProtocolVersion(v) {
		return nil, false
	}
	c := &plainCall{body: body}
	var id any
	if json.Unmarshal(msg.ID, &id) != nil || id == nil {
		return nil, false
	}
	ls := s.ep.Listed(session)
	if ls == nil || !s.ep.Quiet(session) {
		return nil, false
	}
	c.session = ls.Session
	ci, ok := c.session.(server.SessionWithClientInfo)
	if !ok {
		return nil, false
	}
	if caps := ci.GetClientCapabilities(); caps.Elicitation != nil || caps.Sampling != nil {
		return nil, false
	}
	var p plainParams
	if !readCallParams(msg, body, &p) {
		return nil, false
	}
	if p.Task != nil || (p.Meta != nil && p.Meta.ProgressToken != nil) || len(p.InputResponses) > 0 || p.RequestState != "" ||
		mcp.IsModernProtocol(p.Meta.ProtocolVersion()) {
		return nil, false
	}
	st := s.state.Load()
	if st == nil || !st.plain[p.Name] {
		return nil, false
	}
	return c, true
}

// plainParams is what a plain call's eligibility reads of a tools/call's params: the
// members mcp-go's CallToolParams.UnmarshalJSON decodes, but the arguments, which
// HandleMessage decodes for the call.
type plainParams struct {
	Name string          `json:"name"`
	Meta *mcp.Meta       `json:"_meta,omitempty"`
	Task *mcp.TaskParams `json:"task,omitempty"`
	mcp.MultiRoundTripParams
}

// UnmarshalJSON replaces every member, as CallToolParams.UnmarshalJSON does when a body
// names params twice.
func (p *plainParams) UnmarshalJSON(data []byte) error {
	type members plainParams
	var m members
	err := json.Unmarshal(data, &m)
	*p = plainParams(m)
	return err
}

// readCallParams reads a tools/call's params as mcp-go reads them (json.Unmarshal of
// the body into mcp.CallToolRequest), so the eligibility of a call is judged on the
// request HandleMessage will run. Of the body, that reading takes only the method and
// the params: when the envelope's decoding read both members as spelt, each appears
// once (a member named twice is decoded twice by encoding/json) and no escape could
// spell one otherwise, the params the envelope already holds are decoded alone,
// without a pass over the whole body. Any other body is read in full.
func readCallParams(msg mcptransport.Message, body []byte, p *plainParams) bool {
	if !msg.Exact || bytes.IndexByte(body, '\\') >= 0 ||
		bytes.Count(body, []byte(`"params"`)) > 1 || bytes.Count(body, []byte(`"method"`)) != 1 {
		var req struct {
			Params plainParams `json:"params"`
		}
		err := json.Unmarshal(body, &req)
		*p = req.Params
		return err == nil
	}
	if len(msg.RawParams) == 0 {
		return true
	}
	return p.UnmarshalJSON(msg.RawParams) == nil
}

// answerPlain serves a plain call as mcp-go's transport would: the scope's server
// handles the body (HandleMessage, with the session and the protocol versions in the
// context), and the answer is written to w as mcp-go writes it.
func (s *scope) answerPlain(w http.ResponseWriter, r *http.Request, c *plainCall) {
	s.plain.answered.Add(1)
	ctx := s.mcp.WithContext(r.Context(), c.session)
	ctx = server.WithSupportedProtocolVersions(ctx, s.plain.versions)
	ctx = context.WithValue(ctx, plainHeaderKey{}, r.Header)
	resp := s.mcp.HandleMessage(ctx, c.body)
	if r.Context().Err() != nil {
		return // mcp-go writes nothing once the request's context ended
	}
	buf := answerBuffers.Get().(*bytes.Buffer)
	defer answerBuffers.Put(buf)
	buf.Reset()
	var err error
	if ok, isResponse := resp.(mcp.JSONRPCResponse); isResponse {
		if res, isCall := ok.Result.(*mcp.CallToolResult); isCall && res != nil {
			err = appendResponse(buf, ok.ID, res)
		} else {
			err = json.NewEncoder(buf).Encode(resp)
		}
	} else {
		err = json.NewEncoder(buf).Encode(resp)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if err != nil {
		s.adapter.opts.Logger.Error("Failed to write response", "err", err) // as mcp-go logs it, with nothing written
		return
	}
	_, _ = w.Write(buf.Bytes())
}

type plainHeaderKey struct{}

// plainHeaders is the first hook of a scope's server: on a plain call, it gives the
// request the HTTP headers mcp-go's transport would have given it, before any other
// hook or the handler sees the request.
func plainHeaders() server.ServerOption {
	return withHooks(func(h *server.Hooks) {
		h.AddBeforeAny(func(ctx context.Context, _ any, method mcp.MCPMethod, message any) {
			if method != mcp.MethodToolsCall {
				return
			}
			req, ok := message.(*mcp.CallToolRequest)
			if !ok || len(req.Header) > 0 {
				return
			}
			if header, ok := ctx.Value(plainHeaderKey{}).(http.Header); ok {
				req.Header = header
			}
		})
	})
}

var answerBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// appendResponse writes the JSON-RPC answer mcp-go's json.NewEncoder(w).Encode writes
// for a tools/call result, without the map and the second compaction: the members
// CallToolResult.MarshalJSON puts in its map, in the order json sorts a map's keys,
// each encoded by json.Marshal as it encodes the map's values (compact, HTML-escaped).
// A result with members of the stateless version goes through MarshalJSON itself.
func appendResponse(buf *bytes.Buffer, id mcp.RequestId, res *mcp.CallToolResult) error {
	idJSON, err := json.Marshal(id)
	if err != nil {
		return err
	}
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(idJSON)
	buf.WriteString(`,"result":`)
	if err := appendCallResult(buf, res); err != nil {
		return err
	}
	buf.WriteString("}\n")
	return nil
}

// appendCallResult writes what json.Marshal(res) writes.
func appendCallResult(buf *bytes.Buffer, res *mcp.CallToolResult) error {
	if res.ResultType != "" || len(res.InputRequests) > 0 || res.RequestState != "" {
		b, err := json.Marshal(res)
		buf.Write(b)
		return err
	}
	member := func(prefix string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		buf.WriteString(prefix)
		buf.Write(b)
		return nil
	}
	buf.WriteByte('{')
	if res.Meta != nil {
		if err := member(`"_meta":`, res.Meta); err != nil {
			return err
		}
		buf.WriteByte(',')
	}
	buf.WriteString(`"content":[`)
	for i, c := range res.Content {
		prefix := ""
		if i > 0 {
			prefix = ","
		}
		if err := member(prefix, any(c)); err != nil {
			return err
		}
	}
	buf.WriteByte(']')
	if res.IsError {
		buf.WriteString(`,"isError":true`)
	}
	switch {
	case len(res.RawStructuredContent) > 0:
		if err := member(`,"structuredContent":`, json.RawMessage(res.RawStructuredContent)); err != nil {
			return err
		}
	case res.StructuredContent != nil:
		if err := member(`,"structuredContent":`, res.StructuredContent); err != nil {
			return err
		}
	}
	buf.WriteByte('}')
	return nil
}
