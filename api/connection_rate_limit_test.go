package api_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

type rateLimitBody struct {
	PerSecond float64 `json:"per_second"`
	Burst     int     `json:"burst"`
	Source    string  `json:"source"`
}

// A tenant admin gives a connection its own rate limit: shown on the connection,
// applied to its calls (the second call inside it is refused with rate_limited and
// Retry-After, and never reaches GitHub), refused to a member, and refused out of
// bounds with the field and the reason, changing nothing; null gives the connection
// its provider's limit again.
func TestConnectionsOwnRateLimit(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		var conn struct {
			ID        string         `json:"id"`
			RateLimit *rateLimitBody `json:"rate_limit"`
		}
		w.want(w.admin, http.MethodPost, "/api/connections", `{"provider":"github","token":"`+goodToken+`","shared":true}`, http.StatusCreated, &conn)
		if conn.RateLimit == nil || conn.RateLimit.Source != "provider" || conn.RateLimit.PerSecond <= 0 {
			t.Fatalf("a new connection's rate_limit = %+v, want its provider's", conn.RateLimit)
		}
		providers := *conn.RateLimit
		path := "/api/connections/" + conn.ID

		status, b := w.do(w.member, http.MethodPatch, path, `{"rate_limit":{"per_second":1,"burst":1}}`)
		if status != http.StatusForbidden {
			t.Errorf("a member's PATCH: %d %s, want 403", status, b)
		}
		for _, tc := range []struct{ body, field string }{
			{`{"rate_limit":{"per_second":0,"burst":5}}`, "rate_limit.per_second"},
			{`{"rate_limit":{"per_second":-1,"burst":5}}`, "rate_limit.per_second"},
			{`{"rate_limit":{"per_second":1001,"burst":5}}`, "rate_limit.per_second"},
			{`{"rate_limit":{"per_second":1,"burst":0}}`, "rate_limit.burst"},
			{`{"rate_limit":{"per_second":1,"burst":10001}}`, "rate_limit.burst"},
			{`{"rate_limit":{"per_second":"fast","burst":5}}`, "rate_limit"},
			{`{"rate_limit":{"per_second":1,"burst":5,"per_hour":9}}`, "rate_limit"},
			{`{}`, "rate_limit"},
		} {
			status, b := w.do(w.admin, http.MethodPatch, path, tc.body)
			if status != http.StatusBadRequest || decodeError(t, b).Error.Field != tc.field {
				t.Errorf("PATCH %s: %d %s, want 400 naming %s", tc.body, status, b, tc.field)
			}
		}
		w.want(w.admin, http.MethodGet, path, "", http.StatusOK, &conn)
		if diff := cmp.Diff(&providers, conn.RateLimit); diff != "" {
			t.Errorf("rate_limit after refused changes (-want +got):\n%s", diff)
		}

		w.want(w.admin, http.MethodPatch, path, `{"rate_limit":{"per_second":0.01,"burst":1}}`, http.StatusOK, &conn)
		if diff := cmp.Diff(&rateLimitBody{PerSecond: 0.01, Burst: 1, Source: "connection"}, conn.RateLimit); diff != "" {
			t.Errorf("rate_limit after the admin's PATCH (-want +got):\n%s", diff)
		}
		before := len(w.github.requests())
		w.want(w.admin, http.MethodPost, "/api/tools/github_get_me/call", `{"arguments":{}}`, http.StatusOK, nil)
		status, b = w.do(w.admin, http.MethodPost, "/api/tools/github_get_me/call", `{"arguments":{}}`)
		if status != http.StatusTooManyRequests || decodeError(t, b).Error.Code != "rate_limited" {
			t.Errorf("a second call inside the connection's limit: %d %s, want 429 rate_limited", status, b)
		}
		if sent := len(w.github.requests()) - before; sent != 1 {
			t.Errorf("GitHub got %d requests for the two calls, want 1 (the second refused before it left)", sent)
		}

		w.want(w.admin, http.MethodPatch, path, `{"rate_limit":null}`, http.StatusOK, &conn)
		if diff := cmp.Diff(&providers, conn.RateLimit); diff != "" {
			t.Errorf("rate_limit after null (-want +got):\n%s", diff)
		}
	})
}
