package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/database"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/tenants"
)

// TestDatabaseOutageAnswers503: while the database does not answer, the REST API
// answers 503 unavailable with a Retry-After, not 500 "internal error".
func TestDatabaseOutageAnswers503(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	_, key, _, err := ts.Bootstrap(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Options{Tenants: ts, Audit: audit.NewStore(db), Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(srv.Close)
	if err := database.Close(db); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/audit", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Error struct {
			Code       string `json:"code"`
			Message    string `json:"message"`
			RetryAfter int    `json:"retry_after_seconds"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "5" || body.Error.Code != "unavailable" || body.Error.RetryAfter != 5 {
		t.Errorf("answer %d Retry-After %q %+v, want 503 unavailable with Retry-After 5", resp.StatusCode, resp.Header.Get("Retry-After"), body.Error)
	}
}
