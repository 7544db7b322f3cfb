package securitytest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestCredentialsNeverFollowARedirectElsewhere: a provider that redirects a tool call
// to another origin (another port of the same loopback host, as a compromised or
// misconfigured upstream would) does not hand that origin the connection's token, in
// any header, from the REST tool call or a background run.
func TestCredentialsNeverFollowARedirectElsewhere(t *testing.T) {
	t.Parallel()
	h := newHub(t, testdb.SQLite(t))
	f := h.seed()
	var mu sync.Mutex
	var got []http.Header
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Clone())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"message":"Not Found"}`))
	}))
	defer elsewhere.Close()
	h.github.mu.Lock()
	h.github.moved = elsewhere.URL + "/repositories/1"
	h.github.mu.Unlock()

	call := `{"connection_id":"` + f.connID + `","arguments":{"owner":"victim","repo":"moved"}}`
	if status, _, b := h.do(f.owner, http.MethodPost, "/api/tools/github_get_repository/call", call, nil); status >= 500 {
		t.Fatalf("tool call: %d %s", status, b)
	}
	run := `{"tool":"github_get_repository","connection_id":"` + f.connID + `","arguments":{"owner":"victim","repo":"moved"},"wait":true}`
	if status, _, b := h.do(f.owner, http.MethodPost, "/api/runs", run, nil); status >= 500 {
		t.Fatalf("run: %d %s", status, b)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("the redirect was never followed: the test proves nothing")
	}
	for _, hdr := range got {
		for k, vs := range hdr {
			for _, v := range vs {
				if strings.Contains(v, victimToken) {
					t.Errorf("the other origin got the victim's token in %s", k)
				}
			}
		}
	}
}
