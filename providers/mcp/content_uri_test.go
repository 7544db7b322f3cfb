package mcp_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
)

// TestSplitHubURI maps the hub's URIs of remote resources back to the server and its
// own URI, and refuses every other URI.
func TestSplitHubURI(t *testing.T) {
	t.Parallel()
	type split struct {
		Server, Remote string
		OK             bool
	}
	tests := []struct {
		name string
		uri  string
		want split
	}{
		{"made by HubURI", remotemcp.HubURI("docs", "docs://pages/7"), split{"docs", "docs://pages/7", true}},
		{"remote URI with query and fragment", remotemcp.HubURI("docs", "https://x.test/a?b=c#d"), split{"docs", "https://x.test/a?b=c#d", true}},
		{"remote URI with the prefix itself", remotemcp.HubURI("a", remotemcp.HubURI("b", "c://d")), split{"a", "switchboard://mcp/b/c://d", true}},
		{"the hub's own resource", "switchboard://connections", split{}},
		{"no server", "switchboard://mcp//docs://pages/7", split{}},
		{"no remote URI", "switchboard://mcp/docs/", split{}},
		{"no slash after the server", "switchboard://mcp/docs", split{}},
		{"another scheme", "docs://pages/7", split{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got split
			got.Server, got.Remote, got.OK = remotemcp.SplitHubURI(tc.uri)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SplitHubURI(%q) (-want +got):\n%s", tc.uri, diff)
			}
		})
	}
}
