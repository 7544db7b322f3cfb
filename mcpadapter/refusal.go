package mcpadapter

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/mcptransport"
)

// refusalPeek bounds what the door reads of a request it refuses. A tools/call is a
// few hundred bytes, so reading that much to learn its JSON-RPC id costs about what its
// headers did; a larger body is not read at all, and is refused at the HTTP level.
const refusalPeek = 8 << 10

// refuse answers a POST that admission refused at the door, in MCP's own shape with
// the Retry-After header: a tools/call gets what MCP clients act on, a tool result
// with isError set saying nothing was run and when to retry, under its own id; any
// other JSON-RPC request a JSON-RPC error under its id, and anything else (a
// notification, a body over refusalPeek or not one JSON-RPC request) a JSON-RPC error
// with a null id; each with the refusal's status (429 or 503).
func (a *Adapter) refuse(w http.ResponseWriter, r *http.Request, e *switchboard.Error) {
	if e.RetryAfter <= 0 {
		writeError(w, e)
		return
	}
	id, method, ok := peekRequest(r)
	if ok && method == string(mcp.MethodToolsCall) {
		writeToolRefusal(w, id, e)
		return
	}
	if !ok {
		id = nil
	}
	writeRPCRefusal(w, id, e)
}

// peekToolCall reads at most refusalPeek bytes of r's body and returns the id of the
// tools/call request it holds.
func peekToolCall(r *http.Request) (json.RawMessage, bool) {
	id, method, ok := peekRequest(r)
	return id, ok && method == string(mcp.MethodToolsCall)
}

// peekRequest reads at most refusalPeek bytes of r's body and returns the id and
// method of the one JSON-RPC request it holds (not a notification, a batch or an
// answer).
func peekRequest(r *http.Request) (json.RawMessage, string, bool) {
	if r.Body == nil || r.ContentLength > refusalPeek {
		return nil, "", false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, refusalPeek+1))
	if err != nil || len(body) > refusalPeek {
		return nil, "", false
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
	}
	if json.Unmarshal(body, &m) != nil || m.JSONRPC != mcp.JSONRPC_VERSION || m.Method == "" || !mcptransport.ValidID(m.ID) {
		return nil, "", false
	}
	return m.ID, m.Method, true
}

// writeToolRefusal answers the tools/call id with e as a tool error, 200 (an MCP
// client reads no JSON-RPC answer from another status) and Retry-After.
func writeToolRefusal(w http.ResponseWriter, id json.RawMessage, e *switchboard.Error) {
	body, err := json.Marshal(struct {
		JSONRPC string              `json:"jsonrpc"`
		ID      json.RawMessage     `json:"id"`
		Result  *mcp.CallToolResult `json:"result"`
	}{mcp.JSONRPC_VERSION, id, mcp.NewToolResultError(e.Message)})
	if err != nil {
		writeError(w, e)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", strconv.Itoa(int((e.RetryAfter+time.Second-1)/time.Second)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
