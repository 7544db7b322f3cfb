package notion_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/notion"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// testToken is the internal integration secret the fake upstream expects.
const testToken = "ntn_4681234567890abcdefGHIJKLmnopqrSTUVwxyz0123"

// fixture reads a canned Notion answer from testdata/upstream; the bodies follow the
// examples of Notion's API reference for version 2022-06-28.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "upstream", name))
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	return b
}

// tools registers Spec() in a fresh registry and returns its tools by name.
func tools(t *testing.T) map[string]*providers.Tool {
	t.Helper()
	return providertest.Tools(t, notion.Spec())
}

// newCall returns a Call for the Notion spec whose client talks to baseURL.
func newCall(t *testing.T, baseURL string) *providers.Call {
	t.Helper()
	spec := notion.Spec()
	return providertest.NewCall(t, &spec, baseURL, testToken)
}

// answer returns a handler that answers every request with status, headers and body.
func answer(status int, header http.Header, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, vs := range header {
			w.Header()[k] = vs
		}
		if len(body) > 0 && w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

// checkHeaders checks what every request to Notion must carry.
func checkHeaders(t *testing.T, req providertest.Request) {
	t.Helper()
	if got, want := req.Header.Get("Authorization"), "Bearer "+testToken; got != want {
		t.Errorf("%s %s: Authorization = %q, want %q", req.Method, req.Path, got, want)
	}
	if got := req.Header.Get("Notion-Version"); got != "2022-06-28" {
		t.Errorf("%s %s: Notion-Version = %q, want 2022-06-28", req.Method, req.Path, got)
	}
}

// opCase is one operation called against a fake Notion that answers a fixture.
type opCase struct {
	name    string
	tool    string
	args    string
	fixture string
	// What must have been sent.
	wantMethod string
	wantPath   string
	wantQuery  url.Values
	wantBody   map[string]any // nil: no body
	want       any
}

func (tc opCase) run(t *testing.T) {
	t.Helper()
	up := providertest.NewUpstream(t, answer(http.StatusOK, nil, fixture(t, tc.fixture)))
	tool := tools(t)[tc.tool]
	out, err := providertest.Invoke(t, tool, newCall(t, up.URL), tc.args)
	if err != nil {
		t.Fatalf("%s: %v", tc.tool, err)
	}
	if diff := cmp.Diff(tc.want, out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	providertest.CheckOutput(t, tool, out)
	reqs := up.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream got %d requests, want 1", len(reqs))
	}
	req := reqs[0]
	checkHeaders(t, req)
	if req.Method != tc.wantMethod || req.Path != tc.wantPath {
		t.Errorf("request = %s %s, want %s %s", req.Method, req.Path, tc.wantMethod, tc.wantPath)
	}
	wantQuery := tc.wantQuery
	if wantQuery == nil {
		wantQuery = url.Values{}
	}
	if diff := cmp.Diff(wantQuery, req.Query); diff != "" {
		t.Errorf("query (-want +got):\n%s", diff)
	}
	checkBody(t, req, tc.wantBody)
}

// checkBody compares a request's JSON body, decoded, with want (nil: no body at all).
func checkBody(t *testing.T, req providertest.Request, want map[string]any) {
	t.Helper()
	if want == nil {
		if len(req.Body) != 0 {
			t.Errorf("request body = %s, want none", req.Body)
		}
		return
	}
	if req.ContentType != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", req.ContentType)
	}
	var got map[string]any
	if err := json.Unmarshal(req.Body, &got); err != nil {
		t.Fatalf("request body %q is not a JSON object: %v", req.Body, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

// text is the rich text array Notion takes for one plain run, as decoded JSON.
func text(s string) []any {
	return []any{map[string]any{"type": "text", "text": map[string]any{"content": s}}}
}

// paragraph is a paragraph block holding s, as decoded JSON.
func paragraph(s string) map[string]any {
	return map[string]any{"object": "block", "type": "paragraph", "paragraph": map[string]any{"rich_text": text(s)}}
}

func ptr[T any](v T) *T { return &v }
