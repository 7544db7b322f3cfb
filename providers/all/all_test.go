package all_test

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
)

// mcpToolName is the tool-name pattern of DESIGN.md §5, which MCP clients enforce.
var mcpToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestRegister(t *testing.T) {
	t.Parallel()
	r := providers.NewRegistry()
	if err := all.Register(r); err != nil {
		t.Fatalf("Register: %v", err)
	}
	var names []string
	for _, p := range r.Providers() {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"github", "slack", "notion", "linear", "jira", "airtable", "hubspot"}, names); diff != "" {
		t.Errorf("providers (-want +got):\n%s", diff)
	}
	for _, p := range r.Providers() {
		tools := r.Tools(p.Name)
		if len(tools) == 0 {
			t.Errorf("provider %s has no tools", p.Name)
		}
		for _, tool := range tools {
			if !mcpToolName.MatchString(tool.Name) {
				t.Errorf("tool name %q does not match %s", tool.Name, mcpToolName)
			}
			if len(tool.InputSchema) == 0 || len(tool.OutputSchema) == 0 {
				t.Errorf("tool %s has no schemas", tool.Name)
			}
		}
	}
}

func TestRegisterTwiceFails(t *testing.T) {
	t.Parallel()
	r := providers.NewRegistry()
	if err := all.Register(r); err != nil {
		t.Fatalf("first Register: %v", err)
	}
	if err := all.Register(r); err == nil {
		t.Fatal("second Register on the same registry succeeded; want an already-registered error")
	}
}

func TestSpecsHaveTheIssueOperations(t *testing.T) {
	t.Parallel()
	r := providers.NewRegistry()
	if err := all.Register(r); err != nil {
		t.Fatalf("Register: %v", err)
	}
	tests := []struct {
		name string
		tool string
	}{
		{name: "slack list channels", tool: "slack_list_channels"},
		{name: "slack post message", tool: "slack_post_message"},
		{name: "github create issue", tool: "github_create_issue"},
		{name: "github search repositories", tool: "github_search_repositories"},
		{name: "notion query database", tool: "notion_query_database"},
		{name: "linear create issue", tool: "linear_create_issue"},
		{name: "jira transition issue", tool: "jira_transition_issue"},
		{name: "airtable list records", tool: "airtable_list_records"},
		{name: "hubspot create note", tool: "hubspot_create_note"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, ok := r.Tool(tc.tool); !ok {
				t.Errorf("tool %s not registered", tc.tool)
			}
		})
	}
}
