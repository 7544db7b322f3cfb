package github_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// TestEveryOperationMapsFailures answers the first request of every operation with
// each failure GitHub sends, the way GitHub sends it, and checks the code an agent
// gets, the wait of a rate limit, the field of a validation error, that no token
// leaks, and that only what is safe to repeat is retried: reads and idempotent
// operations three times on a 503, everything else once.
func TestEveryOperationMapsFailures(t *testing.T) {
	t.Parallel()
	failures := []struct {
		name       string
		status     int
		header     http.Header
		body       string
		wantCode   switchboard.Code
		wantField  string
		wantIn     string
		wantWait   time.Duration
		retryReads bool
	}{
		{
			name: "401", status: http.StatusUnauthorized,
			body:     `{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"}`,
			wantCode: switchboard.CodeReconnect, wantIn: "reconnect the GitHub connection",
		},
		{
			name: "403", status: http.StatusForbidden, header: http.Header{"X-Oauth-Scopes": {"read:user"}, "X-Accepted-Oauth-Scopes": {"repo"}},
			body:     `{"message": "Resource not accessible by personal access token", "documentation_url": "https://docs.github.com/rest", "status": "403"}`,
			wantCode: switchboard.CodeForbidden, wantIn: `GitHub accepts: "repo"`,
		},
		{
			name: "404", status: http.StatusNotFound,
			body:     `{"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}`,
			wantCode: switchboard.CodeNotFound, wantIn: "the token may lack access",
		},
		{
			name: "422", status: http.StatusUnprocessableEntity,
			body:     `{"message": "Validation Failed", "errors": [{"resource": "Thing", "code": "invalid", "field": "name"}], "documentation_url": "https://docs.github.com/rest", "status": "422"}`,
			wantCode: switchboard.CodeInvalid, wantField: "name", wantIn: "Validation Failed: name invalid",
		},
		{
			name: "429 with Retry-After", status: http.StatusTooManyRequests, header: http.Header{"Retry-After": {"30"}},
			body:     `{"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", "documentation_url": "https://docs.github.com/rest", "status": "429"}`,
			wantCode: switchboard.CodeRateLimited, wantIn: "retry after the wait given", wantWait: 30 * time.Second,
		},
		{
			name: "503", status: http.StatusServiceUnavailable,
			body:     `{"code": "unavailable", "message": "Service Unavailable", "documentation_url": "https://docs.github.com/rest"}`,
			wantCode: switchboard.CodeUpstream, wantIn: "Service Unavailable", retryReads: true,
		},
	}
	seen := map[string]bool{}
	all := tools(t)
	for _, tc := range specCheckedCases() {
		if seen[tc.tool] {
			continue
		}
		seen[tc.tool] = true
		tool := all[tc.tool]
		if tool == nil {
			t.Errorf("no tool %s", tc.tool)
			continue
		}
		for _, f := range failures {
			t.Run(tc.tool+"/"+f.name, func(t *testing.T) {
				t.Parallel()
				up := providertest.NewUpstream(t, answer(f.status, f.header, []byte(f.body)))
				_, err := invoke(t, tool, newCall(t, up.URL), tc.args)
				if got := switchboard.CodeOf(err); got != f.wantCode {
					t.Fatalf("code = %q, want %q (error: %v)", got, f.wantCode, err)
				}
				var ue *providers.UpstreamError
				if !errors.As(err, &ue) || ue.Status != f.status {
					t.Fatalf("error %v carries no upstream error with status %d", err, f.status)
				}
				if !strings.Contains(err.Error(), f.wantIn) {
					t.Errorf("error %q does not say %q", err, f.wantIn)
				}
				if f.wantWait != 0 && (ue.RetryAfter > f.wantWait || ue.RetryAfter < f.wantWait-5*time.Second) {
					t.Errorf("retry after = %v, want about %v", ue.RetryAfter, f.wantWait)
				}
				var se *switchboard.Error
				if errors.As(err, &se) && se.Field != f.wantField || !errors.As(err, &se) && f.wantField != "" {
					t.Errorf("error %v: field want %q", err, f.wantField)
				}
				if strings.Contains(err.Error(), testToken) {
					t.Errorf("error %q shows the token", err)
				}
				want := 1
				if f.retryReads && tool.Info.Hints.Retryable() {
					want = 3
				}
				if n := len(up.Requests()); n != want {
					t.Errorf("upstream got %d requests, want %d (hints %+v)", n, want, tool.Info.Hints)
				}
				checkRequests(t, up, "")
			})
		}
	}
}
