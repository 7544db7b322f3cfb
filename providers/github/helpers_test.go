package github_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/github"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// testToken is the personal access token the fake upstream expects.
const testToken = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"

// fixture reads a canned GitHub answer from testdata/upstream. The bodies are GitHub's
// own examples from its OpenAPI description, adjusted to be consistent (an open pull
// request has no merged_at; a file's content is real base64), and every test that
// serves one checks it against the description's response schema. GitHub's examples
// pull-request and pull-request-simple-items lack the "type" its team schema requires
// in requested_teams; the fixtures add "type": "organization", as the API sends.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "upstream", name))
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	return b
}

// registered is the GitHub registry the tests share, built on first use: reflecting
// the schemas of every operation takes about 40 ms (600 ms under the race detector),
// and hundreds of subtests need the tools. It is read-only once built.
var registered = sync.OnceValues(func() (map[string]*providers.Tool, error) {
	r := providers.NewRegistry()
	if err := r.Register(github.Spec()); err != nil {
		return nil, err
	}
	out := map[string]*providers.Tool{}
	for _, tool := range r.Tools("github") {
		out[tool.Name] = tool
	}
	return out, nil
})

// tools returns the tools of Spec() by name, in a map of the caller's own.
func tools(t testing.TB) map[string]*providers.Tool {
	t.Helper()
	all, err := registered()
	if err != nil {
		t.Fatalf("register github: %v", err)
	}
	return maps.Clone(all)
}

// invoke runs a tool the way the router does: validate the arguments against the input
// schema, then Invoke (which sets the retry policy from the hints).
func invoke(t *testing.T, tool *providers.Tool, call *providers.Call, args string) (any, error) {
	t.Helper()
	if err := tool.Validate(json.RawMessage(args)); err != nil {
		return nil, err
	}
	out, err := tool.Op.Invoke(context.Background(), call, json.RawMessage(args))
	if err == nil {
		providertest.CheckListedOutput(t, tool, out)
	}
	return out, err
}

// newCall returns a Call for the GitHub spec whose client talks to baseURL.
func newCall(t *testing.T, baseURL string) *providers.Call {
	t.Helper()
	spec := github.Spec()
	return providertest.NewCall(t, &spec, baseURL, testToken)
}

// answer returns a handler that answers every request with status, headers and body.
func answer(status int, header http.Header, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, vs := range header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		if len(body) > 0 {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

// checkRequests checks every request the fake received: the credential and GitHub's
// headers, and the request against GitHub's OpenAPI description, with prefix (the
// GitHub Enterprise Server /api/v3) removed from the path first. It returns the
// operation IDs matched.
func checkRequests(t *testing.T, up *providertest.Upstream, prefix string) []string {
	t.Helper()
	desc := providertest.GitHubDescription(t)
	var ids []string
	for _, req := range up.Requests() {
		if got, want := req.Header.Get("Authorization"), "Bearer "+testToken; got != want {
			t.Errorf("%s %s: Authorization = %q, want %q", req.Method, req.Path, got, want)
		}
		if got := req.Header.Get("Accept"); got != "application/vnd.github+json" {
			t.Errorf("%s %s: Accept = %q, want application/vnd.github+json", req.Method, req.Path, got)
		}
		if got := req.Header.Get("X-GitHub-Api-Version"); got != "2022-11-28" {
			t.Errorf("%s %s: X-GitHub-Api-Version = %q, want 2022-11-28", req.Method, req.Path, got)
		}
		if prefix != "" {
			rest, ok := strings.CutPrefix(req.Path, prefix)
			if !ok {
				t.Errorf("%s %s: path lacks the base URL's prefix %s", req.Method, req.Path, prefix)
			}
			req.Path = rest
		}
		req.Path = rootContentsPlaceholder(req.Path)
		ids = append(ids, desc.CheckRequest(t, req))
	}
	return ids
}

// rootContentsPlaceholder puts a placeholder segment into a request for a repository's
// root directory. GitHub's description of repos/get-content says "If you omit the path
// parameter, you will receive the contents of the repository's root directory", which
// is what GET /repos/{owner}/{repo}/contents/ does (go-github and PyGithub send the
// same), but its path template cannot match an empty {path}: a flaw of the
// description, so the placeholder stands for the omitted path and the rest of the
// request is checked as usual.
func rootContentsPlaceholder(p string) string {
	if strings.HasPrefix(p, "/repos/") && strings.HasSuffix(p, "/contents/") && strings.Count(p, "/") == 5 {
		return p + "omitted-path"
	}
	return p
}

// opCase is one operation called against a fake GitHub that answers fixtures. A case
// sends one request (described by the fields below flow) or, when flow is set, the
// requests of flow in that order.
type opCase struct {
	name    string
	tool    string
	args    string
	fixture string
	status  int         // of the answer; 200 when 0
	header  http.Header // of the answer
	// What must have been sent.
	wantMethod string
	wantPath   string
	wantQuery  url.Values
	wantBody   map[string]any // nil: no body
	wantOpID   string         // the operation of GitHub's description the request is
	// flow, when set, replaces the single exchange above: an operation that sends
	// several requests (push_files, get_pull_request_status).
	flow []exchange
	want any // the typed output
}

// exchange is one request an operation must send and the fake's answer to it.
type exchange struct {
	method  string
	path    string
	query   url.Values     // nil: none
	body    map[string]any // nil: no body
	opID    string         // the operation of GitHub's description the request is
	status  int            // of the answer; 200 when 0
	header  http.Header    // of the answer
	fixture string         // the answer's body; "" for none
}

// exchanges returns the requests the case expects, in order.
func (tc opCase) exchanges() []exchange {
	if tc.flow != nil {
		return tc.flow
	}
	return []exchange{{method: tc.wantMethod, path: tc.wantPath, query: tc.wantQuery, body: tc.wantBody, opID: tc.wantOpID,
		status: tc.status, header: tc.header, fixture: tc.fixture}}
}

// run calls the tool once against a fake GitHub and checks every request sent (method,
// path, query, body), that each request and each of the fake's answers match GitHub's
// description (CheckRequest, CheckResponse), and the typed output.
func (tc opCase) run(t *testing.T) {
	t.Helper()
	tc.runAt(t, "")
}

// runAt is run against a fake whose API lives under prefix, as GitHub Enterprise
// Server's does (https://HOST/api/v3): every request must carry the prefix.
func (tc opCase) runAt(t *testing.T, prefix string) {
	t.Helper()
	want := tc.exchanges()
	bodies := make([][]byte, len(want))
	for i, x := range want {
		if want[i].status == 0 {
			want[i].status = http.StatusOK
		}
		if x.fixture != "" {
			bodies[i] = fixture(t, x.fixture)
		}
	}
	var mu sync.Mutex
	n := 0
	up := providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		if i >= len(want) {
			t.Errorf("unexpected request %d: %s %s", i+1, r.Method, r.URL.Path)
			http.Error(w, `{"message": "unexpected request"}`, http.StatusInternalServerError)
			return
		}
		answer(want[i].status, want[i].header, bodies[i])(w, r)
	})
	tool := tools(t)[tc.tool]
	if tool == nil {
		t.Fatalf("no tool %s", tc.tool)
	}
	out, err := invoke(t, tool, newCall(t, up.URL+prefix), tc.args)
	if err != nil {
		t.Fatalf("%s: %v", tc.tool, err)
	}
	if diff := cmp.Diff(tc.want, out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	providertest.CheckListedOutput(t, tool, out)

	reqs := up.Requests()
	if len(reqs) != len(want) {
		t.Fatalf("upstream got %d requests, want %d", len(reqs), len(want))
	}
	ids := checkRequests(t, up, prefix)
	desc := providertest.GitHubDescription(t)
	for i, req := range reqs {
		x := want[i]
		if req.Method != x.method || req.Path != prefix+x.path {
			t.Errorf("request %d = %s %s, want %s %s", i+1, req.Method, req.Path, x.method, prefix+x.path)
		}
		wantQuery := x.query
		if wantQuery == nil {
			wantQuery = url.Values{}
		}
		if diff := cmp.Diff(wantQuery, req.Query); diff != "" {
			t.Errorf("request %d query (-want +got):\n%s", i+1, diff)
		}
		checkBody(t, req, x.body)
		if ids[i] != x.opID {
			t.Errorf("request %d matched GitHub operation %q, want %s", i+1, ids[i], x.opID)
		}
		desc.CheckResponse(t, x.opID, x.status, bodies[i])
	}
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

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }
