package router

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
)

// TestRowInFlightBeforeTheRequestLeaves: when a call's upstream request arrives, its
// audit row is already on record, in flight and naming the node that sent it; the
// answer completes that same row.
func TestRowInFlightBeforeTheRequestLeaves(t *testing.T) {
	t.Parallel()
	var seen []audit.Event
	var mu sync.Mutex
	var rec *memAudit
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rows := append([]audit.Event(nil), rec.events...)
		rec.mu.Unlock()
		mu.Lock()
		seen = rows
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(ticketOut{ID: 7})
	}))
	t.Cleanup(up.Close)
	r, rec, _ := deskRouter(t, up.URL, providers.Deadlines{}, providers.Deadlines{})
	r.node = "node-a"
	ref := &AuditRef{}
	if _, err := r.Execute(WithAuditRef(context.Background(), ref), alice, Request{Tool: "desk_file_ticket", ConnectionID: "con_a1", Args: json.RawMessage(`{"title":"t"}`)}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0].ID != ref.ID || seen[0].Outcome != audit.OutcomeInFlight || seen[0].Node != "node-a" || seen[0].Tool != "desk_file_ticket" {
		t.Fatalf("rows when the request arrived: %+v, want the call's row %s in flight from node-a", seen, ref.ID)
	}
	row, ok := rec.row(ref.ID)
	if !ok || row.Outcome != "ok" || row.UpstreamStatus != http.StatusOK {
		t.Errorf("the row after the answer: %+v, want it completed ok with the upstream's 200", row)
	}
	if len(rec.events) != 1 {
		t.Errorf("%d rows, want the call's one", len(rec.events))
	}
}

// TestReadRowWrittenOnItsAnswer: a read, which changes nothing, does not pay a commit
// before its request leaves: its one row is written on its answer.
func TestReadRowWrittenOnItsAnswer(t *testing.T) {
	t.Parallel()
	var seen []audit.Event
	var mu sync.Mutex
	var rec *memAudit
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rows := append([]audit.Event(nil), rec.events...)
		rec.mu.Unlock()
		mu.Lock()
		seen = rows
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(ticketOut{ID: 7})
	}))
	t.Cleanup(up.Close)
	r, rec, _ := deskRouter(t, up.URL, providers.Deadlines{}, providers.Deadlines{})
	ref := &AuditRef{}
	if _, err := r.Execute(WithAuditRef(context.Background(), ref), alice, Request{Tool: "desk_read_ticket", ConnectionID: "con_a1", Args: json.RawMessage(`{"title":"t"}`)}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 0 {
		t.Errorf("rows when the read's request arrived: %+v, want none yet", seen)
	}
	if row, ok := rec.row(ref.ID); !ok || row.Outcome != "ok" || len(rec.events) != 1 {
		t.Errorf("the read's row after its answer: %+v (%d rows), want its one row ok", row, len(rec.events))
	}
}

// TestRowNotOnRecordNothingSent: a call whose row in flight cannot be committed is
// refused with Retry-After, and its upstream never asked.
func TestRowNotOnRecordNothingSent(t *testing.T) {
	t.Parallel()
	up := newDeskUpstream(t, "ok")
	r, _, _ := deskRouter(t, up.URL, providers.Deadlines{}, providers.Deadlines{})
	r.audit = &commitAudit{fail: context.DeadlineExceeded}
	_, err := r.Execute(context.Background(), alice, Request{Tool: "desk_file_ticket", ConnectionID: "con_a1", Args: json.RawMessage(`{"title":"t"}`)})
	if e := switchboard.AsError(err); e.Code != switchboard.CodeUnavailable || e.RetryAfter <= 0 || !strings.Contains(e.Message, "nothing was sent") {
		t.Fatalf("error = %v, want unavailable with Retry-After, saying nothing was sent", err)
	}
	if got := up.requests(); len(got) != 0 {
		t.Errorf("upstream got %q, want nothing", got)
	}
}

// TestCutCallsAreAnswered: calls still under way when the drain ends are stopped and
// answered: a write that was sent says its outcome is unknown (and its row says so), a
// read says retry.
func TestCutCallsAreAnswered(t *testing.T) {
	t.Parallel()
	up := newDeskUpstream(t, "hang")
	r, rec, _ := deskRouter(t, up.URL, providers.Deadlines{}, providers.Deadlines{})
	type result struct {
		ref *AuditRef
		err error
	}
	call := func(tool string) <-chan result {
		ch := make(chan result, 1)
		go func() {
			ref := &AuditRef{}
			_, err := r.Execute(WithAuditRef(context.Background(), ref), alice, Request{Tool: tool, ConnectionID: "con_a1", Args: json.RawMessage(`{"title":"t"}`)})
			ch <- result{ref, err}
		}()
		return ch
	}
	write, read := call("desk_file_ticket"), call("desk_read_ticket")
	testwait.Until(t, "both requests to reach the upstream", func() bool { return len(up.requests()) == 2 })
	r.Cut()
	w := testwait.Recv(t, write, "the cut write's answer")
	if e := switchboard.AsError(w.err); e.Code != switchboard.CodeOutcomeUnknown || !strings.Contains(e.Message, "shut down while the call was under way") {
		t.Errorf("the cut write: %v, want outcome_unknown saying the server shut down", w.err)
	}
	if row, _ := rec.row(w.ref.ID); row.Outcome != audit.OutcomeUnknown {
		t.Errorf("the cut write's row: %+v, want outcome_unknown", row)
	}
	rd := testwait.Recv(t, read, "the cut read's answer")
	if e := switchboard.AsError(rd.err); e.Code != switchboard.CodeUnavailable || e.RetryAfter <= 0 {
		t.Errorf("the cut read: %v, want unavailable with Retry-After", rd.err)
	}
	if _, err := r.Execute(context.Background(), alice, Request{Tool: "desk_read_ticket", ConnectionID: "con_a1", Args: json.RawMessage(`{"title":"t"}`)}); switchboard.CodeOf(err) != switchboard.CodeUnavailable {
		t.Errorf("a call after the cut: %v, want it refused", err)
	}
}
