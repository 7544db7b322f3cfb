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
)

// The tools/list cache. mcp-go answers tools/list by re-marshalling every tool through
// a map and compacting each schema about three times: 12–14 ms for 300 tools. A
// scope's list changes only when refresh sets new tools, so the scope keeps the
// encoded result (as mcp-go itself produced it) with the tools' version, and answers a
// plain tools/list of a session-based protocol version from those bytes.
//
// The cached answer must be exactly mcp-go's, so anything that would make mcp-go's
// answer differ goes to mcp-go instead: a cursor or other params, a JSON-RPC envelope
// mcp-go would refuse, an unsupported protocol version header, hooks that see list
// requests (other than the adapter's tracing, whose span naming the cache does itself),
// a session with its own tools, a session whose answers mcp-go streams as SSE (after a
// notification reached it) or with notifications waiting to be delivered with the next
// answer.

// listEntry is a scope's encoded tools/list result at one version of its tools.
type listEntry struct {
	version uint64
	result  []byte
}

// toolsList is the scope's cache state; the zero value is empty.
type toolsList struct {
	version atomic.Uint64 // bumped after each SetTools
	entry   atomic.Pointer[listEntry]
	build   sync.Mutex // one build at a time per scope

}

// toolsChanged invalidates the cached list; refresh calls it after SetTools.
func (l *toolsList) toolsChanged() { l.version.Add(1) }

// cachedResult returns the encoded tools/list result of the scope's current tools,
// encoding it through mcp-go when the tools changed since the last encoding.
func (s *scope) cachedResult(ctx context.Context) ([]byte, bool) {
	l := &s.list
	v := l.version.Load()
	if e := l.entry.Load(); e != nil && e.version == v {
		return e.result, true
	}
	l.build.Lock()
	defer l.build.Unlock()
	v = l.version.Load()
	if e := l.entry.Load(); e != nil && e.version == v {
		return e.result, true
	}
	resp, ok := s.mcp.HandleMessage(ctx, listRequest).(mcp.JSONRPCResponse)
	if !ok {
		return nil, false
	}
	result, err := json.Marshal(resp.Result)
	if err != nil {
		return nil, false
	}
	// Tools set after v was read have bumped the version: the entry is then stale at
	// once and the next request encodes again.
	l.entry.Store(&listEntry{version: v, result: result})
	return result, true
}

var listRequest = json.RawMessage(`{"jsonrpc":"2.0","id":0,"method":"tools/list"}`)

// listCacheable reports whether the scope's server has no hooks that a tools/list
// request would run, besides the ownBeforeAny BeforeAny hooks of the adapter's tracing,
// whose work serveCachedList does itself: with another, the request goes to mcp-go so
// the hook sees it.
func listCacheable(srv *server.MCPServer, ownBeforeAny int) bool {
	h := srv.GetHooks()
	return h == nil || (len(h.OnBeforeAny) == ownBeforeAny && len(h.OnSuccess)+len(h.OnError)+len(h.OnRequestInitialization)+
		len(h.OnBeforeListTools)+len(h.OnAfterListTools) == 0)
}

// serveCachedList answers a tools/list from the scope's cache and reports whether it
// did; when it did not, nothing was written and the request goes to mcp-go. The
// session was validated and taken in use by serveSession.
func (s *scope) serveCachedList(w http.ResponseWriter, r *http.Request, id string, msg mcptransport.Message) bool {
	if r.Method != http.MethodPost || msg.Method != string(mcp.MethodToolsList) || msg.JSONRPC != mcp.JSONRPC_VERSION ||
		len(msg.Result) > 0 || len(msg.Error) > 0 || !plainListParams(msg.RawParams) {
		return false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return false
	}
	if v := r.Header.Get(mcp.HeaderProtocolVersion); v != "" && !mcp.IsValidProtocolVersion(v) {
		return false
	}
	var reqID any
	if json.Unmarshal(msg.ID, &reqID) != nil || reqID == nil {
		return false
	}
	if !s.listCacheable || !s.ep.Quiet(id) {
		return false
	}
	result, ok := s.cachedResult(r.Context())
	if !ok {
		return false
	}
	idJSON, err := json.Marshal(reqID)
	if err != nil {
		return false
	}
	if s.adapter.ownBeforeAny() > 0 {
		nameSpan(r.Context(), reqID, mcp.MethodToolsList) // as the tracing hook would have
	}
	// mcp-go writes json.NewEncoder(w).Encode(JSONRPCResponse{...}): these bytes, the
	// result written as it is kept rather than copied into one buffer.
	head := make([]byte, 0, len(idJSON)+32)
	head = append(head, `{"jsonrpc":"2.0","id":`...)
	head = append(head, idJSON...)
	head = append(head, `,"result":`...)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	for _, part := range [][]byte{head, result, []byte("}\n")} {
		if _, err := w.Write(part); err != nil {
			break // the client went away
		}
	}
	return true
}

// plainListParams reports whether tools/list params ask for the whole first page and
// nothing else: absent, null, {} or an empty cursor.
func plainListParams(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || mcptransport.EmptyObject(raw) {
		return true
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(raw, &p) != nil {
		return false
	}
	for k, v := range p {
		if k != "cursor" || (string(v) != `""` && string(v) != "null") {
			return false
		}
	}
	return true
}
