package router

import (
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// TestPickConnection: a connection id wins over every label, so a colleague who labels
// a shared connection with the id of someone's private one does not take the calls
// that name it; labels and a lone account label still work, and a shared account
// label or an unknown name is refused naming the field.
func TestPickConnection(t *testing.T) {
	t.Parallel()
	mine := ConnectionRef{ID: "con_mine", Label: "Work Slack", Account: "Work Slack"}
	squat := ConnectionRef{ID: "con_squat", Label: "con_mine", Account: "con_mine"}
	tests := []struct {
		name  string
		refs  []ConnectionRef
		named string
		want  string // the id picked; "" for a refusal
		says  string
	}{
		{name: "an id wins over a label that spells it, listed first", refs: []ConnectionRef{squat, mine}, named: "con_mine", want: "con_mine"},
		{name: "an id wins over a label that spells it, listed last", refs: []ConnectionRef{mine, squat}, named: "con_mine", want: "con_mine"},
		{name: "the squatter's own id still names it", refs: []ConnectionRef{squat, mine}, named: "con_squat", want: "con_squat"},
		{name: "a label", refs: []ConnectionRef{squat, mine}, named: "Work Slack", want: "con_mine"},
		{name: "a lone account label", refs: []ConnectionRef{{ID: "con_1", Label: "Home (con_1)", Account: "Home"}, mine}, named: "Home", want: "con_1"},
		{name: "a shared account label", refs: []ConnectionRef{{ID: "con_x", Label: "Home (con_x)", Account: "Home"}, {ID: "con_y", Label: "Home (con_y)", Account: "Home"}}, named: "Home",
			says: "(con_x, con_y)"},
		{name: "a label wins over another's lone account label", refs: []ConnectionRef{{ID: "con_1", Label: "Home (con_1)", Account: "Work"}, {ID: "con_2", Label: "Work", Account: "Other"}}, named: "Work", want: "con_2"},
		{name: "the first of two equal labels", refs: []ConnectionRef{{ID: "con_1", Label: "Work", Account: "a"}, {ID: "con_2", Label: "Work", Account: "b"}}, named: "Work", want: "con_1"},
		{name: "an unknown name", refs: []ConnectionRef{squat, mine}, named: "Home", says: `use one of "con_mine", "Work Slack", or a connection id`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pickers := map[string]func() (string, error){
				"PickConnection":  func() (string, error) { return PickConnection(tt.refs, "connection", tt.named) },
				"ConnectionIndex": func() (string, error) { return NewConnectionIndex(tt.refs).Pick("connection", tt.named) },
			}
			for name, pick := range pickers {
				got, err := pick()
				if tt.want != "" {
					if err != nil || got != tt.want {
						t.Fatalf("%s(%q) = %q, %v; want %q", name, tt.named, got, err, tt.want)
					}
					continue
				}
				e, ok := err.(*switchboard.Error)
				if !ok || e.Code != switchboard.CodeInvalid || e.Field != "connection" || !strings.Contains(e.Message, tt.says) {
					t.Fatalf("%s(%q) = %q, %v; want an invalid connection error saying %q", name, tt.named, got, err, tt.says)
				}
			}
		})
	}
}

// TestConnectionAmong: a call may name its connection by label (as MCP URLs list them)
// or by id; a tool on no connection needs none; one connection is taken when none is
// named; several need a name.
func TestConnectionAmong(t *testing.T) {
	t.Parallel()
	gh := &providers.Spec{Name: "github", Title: "GitHub"}
	wf := &providers.Spec{Name: "workflows", Connectionless: true}
	bindings := []Binding{
		{Tool: &providers.Tool{Name: "github_get_me", Provider: gh}, Connections: []ConnectionRef{{ID: "con_a", Label: "octocat"}, {ID: "con_b", Label: "work"}}},
		{Tool: &providers.Tool{Name: "github_get_issue", Provider: gh}, Connections: []ConnectionRef{{ID: "con_a", Label: "octocat"}}},
		{Tool: &providers.Tool{Name: "workflow_x", Provider: wf}},
	}
	for _, c := range []struct{ tool, named, want, says string }{
		{"github_get_me", "work", "con_b", ""},
		{"github_get_me", "", "", "several connections"},
		{"github_get_issue", "", "con_a", ""},
		{"workflow_x", "", "", ""},
		{"github_get_me", "nobody", "", "nobody"},
	} {
		got, err := connectionAmong(bindings, c.tool, c.named)
		if c.says != "" {
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Errorf("%s named %q: %q, %v; want an error saying %q", c.tool, c.named, got, err, c.says)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s named %q: %q, %v; want %q", c.tool, c.named, got, err, c.want)
		}
	}
}
