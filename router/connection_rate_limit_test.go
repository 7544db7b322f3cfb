package router

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
)

// A connection an admin gave its own rate limit is held to it, not to its provider's
// (the fake provider has no bucket): its second call inside the limit is refused with
// rate_limited and the time to wait, without reaching the upstream, while another
// connection of the same provider is not limited.
func TestConnectionsOwnRateLimitApplies(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.conns.add(connections.Connection{ID: "con_a4", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "fake", AccountLabel: "limited",
		Status: connections.StatusActive, RatePerSecond: 0.01, RateBurst: 1}, "token-a4")
	call := func(conn string) error {
		_, err := f.router.Execute(context.Background(), alice, Request{Tool: "fake_greet", ConnectionID: conn, Args: json.RawMessage(`{"name":"ada"}`)})
		return err
	}
	if err := call("con_a4"); err != nil {
		t.Fatalf("first call: %v", err)
	}
	testwait.Recv(t, f.tokens, "the first call at the upstream")
	err := call("con_a4")
	if switchboard.CodeOf(err) != switchboard.CodeRateLimited {
		t.Fatalf("second call at once = %v, want rate_limited (one request a 100 s, burst 1)", err)
	}
	var ue *providers.UpstreamError
	if !asUpstream(err, &ue) || ue.RetryAfter.Seconds() < 90 || ue.RetryAfter.Seconds() > 100 {
		t.Errorf("refusal %v, want one saying retry after about 100 s (the connection's own rate)", err)
	}
	select {
	case <-f.tokens:
		t.Error("a call beyond the connection's own rate limit reached the upstream")
	default:
	}
	for range 3 {
		if err := call("con_a2"); err != nil {
			t.Fatalf("a call on a connection of the same provider without a limit of its own: %v", err)
		}
		testwait.Recv(t, f.tokens, "the call at the upstream")
	}
}
