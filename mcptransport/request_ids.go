package mcptransport

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// mcp-go numbers the server-to-client requests of a StreamableHTTPServer (elicitations,
// sampling, pings) from 1, and every node builds its own server for a scope, so two
// nodes holding one session would ask its client two questions under one id, and an
// answer relayed between nodes (serveSession) would settle both: one confirmation
// accepted by the answer to another. So the hub renumbers them at its edge: each
// scope's server gets a random offset, added to the id of every request it sends
// (outgoing) and taken off the id of an answer before the server sees it (incoming).
// From random offsets in 2^52, two nodes' requests of a session share an id with
// negligible probability, and every id stays an exact integer in a JavaScript client
// (2^53).
//
// Every message of mcp-go reaches the client through the hub: a call's stream is
// written by the hub (CallStream, from the event store, which renumbers what it
// records with Outgoing), and what mcp-go writes itself (a GET stream, its resumption, a POST it
// answers as a stream) passes through outgoingIDs.

const (
	// requestIDSpace bounds the offsets.
	requestIDSpace = 1 << 52
	// requestIDRange is how many requests a scope's server may send before its ids
	// leave the range an answer is recognised in.
	requestIDRange = 1 << 40
)

// RequestIDs is the offset of one scope's server's request ids.
type RequestIDs struct{ offset int64 }

func NewRequestIDs() RequestIDs {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on the platforms the hub runs on
	}
	return RequestIDs{offset: int64(binary.LittleEndian.Uint64(b[:]) % (requestIDSpace - requestIDRange))}
}

// rpcHead is what the renumbering reads of a message.
type rpcHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// Outgoing returns msg with the offset added to its id when it is a request the server
// sends with an integer id; any other message is returned as it is.
func (r RequestIDs) Outgoing(msg json.RawMessage) json.RawMessage {
	if !bytes.Contains(msg, []byte(`"method"`)) || !bytes.Contains(msg, []byte(`"id"`)) {
		return msg // a notification's method without an id, or a result
	}
	var head rpcHead
	if json.Unmarshal(msg, &head) != nil || head.Method == "" || len(head.ID) == 0 {
		return msg
	}
	n, err := strconv.ParseInt(string(head.ID), 10, 64)
	if err != nil || n < 0 || n >= requestIDRange {
		return msg
	}
	return withID(msg, n+r.offset)
}

// Incoming returns an answer's body with the offset taken off its id, and whether the
// id is one this server's requests carry; any other body is returned as it is.
func (r RequestIDs) Incoming(body []byte) ([]byte, bool) {
	var head struct {
		rpcHead
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &head) != nil || len(head.ID) == 0 || head.Method != "" || len(head.Result)+len(head.Error) == 0 {
		return body, false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(head.ID)), 10, 64)
	if err != nil || n <= r.offset || n-r.offset >= requestIDRange {
		return body, false
	}
	return withID(body, n-r.offset), true
}

// withID returns the JSON-RPC message with its id replaced.
func withID(msg []byte, id int64) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return msg
	}
	m["id"] = json.RawMessage(strconv.FormatInt(id, 10))
	out, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	return out
}

// Writer returns w for mcp-go to answer through when it writes to the client itself
// (see outgoingIDs).
func (r RequestIDs) Writer(w http.ResponseWriter) http.ResponseWriter {
	return &outgoingIDs{ResponseWriter: w, ids: r}
}

// outgoingIDs is the writer mcp-go answers through when it writes to the client itself:
// the events of an SSE answer are passed on whole, each server request renumbered; any
// other answer passes through as it is.
type outgoingIDs struct {
	http.ResponseWriter
	ids     RequestIDs
	checked bool
	sse     bool
	pending []byte // the start of an event not yet ended
}

func (w *outgoingIDs) Write(p []byte) (int, error) {
	if !w.checked {
		w.checked = true
		w.sse = strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream")
	}
	if !w.sse {
		return w.ResponseWriter.Write(p)
	}
	w.pending = append(w.pending, p...)
	for {
		end := bytes.Index(w.pending, []byte("\n\n"))
		if end < 0 {
			return len(p), nil
		}
		event := w.renumber(w.pending[:end+2])
		rest := w.pending[end+2:]
		if _, err := w.ResponseWriter.Write(event); err != nil {
			w.pending = nil
			return 0, err
		}
		w.pending = append(w.pending[:0], rest...)
	}
}

// renumber returns an SSE event with the server request in its data line renumbered.
func (w *outgoingIDs) renumber(event []byte) []byte {
	lines := bytes.Split(event, []byte("\n"))
	changed := false
	for i, line := range lines {
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok || len(data) == 0 {
			continue
		}
		if out := w.ids.Outgoing(data); !bytes.Equal(out, data) {
			lines[i] = append([]byte("data: "), out...)
			changed = true
		}
	}
	if !changed {
		return event
	}
	return bytes.Join(lines, []byte("\n"))
}

func (w *outgoingIDs) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *outgoingIDs) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// IsNotification reports whether msg is a JSON-RPC notification (a method, no id).
func IsNotification(msg json.RawMessage) bool {
	if !bytes.Contains(msg, []byte(`"method"`)) {
		return false
	}
	var head rpcHead
	return json.Unmarshal(msg, &head) == nil && head.Method != "" && len(head.ID) == 0
}
