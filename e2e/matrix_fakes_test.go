package e2e

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// notesKey is the API key the notes API (an OpenAPI-described upstream) accepts.
const notesKey = "notes-e2e-key-0123456789abcdef"

// notesDescription describes the notes API: one list operation with a query, the key
// in a header, as a tenant would import it.
const notesDescription = `openapi: 3.0.3
info: {title: Notes, version: "1", description: "A tenant's own notes API."}
security: [{key: []}]
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Notes-Key}
paths:
  /notes:
    get:
      operationId: listNotes
      summary: List notes
      parameters: [{name: q, in: query, required: true, schema: {type: string}}]
      responses:
        "200":
          description: The notes that match
          content: {application/json: {schema: {type: object, required: [notes], properties: {notes: {type: array, items: {type: object, properties: {text: {type: string}}}}}}}}
`

// notesRedirectQuery is the search the notes API answers with a redirect to another
// origin (elsewhere), as an API that moved would.
const notesRedirectQuery = "moved-elsewhere"

// notesAPI answers GET /notes?q= with the notes holding q for a request bearing
// notesKey in X-Notes-Key (401 otherwise), and records every request.
type notesAPI struct {
	*httptest.Server
	mu   sync.Mutex
	seen []received
	// redirected counts the requests answered with the redirect.
	redirected int
	// elsewhere is where the redirect of notesRedirectQuery points: another origin.
	elsewhere *originRecorder
}

func newNotesAPI(t *testing.T) *notesAPI {
	t.Helper()
	n := &notesAPI{elsewhere: newOriginRecorder(t)}
	n.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		n.seen = append(n.seen, received{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Authorization: r.Header.Get("X-Notes-Key")})
		n.mu.Unlock()
		q := r.URL.Query().Get("q")
		switch {
		case r.URL.Path != "/notes" || r.Method != http.MethodGet:
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "not found"})
		case r.Header.Get("X-Notes-Key") != notesKey:
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "bad key"})
		case q == notesRedirectQuery:
			n.mu.Lock()
			n.redirected++
			n.mu.Unlock()
			http.Redirect(w, r, n.elsewhere.URL+"/notes?q="+url.QueryEscape(q), http.StatusFound)
		default:
			writeJSON(w, http.StatusOK, map[string]any{"notes": []map[string]string{{"text": "note about " + q}}})
		}
	}))
	t.Cleanup(n.Close)
	return n
}

// requests returns what the API received from index since on (X-Notes-Key in
// Authorization).
func (n *notesAPI) requests(since int) []received {
	n.mu.Lock()
	defer n.mu.Unlock()
	if since > len(n.seen) {
		return nil
	}
	return append([]received(nil), n.seen[since:]...)
}

func (n *notesAPI) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.seen)
}

// originRecorder is another origin a redirect points to: it answers 200 with an empty
// JSON object and records the credentials each request carried.
type originRecorder struct {
	*httptest.Server
	mu          sync.Mutex
	credentials []string // Authorization and X-Notes-Key of each request, "" when none
}

func newOriginRecorder(t *testing.T) *originRecorder {
	t.Helper()
	return newOriginRecorderAt(t, "127.0.0.1:0")
}

// newOriginRecorderAt is an originRecorder listening at addr.
func newOriginRecorderAt(t *testing.T, addr string) *originRecorder {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	o := &originRecorder{}
	o.Server = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.credentials = append(o.credentials, strings.TrimSpace(r.Header.Get("Authorization")+" "+r.Header.Get("X-Notes-Key")))
		o.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{})
	})}}
	o.Start()
	t.Cleanup(o.Close)
	return o
}

// received returns the credentials of the requests the origin got.
func (o *originRecorder) received() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.credentials...)
}

// githubMovedRepo is the repository the GitHub front answers with a redirect to
// another origin, as GitHub does for a renamed repository; githubInternalRepo the one
// it redirects to a private address the hub is not allowed to reach.
const (
	githubMovedRepo    = "/repos/" + githubOwner + "/moved"
	githubInternalRepo = "/repos/" + githubOwner + "/internal"
)

// redirectingFront stands before the fake GitHub: GET githubMovedRepo is a 301 to
// another origin (elsewhere), GET githubInternalRepo a 301 to a loopback address
// outside the allowed range (internal); everything else goes through to GitHub
// unchanged.
type redirectingFront struct {
	*httptest.Server
	elsewhere, internal *originRecorder
	mu                  sync.Mutex
	redirected          []string // the paths answered with a redirect
}

// redirects returns the paths the front answered with a redirect.
func (f *redirectingFront) redirects() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.redirected...)
}

func newRedirectingFront(t *testing.T, upstream string) *redirectingFront {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	f := &redirectingFront{elsewhere: newOriginRecorder(t), internal: newOriginRecorderAt(t, "127.0.0.2:0")}
	proxy := httputil.NewSingleHostReverseProxy(target)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		to := map[string]string{githubMovedRepo: f.elsewhere.URL, githubInternalRepo: f.internal.URL}[r.URL.Path]
		if r.Method == http.MethodGet && to != "" {
			_, _ = io.Copy(io.Discard, r.Body)
			f.mu.Lock()
			f.redirected = append(f.redirected, r.URL.Path)
			f.mu.Unlock()
			http.Redirect(w, r, to+"/repos/"+githubOwner+"/"+githubRepo, http.StatusMovedPermanently)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}
