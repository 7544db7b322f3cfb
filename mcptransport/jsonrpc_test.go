package mcptransport

import (
	"encoding/json"
	"testing"
)

// FuzzUnquote: unquote, the envelope's short way to read a string member, gives what
// json.Unmarshal gives for any value: the same string, and an error exactly when it
// errs.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"2.0"`, `"tools/call"`, `""`, `"a\"b"`, `"\u0032.0"`, `"tab	in"`, `"é"`, "\"\xff\"", `"<&>"`,
		`"\\"`, `null`, `2`, `"unterminated`, `"a" `, ` "a"`, `"`, ``, `["a"]`, `"a""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want, got string
		wantErr := json.Unmarshal(raw, &want)
		gotErr := unquote(raw, &got)
		if (wantErr == nil) != (gotErr == nil) || got != want {
			t.Fatalf("%q: unquote gave %q, %v; json.Unmarshal %q, %v", raw, got, gotErr, want, wantErr)
		}
	})
}
