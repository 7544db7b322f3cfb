package mcptransport

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Message is what the adapter reads of a posted JSON-RPC message: the envelope
// as mcp-go reads it (so the two agree on what is a message), and what it can of the
// params (see ParseMessage).
type Message struct {
	JSONRPC   string          `json:"jsonrpc"`
	ID        json.RawMessage `json:"id"`
	Method    string          `json:"method"`
	Result    json.RawMessage `json:"result"`
	Error     json.RawMessage `json:"error"`
	RawParams json.RawMessage `json:"params"`
	Params    MessageParams   `json:"-"`
	// Exact is set when the members were read from the envelope as spelt (ReadMessage),
	// not by a case-insensitive parse of the body.
	Exact bool
}

type MessageParams struct {
	Meta            *mcp.Meta       `json:"_meta"`
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ClientInfo      json.RawMessage `json:"clientInfo"`
}

// ParseMessage reads a posted body. It fails only where mcp-go's own reading fails (the
// envelope); params of the wrong shape are left empty for mcp-go to refuse, so a
// malformed initialize still goes through the adapter's initialize.
func ParseMessage(body []byte) (Message, error) {
	var m Message
	if err := json.Unmarshal(body, &m); err != nil {
		return m, err
	}
	if json.Unmarshal(m.RawParams, &m.Params) != nil {
		m.Params = MessageParams{}
	}
	return m, nil
}

// shapeMembers are the members Message reads, as they are spelt in the body.
var shapeMembers = [...]string{"jsonrpc", "id", "method", "result", "error", "params"}

// ReadMessage is ParseMessage on a body CheckEnvelope's decoding already read, without
// parsing the body again. encoding/json matches struct fields case-insensitively
// (and with Unicode folding), where the envelope's members are exact: a body with a
// member spelt otherwise ("ID", non-ASCII) is parsed as mcp-go reads it, by
// ParseMessage, so the two never disagree on what a message says.
func ReadMessage(env Envelope, body []byte) (Message, error) {
	var m Message
	if env.err != nil {
		return m, env.err
	}
	for name := range env.fields {
		if !slices.Contains(shapeMembers[:], name) && foldsToMember(name) {
			return ParseMessage(body)
		}
	}
	if raw, ok := env.fields["jsonrpc"]; ok {
		if err := unquote(raw, &m.JSONRPC); err != nil {
			return Message{}, err
		}
	}
	if raw, ok := env.fields["method"]; ok {
		if err := unquote(raw, &m.Method); err != nil {
			return Message{}, err
		}
	}
	m.ID, m.Result, m.Error, m.RawParams = env.fields["id"], env.fields["result"], env.fields["error"], env.fields["params"]
	if len(m.RawParams) > 0 && !EmptyObject(m.RawParams) && json.Unmarshal(m.RawParams, &m.Params) != nil {
		m.Params = MessageParams{}
	}
	m.Exact = true
	return m, nil
}

// foldsToMember reports whether encoding/json could match a member name to one of
// Message's fields though it is not spelt as the field is: it differs in case
// only, or has a non-ASCII letter that Unicode folding could map onto ASCII.
func foldsToMember(name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			return true
		}
	}
	for _, member := range shapeMembers {
		if strings.EqualFold(name, member) {
			return true
		}
	}
	return false
}

// isNotification reports whether the message is a notification (a method, no id).
func (m Message) IsNotification() bool { return m.Method != "" && len(m.ID) == 0 }

// refuse answers a message the session rules refuse: with a JSON-RPC error, or for a
// notification with the status and a text only (a notification never gets a JSON-RPC
// response).
func (m Message) Refuse(w http.ResponseWriter, status, code int, message string) {
	if m.IsNotification() {
		http.Error(w, message, status)
		return
	}
	WriteRPCError(w, status, m.ID, code, message)
}

// isAnswer reports whether the message answers a server-to-client request.
func (m Message) IsAnswer() bool {
	return m.Method == "" && len(m.ID) > 0 && (len(m.Result) > 0 || len(m.Error) > 0)
}

// WriteRPCError answers with a JSON-RPC error and an HTTP status.
func WriteRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, message string) {
	WriteRPCErrorData(w, status, id, code, message, nil)
}

// WriteRPCErrorData answers with a JSON-RPC error carrying data (none when nil) and an
// HTTP status.
func WriteRPCErrorData(w http.ResponseWriter, status int, id json.RawMessage, code int, message string, data any) {
	if len(bytes.TrimSpace(id)) == 0 {
		id = json.RawMessage("null")
	}
	e := map[string]any{"code": code, "message": message}
	if data != nil {
		e["data"] = data
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": id, "error": e})
}
