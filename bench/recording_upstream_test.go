package bench

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// issueRequest is the request both sides of the peer comparison make upstream for one
// get-issue call, as the recording upstream records it.
const issueRequest = "GET /repos/octocat/Hello-World/issues/1347 Bearer " + peerToken

// graphQLNoNodes is GitHub's GraphQL answer to a nodes(ids:) query that finds none:
// github-mcp-server's issue_read asks it for an issue's field values, parent and
// closing pull requests after the REST GET, and takes none for an answer.
const graphQLNoNodes = `{"data":{"nodes":[]}}`

// recordingUpstream is the fake GitHub of the other benchmarks, counting the requests it
// answers, so that a comparison can check each side asked it the same thing.
type recordingUpstream struct {
	*httptest.Server
	mu   sync.Mutex
	seen map[string]int // "METHOD /path?query Authorization" → how many
}

func newRecordingUpstream(tb testing.TB) *recordingUpstream {
	tb.Helper()
	u := &recordingUpstream{seen: map[string]int{}}
	fake := fakeGitHubHandler()
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.seen[r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Authorization")]++
		u.mu.Unlock()
		if r.URL.Path == "/api/graphql" { // github-mcp-server's enrichment of an issue it read
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_, _ = w.Write([]byte(graphQLNoNodes))
			return
		}
		fake.ServeHTTP(w, r)
	}))
	tb.Cleanup(func() { testwait.CloseServer(tb, u.Server) })
	return u
}

// take returns the requests answered since the last take, and forgets them.
func (u *recordingUpstream) take() map[string]int {
	u.mu.Lock()
	defer u.mu.Unlock()
	seen := maps.Clone(u.seen)
	clear(u.seen)
	return seen
}
