package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/providers"
)

// TestRateLimitSetting: SWITCHBOARD_<PROVIDER>_RATE_LIMIT is read as PER_SECOND:BURST,
// and a bad value is refused naming the variable and what is wrong.
func TestRateLimitSetting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value string
		want  limits.Rate
		says  string // a part of the error; "" for success
	}{
		{value: "1.4:100", want: limits.Rate{PerSecond: 1.4, Burst: 100}},
		{value: "200:1000", want: limits.Rate{PerSecond: 200, Burst: 1000}},
		{value: "10", says: "want PER_SECOND:BURST"},
		{value: "0:5", says: "above 0"},
		{value: "fast:5", says: "above 0"},
		{value: "10:0", says: "at least 1"},
		{value: "10:1.5", says: "at least 1"},
	}
	for _, tt := range tests {
		cfg, err := loadConfig(func(k string) string {
			if k == "SWITCHBOARD_GITHUB_RATE_LIMIT" {
				return tt.value
			}
			return ""
		})
		if tt.says == "" {
			if err != nil || cfg.RateLimits["github"] != tt.want {
				t.Errorf("%q: %v, %v; want %v", tt.value, cfg.RateLimits, err, tt.want)
			}
			continue
		}
		var ce *configError
		if !errors.As(err, &ce) || ce.Name != "SWITCHBOARD_GITHUB_RATE_LIMIT" || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%q: error %v; want one naming SWITCHBOARD_GITHUB_RATE_LIMIT saying %q", tt.value, err, tt.says)
		}
	}
}

// TestConfiguredRateLimitAndUpstreamWindows: a connection's client takes the
// configured bucket (a burst of 3, then refusals with Retry-After and nothing sent),
// and, with a bucket to spare, follows what a fake GitHub says of its own limit: after
// an answer with X-RateLimit-Remaining: 0, calls are refused here until
// X-RateLimit-Reset, with that wait as their Retry-After, and GitHub receives none.
func TestConfiguredRateLimitAndUpstreamWindows(t *testing.T) {
	t.Parallel()
	reset := time.Now().Add(90 * time.Second).Unix()
	var sent, exhausted atomic.Int32
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		if r.Method != http.MethodGet || r.URL.Path != "/repos/octocat/Hello-World/issues/1347" || r.Header.Get("Authorization") != "Bearer ghp_rl" {
			t.Errorf("GitHub got %s %s with Authorization %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
		}
		h := w.Header()
		h.Set("Content-Type", "application/json; charset=utf-8")
		h.Set("X-RateLimit-Limit", "5000")
		h.Set("X-RateLimit-Reset", strconv.FormatInt(reset, 10))
		h.Set("X-RateLimit-Resource", "core")
		if exhausted.Load() == 1 {
			h.Set("X-RateLimit-Remaining", "0")
			h.Set("X-RateLimit-Used", "5000")
		} else {
			h.Set("X-RateLimit-Remaining", "4999")
			h.Set("X-RateLimit-Used", "1")
		}
		_, _ = w.Write([]byte(`{"number":1347,"title":"Found a bug","state":"open"}`))
	}))
	defer gh.Close()
	get := func(c *http.Client) error {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, gh.URL+"/repos/octocat/Hello-World/issues/1347", nil)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	refusedFor := func(err error, want time.Duration) {
		t.Helper()
		var ue *providers.UpstreamError
		if !errors.As(err, &ue) || ue.Code != switchboard.CodeRateLimited || ue.RetryAfter <= 0 || ue.RetryAfter > want || ue.RetryAfter < want-10*time.Second {
			t.Fatalf("err = %v; want rate_limited with a Retry-After of about %v", err, want)
		}
	}
	client := func(rate limits.Rate) *http.Client {
		reg, err := newRegistry(config{BaseURLs: map[string]string{"github": gh.URL}, RateLimits: map[string]limits.Rate{"github": rate}})
		if err != nil {
			t.Fatal(err)
		}
		spec, _ := reg.Provider("github")
		return providers.NewClient(spec, http.DefaultTransport, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "ghp_rl"}), nil)
	}

	// One call every 100 s, three at once: the fourth would wait far past GitHub's wait.
	slow := client(limits.Rate{PerSecond: 0.01, Burst: 3})
	for i := range 3 {
		if err := get(slow); err != nil {
			t.Fatalf("call %d within the burst: %v", i+1, err)
		}
	}
	refusedFor(get(slow), 100*time.Second)
	if n := sent.Load(); n != 3 {
		t.Fatalf("GitHub received %d requests, want the burst of 3", n)
	}

	// A bucket to spare: GitHub's own word decides.
	fast := client(limits.Rate{PerSecond: 1000, Burst: 1000})
	exhausted.Store(1)
	if err := get(fast); err != nil {
		t.Fatalf("the call GitHub answers with its limit spent: %v", err)
	}
	for range 3 {
		refusedFor(get(fast), 90*time.Second)
	}
	if n := sent.Load(); n != 4 {
		t.Fatalf("GitHub received %d requests, want 4: none after it said its limit was spent", n)
	}
}
