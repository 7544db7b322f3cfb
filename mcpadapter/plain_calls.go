package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard/mcptransport"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
)

// The adapter's answer to a plain tools/call. mcp-go v1.2.1 takes a posted body as raw
// bytes and reads it five times (handlePost's envelope, the request's era,
// HandleMessage's base message, its protocol info and _meta, the typed request), starts
// a goroutine and two channels per request for notifications, and encodes the result
// through CallToolResult.MarshalJSON's map, which its Encoder then compacts again:
// about 9% of all the CPU of a call in bench/ (bench/profiles/tools-call-16.md).
//
// A plain call the adapter runs itself: one parse of the params, the same hooks and the
// same tool middlewares (WithRecovery's, the telemetry span) around the same handler,
// with the context values the handler reads, and it writes the bytes mcp-go writes
// (TestPlainCallAnswersAsMCPGo compares the two on the same requests). A call is plain
// when nothing in it needs mcp-go's machinery:
//   - a tools/call of a session-based protocol version, from a client that reads SSE
//     (the hub keeps the call's stream, callStream, so its log lines go there as
//     before), whose session is quiet (quietSession) and declared neither elicitation
//     nor sampling: nothing during the call can turn to mcp-go's server requests (the
//     confirmation form, a remote server's elicitation) or multi round-trip bridge;
//   - no task, no progress token, no input responses;
//   - one of the scope's hub tools (not a remote MCP server's, whose results pass
//     through as the remote gave them), as the scope's server lists it;
//   - a server whose hooks a plain call runs as mcp-go would (plainServerOf reads them
//     through mcp-go's public GetHooks: a request-initialization or error hook turns
//     the path off). The server's other options are the ones newScope gives it, and
//     extensions' ServerOptions (Extension.ServerOptions) may not change how a tools/call
//     runs; TestPlainCallAnswersAsMCPGo compares the two paths on the same requests, so
//     an mcp-go upgrade that changes its pipeline fails it.
//
// Everything else goes to mcp-go as before. A notification mcp-go queues on the
// session while a plain call runs (list_changed from a refresh) is delivered with the
// session's next answer, not on this call's stream: which of the two happens with
// mcp-go depends on the moment too.

// plainServer is what newScope found of its server for plain calls.
type plainServer struct {
	ok       bool
	versions []string // the transport's protocol versions, as mcp-go puts them in the context
	hooks    *server.Hooks
	answered *atomic.Uint64 // plain calls answered (tests read it)
}

// plainServerOf reads what a plain call needs of a scope's server through mcp-go's
// public API: its hooks, which the plain path runs as mcp-go does, and its transport's
// protocol versions. A request-initialization or error hook turns the path off (the
// plain path does not run them).
func plainServerOf(srv *server.MCPServer, h *server.StreamableHTTPServer) plainServer {
	p := plainServer{hooks: srv.GetHooks(), versions: server.FilterSupportedVersions(h), answered: new(atomic.Uint64)}
	p.ok = p.hooks == nil || len(p.hooks.OnRequestInitialization)+len(p.hooks.OnError) == 0
	return p
}

// plainTools are the listed tools whose calls may be plain: hub tools, not a remote
// MCP server's, that take a call without a task; a management tool listed under the
// same name (listed after, so mcp-go runs it) is not one.
func plainTools(st *scopeState, mgmt []server.ServerTool) map[string]bool {
	plain := make(map[string]bool, len(st.order))
	for _, name := range st.order {
		t := st.hub[name]
		def := t.tool()
		if p := t.binding.Tool.Provider; p != nil && (p.Name == remotemcp.Provider || p.Connectionless) {
			continue // a remote server's call and a connectionless tool's may ask the client (elicitation) as they run
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
	id      any // the JSON-RPC id as mcp-go decodes it
	req     mcp.CallToolRequest
	session server.ClientSession
	handler server.ToolHandlerFunc
}

// plainCallOf returns the session's request as a plain call, or false when it is not
// one (see the top of this file); nothing was done either way.
func (s *scope) plainCallOf(r *http.Request, session string, msg mcptransport.Message, body []byte) (*plainCall, bool) {
	if !s.plain.ok || r.Method != http.MethodPost || msg.Method != string(mcp.MethodToolsCall) ||
		msg.JSONRPC != mcp.JSONRPC_VERSION || len(msg.Result) > 0 || len(msg.Error) > 0 {
		return nil, false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, false
	}
	if v := r.Header.Get(mcp.HeaderProtocolVersion); v != "" && !mcp.IsValidProtocolVersion(v) {
		return nil, false
	}
	c := &plainCall{}
	if json.Unmarshal(msg.ID, &c.id) != nil || c.id == nil {
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
	if !readCallRequest(msg, body, &c.req) {
		return nil, false
	}
	p := c.req.Params
	if p.Task != nil || (p.Meta != nil && p.Meta.ProgressToken != nil) || len(p.InputResponses) > 0 || p.RequestState != "" ||
		mcp.IsModernProtocol(p.Meta.ProtocolVersion()) {
		return nil, false
	}
	st := s.state.Load()
	if st == nil || !st.plain[p.Name] {
		return nil, false
	}
	c.handler = st.handler
	c.req.Header = r.Header
	return c, true
}

// readCallRequest reads the body as mcp-go reads a tools/call (json.Unmarshal into
// mcp.CallToolRequest), so the handler sees the request mcp-go would give it. Of the
// body, that reading takes only the method and the params (CallToolParams decodes
// itself): when the envelope's decoding read both members as spelt, each appears once
// (a member named twice is decoded twice by encoding/json, and a second params may not
// replace all of the first's fields) and no escape could spell one otherwise, the
// params the envelope already holds are decoded alone, without a pass over the whole
// body. Any other body is read in full.
func readCallRequest(msg mcptransport.Message, body []byte, req *mcp.CallToolRequest) bool {
	if !msg.Exact || bytes.IndexByte(body, '\\') >= 0 ||
		bytes.Count(body, []byte(`"params"`)) > 1 || bytes.Count(body, []byte(`"method"`)) != 1 {
		return json.Unmarshal(body, req) == nil
	}
	req.Method = msg.Method
	if len(msg.RawParams) == 0 {
		return true
	}
	return req.Params.UnmarshalJSON(msg.RawParams) == nil
}

// answerPlain runs a plain call as mcp-go's handlePost and HandleMessage would, and
// writes its answer to w as they would.
func (s *scope) answerPlain(w http.ResponseWriter, r *http.Request, c *plainCall) {
	s.plain.answered.Add(1)
	ctx := s.mcp.WithContext(r.Context(), c.session)
	ctx = server.WithSupportedProtocolVersions(ctx, s.plain.versions)
	ctx = server.WithRequestProtocolInfo(ctx, &server.RequestProtocolInfo{ProtocolVersion: c.req.Params.Meta.ProtocolVersion()})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hooks := s.plain.hooks
	req := &c.req
	if hooks != nil {
		for _, h := range hooks.OnBeforeAny {
			h(ctx, c.id, mcp.MethodToolsCall, req)
		}
		for _, h := range hooks.OnBeforeCallTool {
			h(ctx, c.id, req)
		}
	}
	res, err := s.plainMiddlewares(c.handler)(ctx, *req)
	var rpcErr *mcp.JSONRPCError
	switch {
	case err != nil:
		rpcErr = handlerRPCError(c.id, err)
	case res == nil:
		e := mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(c.id),
			Error: mcp.NewJSONRPCErrorDetails(mcp.INTERNAL_ERROR, fmt.Sprintf("tool '%s' handler returned no result", req.Params.Name), nil)}
		rpcErr = &e
	default:
		if hooks != nil {
			for _, h := range hooks.OnSuccess {
				h(ctx, c.id, mcp.MethodToolsCall, req, res)
			}
			for _, h := range hooks.OnAfterCallTool {
				h(ctx, c.id, req, res)
			}
		}
	}
	if r.Context().Err() != nil {
		return // mcp-go writes nothing once the request's context ended
	}
	buf := answerBuffers.Get().(*bytes.Buffer)
	defer answerBuffers.Put(buf)
	buf.Reset()
	if rpcErr != nil {
		err = json.NewEncoder(buf).Encode(rpcErr)
	} else {
		err = appendResponse(buf, c.id, res)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if err != nil {
		s.adapter.opts.Logger.Error("Failed to write response", "err", err) // as mcp-go logs it, with nothing written
		return
	}
	_, _ = w.Write(buf.Bytes())
}

// plainMiddlewares wraps a hub tool's handler in the middlewares newScope gave the
// server, in mcp-go's order (the first added outermost): WithRecovery's, then the
// telemetry span's.
func (s *scope) plainMiddlewares(h server.ToolHandlerFunc) server.ToolHandlerFunc {
	if s.adapter.opts.Telemetry != nil {
		h = s.adapter.toolSpan(h)
	}
	return func(ctx context.Context, req mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("panic recovered in %s tool handler: %v", req.Params.Name, v) // WithRecovery's words
			}
		}()
		return h(ctx, req)
	}
}

// handlerRPCError is mcp-go's answer to a handler's error in a session-based version
// (handlerError): a URL elicitation the handler requires, with its code and data, or
// an internal error with the error's text.
func handlerRPCError(id any, err error) *mcp.JSONRPCError {
	code, data := mcp.INTERNAL_ERROR, any(nil)
	var required mcp.URLElicitationRequiredError
	var pointer *mcp.URLElicitationRequiredError
	switch {
	case errors.As(err, &required):
		d := required.JSONRPCError().Error
		code, data = d.Code, d.Data
	case errors.As(err, &pointer) && pointer != nil:
		d := pointer.JSONRPCError().Error
		code, data = d.Code, d.Data
	}
	return &mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Error: mcp.NewJSONRPCErrorDetails(code, err.Error(), data)}
}

var answerBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// appendResponse writes the JSON-RPC answer mcp-go's json.NewEncoder(w).Encode writes
// for a tools/call result, without the map and the second compaction: the members
// CallToolResult.MarshalJSON puts in its map, in the order json sorts a map's keys,
// each encoded by json.Marshal as it encodes the map's values (compact, HTML-escaped).
// A result with members of the stateless version goes through MarshalJSON itself.
func appendResponse(buf *bytes.Buffer, id any, res *mcp.CallToolResult) error {
	idJSON, err := json.Marshal(mcp.NewRequestId(id))
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
