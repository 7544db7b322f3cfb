package mcptransport

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
)

// EnvelopeFault is a posted body the hub refuses before it reaches mcp-go: not one
// JSON-RPC 2.0 message, or an initialize without the params the specification
// requires. mcp-go reads such bodies leniently (a batch or a method that is not a
// string is a parse error, an id of null makes a notification that is dropped, an
// initialize without params succeeds), so the hub checks them itself.
type EnvelopeFault struct {
	id           json.RawMessage // the request's id when it is a valid one, else null
	code         int
	message      string
	notification bool // a notification is refused with a status and no JSON-RPC body
}

// write answers the fault: a JSON-RPC error with 400, or for a notification only the
// status (a notification never gets a JSON-RPC response).
func (f *EnvelopeFault) Write(w http.ResponseWriter) {
	if f.notification {
		http.Error(w, f.message, http.StatusBadRequest)
		return
	}
	WriteRPCError(w, http.StatusBadRequest, f.id, f.code, f.message)
}

// Envelope is a posted body decoded once: its top-level members (case-sensitive, as
// CheckEnvelope reads them), or why it is not one JSON object.
type Envelope struct {
	trimmed []byte
	fields  map[string]json.RawMessage
	err     error
}

// DecodeEnvelope decodes a posted body once; CheckEnvelope and ReadMessage both read
// the result, so the body is not parsed again for each.
func DecodeEnvelope(body []byte) Envelope {
	e := Envelope{trimmed: bytes.TrimSpace(body)}
	// One pass: Unmarshal checks the whole body is valid JSON before it decodes, and
	// says so with a SyntaxError.
	e.err = json.Unmarshal(e.trimmed, &e.fields)
	return e
}

// CheckEnvelope returns the fault of a posted body, or nil when it is one JSON-RPC 2.0
// message: a request (string or number id, string method), a notification (a method,
// no id) or an answer (an id with a result or an error). A legacy-era initialize must
// also carry params with protocolVersion, capabilities and clientInfo.
func CheckEnvelope(env Envelope, modern bool) *EnvelopeFault {
	trimmed, fields := env.trimmed, env.fields
	if err := env.err; err != nil || fields == nil {
		var syntax *json.SyntaxError
		if len(trimmed) == 0 || errors.As(err, &syntax) {
			return &EnvelopeFault{code: mcp.PARSE_ERROR, message: "the body is not valid JSON"}
		}
		if trimmed[0] == '[' {
			return &EnvelopeFault{code: mcp.INVALID_REQUEST,
				message: "JSON-RPC batches are not supported: send each message in its own request"}
		}
		return &EnvelopeFault{code: mcp.INVALID_REQUEST, message: "the body must be one JSON-RPC message (a JSON object)"}
	}
	f := &EnvelopeFault{code: mcp.INVALID_REQUEST}
	rawID, hasID := fields["id"]
	if hasID {
		if !ValidID(rawID) {
			f.message = "id must be a string or a number"
			return f
		}
		f.id = rawID
	}
	rawMethod, hasMethod := fields["method"]
	var method string
	if hasMethod && unquote(rawMethod, &method) != nil {
		f.message = "method must be a string"
		f.notification = !hasID
		return f
	}
	f.notification = hasMethod && !hasID
	var version string
	if unquote(fields["jsonrpc"], &version) != nil || version != mcp.JSONRPC_VERSION {
		f.message = `jsonrpc must be "2.0"`
		return f
	}
	if !hasMethod {
		_, hasResult := fields["result"]
		_, hasError := fields["error"]
		if !hasID || hasResult == hasError {
			f.message = "a message needs a method, or an id with either a result or an error"
			return f
		}
		return nil
	}
	if method == string(mcp.MethodInitialize) && hasID && !modern {
		return checkInitializeParams(fields["params"], rawID)
	}
	return nil
}

// unquote decodes a JSON value into s as json.Unmarshal does, without its reflection
// for what JSON-RPC's members nearly always are: a string of printable ASCII without
// escapes, whose bytes are its value. Anything else goes to json.Unmarshal.
func unquote(raw json.RawMessage, s *string) error {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		inner := raw[1 : n-1]
		plain := true
		for _, c := range inner {
			if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				plain = false
				break
			}
		}
		if plain {
			*s = string(inner)
			return nil
		}
	}
	return json.Unmarshal(raw, s)
}

// EmptyObject reports whether raw is the JSON object {}, give or take white space.
func EmptyObject(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "{}"
}

// ValidID reports whether a JSON-RPC id is a string or a number (MCP forbids null).
func ValidID(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}

// checkInitializeParams returns the fault of an initialize's params: the
// specification requires an object with protocolVersion (a string), capabilities and
// clientInfo (objects).
func checkInitializeParams(raw, id json.RawMessage) *EnvelopeFault {
	fault := func(msg string) *EnvelopeFault {
		return &EnvelopeFault{id: id, code: mcp.INVALID_PARAMS, message: msg}
	}
	var params map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &params) != nil || params == nil {
		return fault("initialize needs params: an object with protocolVersion, capabilities and clientInfo")
	}
	var version string
	if json.Unmarshal(params["protocolVersion"], &version) != nil || version == "" {
		return fault("params.protocolVersion must be a protocol version string, such as 2025-06-18")
	}
	for _, name := range []string{"capabilities", "clientInfo"} {
		var obj map[string]json.RawMessage
		if json.Unmarshal(params[name], &obj) != nil || obj == nil {
			return fault("params." + name + " must be an object")
		}
	}
	return nil
}
