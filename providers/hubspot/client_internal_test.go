package hubspot

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// TestDailyLimitWaitsUntilMidnight checks that a spent daily limit asks the caller to
// come back at midnight in the account's time zone, or in UTC when it is unknown.
func TestDailyLimitWaitsUntilMidnight(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 16, 30, 0, 0, time.UTC) // 17:30 in Berlin
	body := `{"status": "error", "message": "You have reached your daily limit.", "errorType": "RATE_LIMIT",
		"correlationId": "c033cdaa-2c40-4a64-ae48-b4cec88dad24", "policyName": "DAILY", "requestId": "3d3e35b7-0dae-4b9f-a6e3-9c230cbcf8dd"}`
	for _, tc := range []struct {
		name     string
		timeZone string
		header   http.Header
		want     time.Duration
	}{
		{name: "account in Berlin", timeZone: "Europe/Berlin", want: 6*time.Hour + 30*time.Minute},
		{name: "time zone unknown", want: 7*time.Hour + 30*time.Minute},
		{name: "time zone not loadable", timeZone: "Mars/Olympus", want: 7*time.Hour + 30*time.Minute},
		{name: "daily remaining header without a policy", timeZone: "UTC",
			header: http.Header{"X-Hubspot-Ratelimit-Daily-Remaining": {"0"}}, want: 7*time.Hour + 30*time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := body
			if tc.header != nil {
				b = strings.Replace(body, `"DAILY"`, `"TEN_SECONDLY_ROLLING"`, 1)
			}
			resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: tc.header, Body: io.NopCloser(strings.NewReader(b))}
			if resp.Header == nil {
				resp.Header = http.Header{}
			}
			err := errorFrom(resp, tc.timeZone, now)
			var ue *providers.UpstreamError
			if !errors.As(err, &ue) || ue.Code != switchboard.CodeRateLimited {
				t.Fatalf("error = %v, want rate_limited", err)
			}
			if ue.RetryAfter != tc.want {
				t.Errorf("retry after = %v, want %v", ue.RetryAfter, tc.want)
			}
			if !strings.Contains(ue.Message, "daily API limit") {
				t.Errorf("message %q does not name the daily limit", ue.Message)
			}
		})
	}
}
