package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// BenchmarkFleetListChanged measures, on two full `serve` nodes sharing a PostgreSQL
// database (when SWITCHBOARD_TEST_DATABASE_URL is set), a connection added through node
// A until node B's live MCP session receives tools/list_changed, then the same for its
// deletion. ns/change is one change's latency: A's request (with the token check at a
// fake GitHub), the commit, NOTIFY, B's rebuilt tool list and the notification.
func BenchmarkFleetListChanged(b *testing.B) {
	db := testdb.OpenPostgres(b)
	if db == nil {
		return // PostgreSQL only: a fleet needs it
	}
	gh := newFakeGitHub(b)
	dsn, keyFile := testdb.DSN(b, db), filepath.Join(b.TempDir(), "master.key")
	a, out := startFleetNode(b, dsn, keyFile, gh.URL, 5)
	var admin string
	for _, line := range out {
		if k, ok := strings.CutPrefix(line, "Admin API key (shown once, store it now): "); ok {
			admin = k
		}
	}
	nodeB, _ := startFleetNode(b, dsn, keyFile, gh.URL, 5)
	_, changed := nodeB.session(b, admin)
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		var conn struct {
			ID string `json:"id"`
		}
		if code := a.api(b, http.MethodPost, "/api/connections", admin, `{"provider":"github","token":"ghp_bench"}`, &conn); code != http.StatusCreated {
			b.Fatalf("connect on A: status %d", code)
		}
		waitChanged(b, changed, "the connection was added")
		if code := a.api(b, http.MethodDelete, "/api/connections/"+conn.ID, admin, "", nil); code != http.StatusOK && code != http.StatusNoContent {
			b.Fatalf("delete on A: status %d", code)
		}
		waitChanged(b, changed, "the connection was deleted")
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(2*b.N), "ns/change")
}
