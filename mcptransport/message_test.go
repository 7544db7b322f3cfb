package mcptransport

import (
	"reflect"
	"strings"
	"testing"
)

// TestReadMessageReadsAsParseMessage: the adapter's reading of a body from the
// envelope's single decoding says what a full parse of the body says, for well-formed
// messages, members spelt in another case, type errors and bodies that are no object.
func TestReadMessageReadsAsParseMessage(t *testing.T) {
	bodies := []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"github_get_issue","arguments":{"owner":"o"},"_meta":{"progressToken":"p"}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":3,"result":{"action":"accept"}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping","params":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":"not an object"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1,2]}`,
		`{"jsonrpc":2,"id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":5}`,
		`{"jsonrpc":"2.0","ID":9,"Method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"METHOD":"initialize","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","other":{"x":[1,2,3]}}`,
		`{"jsonrpc":"2.0","id":1,"meth` + "\u017f" + `od":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`"a string"`, `42`, `null`, ``, `   `, `{`, `{"id":1}x`,
	}
	for _, body := range bodies {
		want, wantErr := ParseMessage([]byte(body))
		got, gotErr := ReadMessage(DecodeEnvelope([]byte(body)), []byte(body))
		if (gotErr != nil) != (wantErr != nil) {
			t.Errorf("%s: error %v, a full parse's error %v", body, gotErr, wantErr)
			continue
		}
		if gotErr != nil {
			continue // serveSession reads a body that fails as no message
		}
		// exact says more than a full parse can: that the members were read as spelt,
		// which a body with a member spelt in another case is not.
		folded := strings.Contains(body, `"ID"`) || strings.Contains(body, `"METHOD"`) || strings.Contains(body, "\u017f")
		if got.Exact == folded {
			t.Errorf("%s: read as spelt: %v", body, got.Exact)
		}
		got.Exact = false
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n read   %+v\n parsed %+v", body, got, want)
		}
	}
}
