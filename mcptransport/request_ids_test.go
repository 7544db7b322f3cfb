package mcptransport

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// TestRequestIDsRenumberBothWays: a request the server sends leaves with its id moved
// by the scope's offset, the client's answer to it comes back with the server's own
// id, and an answer to another scope's (another node's) request is not taken for one.
func TestRequestIDsRenumberBothWays(t *testing.T) {
	ids, other := RequestIDs{offset: 1 << 45}, RequestIDs{offset: 1 << 46}
	req := json.RawMessage(`{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"<b>go?</b>"}}`)
	out := ids.Outgoing(req)
	var sent struct {
		ID     int64  `json:"id"`
		Method string `json:"method"`
		Params struct {
			Message string `json:"message"`
		} `json:"params"`
	}
	if err := json.Unmarshal(out, &sent); err != nil || sent.ID != 7+1<<45 || sent.Method != "elicitation/create" || sent.Params.Message != "<b>go?</b>" {
		t.Fatalf("outgoing %s = %s (%v)", req, out, err)
	}
	answer := []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(sent.ID, 10) + `,"result":{"action":"accept"}}`)
	back, ok := ids.Incoming(answer)
	if !ok || !strings.Contains(string(back), `"id":7`) || !strings.Contains(string(back), `"action":"accept"`) {
		t.Errorf("incoming %s = %s, %v; want id 7", answer, back, ok)
	}
	if got, ok := other.Incoming(answer); ok || string(got) != string(answer) {
		t.Errorf("another scope took the answer: %s, %v", got, ok)
	}
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"\"method\""}]}}`,
		`{"jsonrpc":"2.0","id":"switchboard-req_1","method":"sampling/createMessage","params":{}}`,
	} {
		if got := ids.Outgoing(json.RawMessage(msg)); string(got) != msg {
			t.Errorf("outgoing changed %s into %s", msg, got)
		}
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{}}`, // below the offset: no request of this scope
		`{"jsonrpc":"2.0","id":` + strconv.FormatInt(sent.ID, 10) + `,"method":"ping"}`,
	} {
		if got, ok := ids.Incoming([]byte(body)); ok || string(got) != body {
			t.Errorf("incoming took %s as an answer: %s", body, got)
		}
	}
}

// TestOutgoingIDsRenumberMCPGoStreams: what mcp-go writes itself as an SSE stream (a GET
// stream, its replay) reaches the client with its server requests renumbered, even when
// an event arrives in pieces; notifications and a JSON answer pass as written.
func TestOutgoingIDsRenumberMCPGoStreams(t *testing.T) {
	ids := RequestIDs{offset: 1000}
	rec := httptest.NewRecorder()
	w := &outgoingIDs{ResponseWriter: rec, ids: ids}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, part := range []string{
		"id: 4\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n",
		"id: 5\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"sampling/create",
		"Message\",\"params\":{}}\n\n",
	} {
		if _, err := w.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	want := "id: 4\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n" +
		"id: 5\nevent: message\ndata: {\"id\":1002,\"jsonrpc\":\"2.0\",\"method\":\"sampling/createMessage\",\"params\":{}}\n\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("stream:\n%q\nwant\n%q", got, want)
	}
	plain := httptest.NewRecorder()
	jw := &outgoingIDs{ResponseWriter: plain, ids: ids}
	jw.Header().Set("Content-Type", "application/json")
	body := `{"jsonrpc":"2.0","id":2,"method":"x"}` + "\n"
	_, _ = jw.Write([]byte(body))
	if plain.Body.String() != body {
		t.Errorf("a JSON answer became %q", plain.Body.String())
	}
}
