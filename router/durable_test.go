package router

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/limits"
)

// commitAudit is a recorder that can commit: it notes whether a call's row was
// committed, and fails commits when told to.
type commitAudit struct {
	memAudit
	fail      error
	mu        sync.Mutex
	committed []audit.Event
}

func (c *commitAudit) Commit(_ context.Context, e audit.Event) error {
	if c.fail != nil {
		return c.fail
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.committed = append(c.committed, e)
	return nil
}

// TestAnswerWaitsForTheCommittedRow: Execute returns a call's answer only once its
// audit row is committed, and withholds it (unavailable, with Retry-After) when the
// row cannot be.
func TestAnswerWaitsForTheCommittedRow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fail     error
		wantCode switchboard.Code
		wantRows int
	}{
		{name: "committed", wantRows: 1}, // a read: its row committed on its answer (a write's is on record before, TestRowInFlightBeforeTheRequestLeaves)
		{name: "commit failed", fail: errors.New("database is gone"), wantCode: switchboard.CodeUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			rec := &commitAudit{fail: tt.fail}
			f.router.audit = rec
			out, err := f.router.Execute(context.Background(), alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"a"}`)})
			if switchboard.CodeOf(err) != tt.wantCode {
				t.Fatalf("error = %v, want code %q", err, tt.wantCode)
			}
			if tt.fail != nil {
				if out != nil {
					t.Errorf("answer %v returned although its row was not committed", out)
				}
				if e := switchboard.AsError(err); e.RetryAfter <= 0 {
					t.Errorf("RetryAfter = %v, want retry advice", e.RetryAfter)
				}
			}
			if len(rec.committed) != tt.wantRows {
				t.Errorf("committed rows = %d, want %d", len(rec.committed), tt.wantRows)
			}
			if tt.wantRows == 1 && rec.committed[0].Outcome != "ok" {
				t.Errorf("committed %+v, want the read's row ok", rec.committed)
			}
			if len(rec.events) != 0 {
				t.Errorf("%d rows recorded without waiting for their commit", len(rec.events))
			}
		})
	}
}

// TestAdmissionRefusesBeyondCapacity: with the node's only place taken and no room to
// wait, a call is refused before it runs, with Retry-After, and counted.
func TestAdmissionRefusesBeyondCapacity(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var mu sync.Mutex
	refused := map[string]int{}
	adm := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 1, MaxWait: time.Millisecond, Refused: func(scope, reason string) {
		mu.Lock()
		defer mu.Unlock()
		refused[scope+"/"+reason]++
	}})
	f.router.admit = adm
	held, err := adm.Admit(context.Background(), "ten_other")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.router.Execute(context.Background(), alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"a"}`)})
	e := switchboard.AsError(err)
	if e.Code != switchboard.CodeUnavailable || e.RetryAfter != time.Second {
		t.Fatalf("error = %v (retry after %v), want unavailable with a 1 s Retry-After", err, e.RetryAfter)
	}
	select {
	case <-f.tokens:
		t.Error("a refused call reached the upstream")
	default:
	}
	if len(f.audit.events) != 0 {
		t.Errorf("a call refused before running left %d audit rows; it is counted instead", len(f.audit.events))
	}
	if refused["node/wait_exceeded"] != 1 {
		t.Errorf("refusals = %v, want one node/wait_exceeded", refused)
	}
	held.Release()
	if _, err := f.router.Execute(context.Background(), alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"a"}`)}); err != nil {
		t.Fatalf("after the place was freed: %v", err)
	}
	if n := adm.Running(); n != 0 {
		t.Errorf("places held after the call = %d, want 0", n)
	}
}
