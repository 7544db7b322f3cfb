package identity

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/redistest"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/limits"
)

// TestRegistrationRateLimit: dynamic client registration is limited per client
// address across the fleet. Two nodes share one Redis; behind a trusted proxy, one
// address takes the burst on node A and is refused on node B with 429, Retry-After
// and no client stored, while another address still registers.
func TestRegistrationRateLimit(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	db := testdb.SQLite(t)
	kr, err := keyring.NewLocalKeyring("k1", map[string][]byte{"k1": make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	sources, err := limits.NewSources([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	rate := limits.Rate{PerSecond: 1.0 / 3600, Burst: 3} // no token comes back while the test runs
	var nodes []string
	for range 2 {
		shared, err := limits.NewRedis(limits.RedisOptions{URL: srv.URL, Nodes: func() int { return 2 }, Timeout: 10 * time.Second, RetryAfter: time.Hour, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = shared.Close() })
		s := New(Options{DB: db, Keyring: kr, PublicURL: "https://hub.example.com", Logger: slog.New(slog.DiscardHandler), Registrations: shared, RegistrationRate: rate})
		h := httptest.NewServer(sources.Handler(http.HandlerFunc(s.Register)))
		t.Cleanup(func() { testwait.CloseServer(t, h) })
		nodes = append(nodes, h.URL)
	}
	register := func(node, client string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, node, strings.NewReader(`{"client_name":"Spam","redirect_uris":["http://127.0.0.1:9/cb"],"token_endpoint_auth_method":"none"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", client)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for i := range 3 {
		status, body := decodeJSON(t, register(nodes[i%2], "203.0.113.7"))
		if status != http.StatusCreated {
			t.Fatalf("registration %d within the burst: %d %v", i, status, body)
		}
	}
	var before int64
	db.Model(&client{}).Count(&before)
	res := register(nodes[1], "203.0.113.7")
	retry := res.Header.Get("Retry-After")
	status, body := decodeJSON(t, res)
	if status != http.StatusTooManyRequests {
		t.Fatalf("registration past the burst: %d %v, want 429", status, body)
	}
	if secs, err := strconv.Atoi(retry); err != nil || secs < 600 {
		t.Errorf("Retry-After %q, want the seconds until the next token (about 20 minutes)", retry)
	}
	if d, _ := body["error_description"].(string); !strings.Contains(d, "too many client registrations") {
		t.Errorf("error_description %q does not say why", d)
	}
	var after int64
	db.Model(&client{}).Count(&after)
	if after != before {
		t.Errorf("a refused registration stored a client: %d clients before, %d after", before, after)
	}
	if status, body := decodeJSON(t, register(nodes[1], "198.51.100.9")); status != http.StatusCreated {
		t.Errorf("another address's registration: %d %v, want 201", status, body)
	}
}

// TestRegistrationRateLimitDefault: without shared limits, a server limits its own
// registrations per peer address at the default rate.
func TestRegistrationRateLimitDefault(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	body := `{"client_name":"Spam","redirect_uris":["http://127.0.0.1:9/cb"],"token_endpoint_auth_method":"none"}`
	for i := range DefaultRegistrationRate.Burst {
		if status, m := r.register(body); status != http.StatusCreated {
			t.Fatalf("registration %d within the default burst: %d %v", i, status, m)
		}
	}
	res, err := http.Post(r.base+RegistrationPath, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	retry := res.Header.Get("Retry-After")
	if status, m := decodeJSON(t, res); status != http.StatusTooManyRequests || retry == "" {
		t.Errorf("registration past the default burst: %d (Retry-After %q) %v, want 429 with Retry-After", status, retry, m)
	}
}
