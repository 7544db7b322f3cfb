package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestServeThrottles runs the server behind a trusted proxy (the test, at 127.0.0.1,
// names the client in X-Forwarded-For): unknown API keys from one client are answered
// 401 until its budget is spent, then 429 with Retry-After at /api and at the MCP URL,
// while a valid key works from that client and from another; wrong passwords at /signin get 401 five
// times, then 429 with Retry-After and a page saying when to try again.
func TestServeThrottles(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	e := env(map[string]string{"SWITCHBOARD_ADDR": "127.0.0.1:0", "SWITCHBOARD_DATA_DIR": dir, "SWITCHBOARD_LOG_LEVEL": "error", "SWITCHBOARD_TRUSTED_PROXIES": "127.0.0.1"})
	lines, _ := startServe(t, e, 6)
	base := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(lines[0])
	var key string
	for _, l := range lines {
		if k, ok := strings.CutPrefix(l, "Admin API key (shown once, store it now): "); ok {
			key = k
		}
	}
	if base == "" || key == "" {
		t.Fatalf("serve printed %q: no URL or admin key", lines)
	}

	send := func(method, path, client, bearer string, form url.Values) (*http.Response, string) {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequest(method, base+path, body)
		req.Header.Set("X-Forwarded-For", client)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(&http.Cookie{Name: "switchboard_form", Value: strings.Repeat("f", 32)})
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res, string(b)
	}

	const attacker, other = "198.51.100.1", "198.51.100.2"
	// The client's bucket holds 30 unknown keys and refills slowly: on a slow machine a
	// few more may pass before the first refusal, never fewer, and one comes.
	statuses := map[int]int{}
	for i := 0; i < 100 && statuses[http.StatusTooManyRequests] == 0; i++ {
		res, _ := send(http.MethodGet, "/api/tenant", attacker, fmt.Sprintf("sbk_%012d_%s", i, strings.Repeat("a", 52)), nil)
		statuses[res.StatusCode]++
	}
	if statuses[http.StatusUnauthorized] < 30 || statuses[http.StatusTooManyRequests] != 1 || len(statuses) != 2 {
		t.Errorf("unknown keys from one client until refused: statuses %v, want at least 30 × 401, then 429", statuses)
	}
	// refused sends fresh unknown keys from the client that ran out until one is refused:
	// the first, unless the bucket refilled one (every 2 s) on a slow machine meanwhile.
	misses := 0
	refused := func(method, path string) (*http.Response, string) {
		t.Helper()
		var res *http.Response
		var body string
		for range 20 {
			misses++
			res, body = send(method, path, attacker, fmt.Sprintf("sbk_%012d_%s", 900000+misses, strings.Repeat("b", 52)), nil)
			if res.StatusCode != http.StatusUnauthorized {
				break
			}
		}
		return res, body
	}
	for _, r := range []struct{ method, path string }{{http.MethodGet, "/api/tenant"}, {http.MethodPost, "/mcp/default"}} {
		path := r.path
		res, body := refused(r.method, path)
		if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" || !strings.Contains(body, `"rate_limited"`) || !strings.Contains(body, "try again in") {
			t.Errorf("%s: status %d, Retry-After %q, body %s; want 429 saying when to try again", path, res.StatusCode, res.Header.Get("Retry-After"), body)
		}
	}
	// A valid key, not verified before, is accepted from the client that ran out, and
	// its unknown keys are still refused after it.
	if res, body := send(http.MethodGet, "/api/tenant", attacker, key, nil); res.StatusCode != http.StatusOK {
		t.Errorf("a valid key from the client that ran out: status %d body %s", res.StatusCode, body)
	}
	if res, _ := refused(http.MethodGet, "/api/tenant"); res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("unknown keys after the valid one: status %d, want 429", res.StatusCode)
	}
	if res, body := send(http.MethodGet, "/api/tenant", other, key, nil); res.StatusCode != http.StatusOK {
		t.Errorf("another client's key: status %d body %s", res.StatusCode, body)
	}

	form := url.Values{"csrf": {strings.Repeat("f", 32)}, "tenant": {"default"}, "email": {"admin@localhost"}, "password": {"not the password"}}
	var got []int
	var last *http.Response
	var lastBody string
	for range 6 {
		last, lastBody = send(http.MethodPost, "/signin", attacker, "", form)
		got = append(got, last.StatusCode)
	}
	if fmt.Sprint(got) != fmt.Sprint([]int{401, 401, 401, 401, 401, 429}) {
		t.Errorf("six wrong passwords: statuses %v, want five 401 then 429", got)
	}
	// The first wait is 30 s from the fifth failure; a loaded machine may take a second
	// or more between that failure and the sixth attempt, so the wait left is 1-30 s,
	// and the page says the same number as the header.
	wait, err := strconv.Atoi(last.Header.Get("Retry-After"))
	inWords := fmt.Sprintf("%d seconds", wait)
	if wait == 1 {
		inWords = "1 second"
	}
	if err != nil || wait < 1 || wait > 30 || !strings.Contains(lastBody, "Too many failed sign-ins to this account; try again in "+inWords) {
		t.Errorf("throttled sign-in: Retry-After %q, page %s; want 1-30 s, said on the page too", last.Header.Get("Retry-After"), lastBody)
	}
}
