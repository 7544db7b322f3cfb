package openapi

import (
	"strings"
	"testing"
)

// TestDescriptionURLs: a description's URLs are kept only when they are absolute http
// or https URLs: a javascript:, data: or relative externalDocs URL (the description's or
// an operation's) is no documentation link, and an OAuth flow whose endpoints are none
// is no OAuth connect flow (the connection takes a pasted token).
func TestDescriptionURLs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, url string
		kept      bool
	}{
		{name: "https", url: "https://docs.example.com/api", kept: true},
		{name: "http", url: "http://docs.example.com/api", kept: true},
		{name: "javascript", url: "javascript:alert(document.cookie)"},
		{name: "javascript in capitals", url: "JavaScript:alert(1)"},
		{name: "data", url: "data:text/html,<script>alert(1)</script>"},
		{name: "relative", url: "/docs"},
		{name: "no host", url: "https:///docs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := strings.NewReplacer("URL", tt.url).Replace(`{"openapi":"3.0.3","info":{"title":"Docs","version":"1"},
"servers":[{"url":"https://api.example.com"}],"externalDocs":{"url":"URL"},"security":[{"oauth":[]}],
"components":{"securitySchemes":{"oauth":{"type":"oauth2","flows":{"authorizationCode":{"authorizationUrl":"URL","tokenUrl":"URL","scopes":{}}}}}},
"paths":{"/x":{"get":{"operationId":"x","externalDocs":{"url":"URL"},"responses":{"200":{"description":"ok"}}}}}}`)
			spec, err := New(t.Context(), []byte(doc), Options{Name: "docs"})
			if err != nil {
				t.Fatal(err)
			}
			want := ""
			if tt.kept {
				want = tt.url
			}
			if spec.DocsURL != want || spec.Operations[0].Info().DocsURL != want {
				t.Errorf("docs URLs %q and %q, want %q", spec.DocsURL, spec.Operations[0].Info().DocsURL, want)
			}
			if (spec.OAuth != nil) != tt.kept {
				t.Errorf("OAuth flow %+v, want one: %v", spec.OAuth, tt.kept)
			}
		})
	}
}
