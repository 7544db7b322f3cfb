package mcptransport

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestReadIncoming: a POST's message is read and its body left readable for the
// handlers; the era comes from the protocol header or the message's _meta; a body the
// server cannot read is answered with a parse error and goes no further.
func TestReadIncoming(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp/acme", strings.NewReader(body))
	w := httptest.NewRecorder()
	in, ok := ReadIncoming(w, r, 1<<20)
	if !ok || in.Msg.Method != "tools/list" || string(in.Body) != body || in.Modern {
		t.Fatalf("ReadIncoming = %+v, %t; want tools/list, the body, not the stateless era", in, ok)
	}
	if again, _ := io.ReadAll(r.Body); string(again) != body {
		t.Errorf("the body left for the handlers = %q", again)
	}

	modern := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	r = httptest.NewRequest(http.MethodPost, "/mcp/acme", strings.NewReader(modern))
	r.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	if in, ok := ReadIncoming(httptest.NewRecorder(), r, 1<<20); !ok || !in.Modern {
		t.Errorf("a 2026-07-28 request: %+v, %t; want the stateless era", in, ok)
	}

	r = httptest.NewRequest(http.MethodPost, "/mcp/acme", io.NopCloser(failingReader{}))
	w = httptest.NewRecorder()
	if _, ok := ReadIncoming(w, r, 10); ok || w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), "over 10 bytes") {
		t.Errorf("an unreadable body: ok %t, %d %s; want 413 saying the bound", ok, w.Code, w.Body.String())
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("too large") }
