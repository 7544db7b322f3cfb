package openapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// TestServers: an operation's own servers, else its path item's, win over the
// description's (and the base URL): an absolute one is called as it is, with its
// variables at their defaults; a relative one is resolved against the base URL.
func TestServers(t *testing.T) {
	t.Parallel()
	base := providertest.NewUpstream(t, providertest.Answer(http.StatusOK, nil, `{}`))
	uploads := providertest.NewUpstream(t, providertest.Answer(http.StatusOK, nil, `{}`))
	cdn := providertest.NewUpstream(t, providertest.Answer(http.StatusOK, nil, `{}`))
	doc := `{"openapi":"3.0.0","info":{"title":"T","version":"1"},"servers":[{"url":"https://api.example.test/v1"}],"paths":{
"/items":{"get":{"operationId":"listItems","responses":{"200":{"description":"ok"}}}},
"/files":{"servers":[{"url":"UPLOADS/{area}","variables":{"area":{"default":"upload"}}}],
  "post":{"operationId":"uploadFile","responses":{"200":{"description":"ok"}}},
  "get":{"operationId":"listFiles","servers":[{"url":"CDN/cdn/"}],"responses":{"200":{"description":"ok"}}}},
"/old":{"servers":[{"url":"/v0"}],"get":{"operationId":"getOld","responses":{"200":{"description":"ok"}}}},
"/odd":{"servers":[{"url":"{host}/x"}],"get":{"operationId":"getOdd","responses":{"200":{"description":"ok"}}}}}}`
	doc = strings.NewReplacer("UPLOADS", uploads.URL, "CDN", cdn.URL).Replace(doc)
	spec, err := New(t.Context(), []byte(doc), Options{Name: "api", BaseURL: base.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	tools := providertest.Tools(t, spec)
	tests := []struct {
		tool     string
		upstream *providertest.Upstream
		path     string
	}{
		{tool: "api_list_items", upstream: base, path: "/v1/items"},
		{tool: "api_upload_file", upstream: uploads, path: "/upload/files"},
		{tool: "api_list_files", upstream: cdn, path: "/cdn/files"},
		{tool: "api_get_old", upstream: base, path: "/v0/old"},
		{tool: "api_get_odd", upstream: base, path: "/v1/odd"}, // a variable without a default: the base URL
	}
	for _, tt := range tests {
		before := len(tt.upstream.Requests())
		if _, err := providertest.Invoke(t, tools[tt.tool], providertest.NewCall(t, &spec, spec.BaseURL, "k"), `{}`); err != nil {
			t.Fatalf("%s: %v", tt.tool, err)
		}
		reqs := tt.upstream.Requests()
		if len(reqs) != before+1 || reqs[len(reqs)-1].Path != tt.path {
			t.Errorf("%s: requests at its upstream %v, want one more at %s", tt.tool, reqs, tt.path)
		}
	}
	if n := len(base.Requests()) + len(uploads.Requests()) + len(cdn.Requests()); n != len(tests) {
		t.Errorf("%d requests in all, want %d", n, len(tests))
	}
}
