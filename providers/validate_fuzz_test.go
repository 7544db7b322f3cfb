package providers_test

import (
	"encoding/json"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
)

// FuzzValidateArguments: a tool's arguments validation never panics on any input, and
// refuses with an invalid error that says why.
func FuzzValidateArguments(f *testing.F) {
	reg := providers.NewRegistry()
	if err := all.Register(reg); err != nil {
		f.Fatal(err)
	}
	names := []string{"github_create_issue", "slack_post_message", "github_search_issues"}
	var tools []*providers.Tool
	for _, n := range names {
		if t, ok := reg.Tool(n); ok {
			tools = append(tools, t)
		}
	}
	if len(tools) == 0 {
		f.Fatal("none of the fuzzed tools is registered")
	}
	for _, s := range []string{`{"owner":"o","repo":"r","title":"t"}`, `{"channel":"C1","text":"hi"}`, `{"q":"is:open","limit":5}`, `{"owner":1}`, `[]`, `"x"`, `{"title":"` + "\u0000" + `"}`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		for _, tool := range tools {
			err := tool.Validate(json.RawMessage(args))
			if err == nil {
				continue
			}
			e := switchboard.AsError(err)
			if e.Code != switchboard.CodeInvalid || e.Message == "" {
				t.Fatalf("%s: Validate(%q) = %v, want an invalid error with a reason", tool.Name, args, err)
			}
		}
	})
}
