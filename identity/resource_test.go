package identity

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestResourceURLs checks the resource identifier and the RFC 9728 metadata URL of
// tenant and agent URLs, for public URLs with and without a path, and that the
// challenge quotes them safely.
func TestResourceURLs(t *testing.T) {
	t.Parallel()
	type urls struct{ Resource, Metadata, Challenge string }
	tests := []struct {
		name                        string
		publicURL, slug, agent, why string
		want                        urls
	}{
		{
			name: "tenant", publicURL: "https://hub.example.com", slug: "acme",
			want: urls{
				Resource:  "https://hub.example.com/mcp/acme",
				Metadata:  "https://hub.example.com/.well-known/oauth-protected-resource/mcp/acme",
				Challenge: `Bearer realm="switchboard", resource_metadata="https://hub.example.com/.well-known/oauth-protected-resource/mcp/acme", scope="mcp"`,
			},
		},
		{
			name: "agent with a refused key", publicURL: "https://hub.example.com/", slug: "acme", agent: "agt_1", why: "invalid or revoked API key",
			want: urls{
				Resource:  "https://hub.example.com/mcp/acme/agents/agt_1",
				Metadata:  "https://hub.example.com/.well-known/oauth-protected-resource/mcp/acme/agents/agt_1",
				Challenge: `Bearer realm="switchboard", resource_metadata="https://hub.example.com/.well-known/oauth-protected-resource/mcp/acme/agents/agt_1", scope="mcp", error="invalid_token", error_description="invalid or revoked API key"`,
			},
		},
		{
			name: "public URL with a path: the well-known part goes after the host", publicURL: "https://example.com:8443/switchboard", slug: "acme",
			want: urls{
				Resource:  "https://example.com:8443/switchboard/mcp/acme",
				Metadata:  "https://example.com:8443/.well-known/oauth-protected-resource/switchboard/mcp/acme",
				Challenge: `Bearer realm="switchboard", resource_metadata="https://example.com:8443/.well-known/oauth-protected-resource/switchboard/mcp/acme", scope="mcp"`,
			},
		},
		{
			name: "quotes, backslashes and line breaks cannot leave the quoted strings", publicURL: "http://127.0.0.1:8080", slug: `a"b`, agent: `x\y`, why: "bad \"key\"\r\nX: y",
			want: urls{
				Resource:  "http://127.0.0.1:8080/mcp/a%22b/agents/x%5Cy",
				Metadata:  "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp/a%22b/agents/x%5Cy",
				Challenge: `Bearer realm="switchboard", resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp/a%22b/agents/x%5Cy", scope="mcp", error="invalid_token", error_description="bad  key   X: y"`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := urls{
				Resource:  ResourceURL(tt.publicURL, tt.slug, tt.agent),
				Metadata:  MetadataURL(tt.publicURL, tt.slug, tt.agent),
				Challenge: Challenge(tt.publicURL, tt.slug, tt.agent, tt.why),
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseResourcePath checks that the tenant and agent MCP paths split into their
// parts, that every other path is refused, and that it inverts ResourcePath.
func TestParseResourcePath(t *testing.T) {
	t.Parallel()
	type parts struct {
		Slug, Agent string
		OK          bool
	}
	tests := []struct {
		path string
		want parts
	}{
		{"/mcp/acme", parts{"acme", "", true}},
		{"/mcp/acme/agents/agt_1", parts{"acme", "agt_1", true}},
		{"/mcp/", parts{}},
		{"/mcp", parts{}},
		{"/mcp/acme/", parts{}},
		{"/mcp//agents/agt_1", parts{}},
		{"/mcp/acme/agents/", parts{}},
		{"/mcp/acme/robots/agt_1", parts{}},
		{"/mcp/acme/agents/agt_1/extra", parts{}},
		{"/api/acme", parts{}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			slug, agent, ok := ParseResourcePath(tt.path)
			if diff := cmp.Diff(tt.want, parts{slug, agent, ok}); diff != "" {
				t.Errorf("ParseResourcePath(%q) (-want +got):\n%s", tt.path, diff)
			}
			if tt.want.OK {
				if back := ResourcePath(slug, agent); back != tt.path {
					t.Errorf("ResourcePath(%q, %q) = %q, want %q", slug, agent, back, tt.path)
				}
			}
		})
	}
}
