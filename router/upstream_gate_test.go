package router

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/providers"
)

// TestSlowUpstreamKeepsOnlyItsOwnCalls: with every call the node admits waiting for
// an upstream that does not answer (MaxAdmitted of them), a call to another upstream
// is still admitted, once they have waited UpstreamSlow, and answered; one more call
// to the slow upstream, beyond UpstreamAdmitted, is refused at once with Retry-After,
// having sent nothing, and counted.
func TestSlowUpstreamKeepsOnlyItsOwnCalls(t *testing.T) {
	t.Parallel()
	slow, fast := newDeskUpstream(t, "hang"), newDeskUpstream(t, "ok")
	reg := providers.NewRegistry()
	other := deskProvider(providers.Deadlines{})
	other.Name, other.Title = "desk2", "Desk 2"
	for _, spec := range []providers.Spec{deskProvider(providers.Deadlines{}), other} {
		if err := reg.Register(spec); err != nil {
			t.Fatal(err)
		}
	}
	_ = reg.SetBaseURL("desk", slow.URL)
	_ = reg.SetBaseURL("desk2", fast.URL)
	conns := &memConns{conns: map[string]connections.Connection{}, creds: map[string]connections.Credentials{}}
	conns.add(connections.Connection{ID: "con_slow", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "desk", AccountLabel: "desk", Status: connections.StatusActive}, "token")
	conns.add(connections.Connection{ID: "con_fast", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "desk2", AccountLabel: "desk2", Status: connections.StatusActive}, "token")
	var mu sync.Mutex
	refused := map[string]int{}
	adm := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 1, MaxAdmitted: 2, UpstreamSlow: 50 * time.Millisecond, MaxWait: 5 * time.Second,
		Refused: func(scope, reason string) {
			mu.Lock()
			defer mu.Unlock()
			refused[scope+"/"+reason]++
		}})
	r := New(Options{Registry: reg, Connections: conns, Audit: &memAudit{}, Admission: adm})
	call := func(ctx context.Context, tool, conn string) (any, error) {
		return r.Execute(ctx, alice, Request{Tool: tool, ConnectionID: conn, Args: json.RawMessage(`{"title":"printer on fire"}`)})
	}

	ctx, cancel := context.WithCancel(context.Background())
	var hanging sync.WaitGroup
	for range 2 {
		hanging.Go(func() { _, _ = call(ctx, "desk_read_ticket", "con_slow") })
	}
	defer func() { cancel(); hanging.Wait() }()
	testwait.Until(t, "two calls at the slow upstream", func() bool { return len(slow.requests()) == 2 })

	out, err := call(context.Background(), "desk2_read_ticket", "con_fast")
	if err != nil {
		t.Fatalf("a call to another upstream, beside %d calls waiting for a slow one: %v", 2, err)
	}
	if got, ok := out.(ticketOut); !ok || got.ID != 7 {
		t.Errorf("answer = %#v, want ticket 7", out)
	}

	_, err = call(context.Background(), "desk_read_ticket", "con_slow")
	e := switchboard.AsError(err)
	host := strings.TrimPrefix(slow.URL, "http://")
	if e.Code != switchboard.CodeUnavailable || e.RetryAfter != time.Second || !strings.Contains(e.Message, host) || !strings.Contains(e.Message, "nothing was sent") {
		t.Fatalf("a third call to the slow upstream: %v (retry after %v), want unavailable naming %s, saying nothing was sent, with a 1 s Retry-After", err, e.RetryAfter, host)
	}
	if n := len(slow.requests()); n != 2 {
		t.Errorf("the slow upstream got %d requests, want 2: the refused call sent nothing", n)
	}
	mu.Lock()
	if refused["upstream/slow"] != 1 || len(refused) != 1 {
		t.Errorf("refusals = %v, want one upstream/slow", refused)
	}
	mu.Unlock()
	cancel()
	hanging.Wait()
	if n := adm.Running(); n != 0 {
		t.Errorf("places held after every call ended = %d, want 0", n)
	}
}
