package limits_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/limits"
)

// admitted starts Admit in the background and returns where its slot (or error) goes.
func admitted(a *limits.Admission, tenant switchboard.TenantID) chan any {
	ch := make(chan any, 1)
	go func() {
		s, err := a.Admit(context.Background(), tenant)
		if err != nil {
			ch <- err
			return
		}
		ch <- s
	}()
	return ch
}

// waitFor waits until n calls wait for a place.
func waitFor(t *testing.T, a *limits.Admission, n int) {
	t.Helper()
	testwait.Until(t, fmt.Sprintf("%d calls waiting for a place", n), func() bool { return a.Waiting() == n })
}

func TestAdmissionRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		opts      limits.AdmissionOptions
		queued    int // calls of tenant a left waiting first
		wantCode  switchboard.Code
		wantCount string
	}{
		{name: "tenant queue full", opts: limits.AdmissionOptions{MaxInFlight: 1, TenantQueue: 2, MaxWait: time.Hour}, queued: 2,
			wantCode: switchboard.CodeRateLimited, wantCount: "tenant/queue_full"},
		{name: "node queue full", opts: limits.AdmissionOptions{MaxInFlight: 1, MaxQueue: 2, MaxWait: time.Hour}, queued: 2,
			wantCode: switchboard.CodeUnavailable, wantCount: "node/queue_full"},
		{name: "wait exceeded", opts: limits.AdmissionOptions{MaxInFlight: 1, MaxWait: time.Millisecond},
			wantCode: switchboard.CodeUnavailable, wantCount: "node/wait_exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			counts := make(chan string, 8)
			tt.opts.Refused = func(scope, reason string) { counts <- scope + "/" + reason }
			a := limits.NewAdmission(tt.opts)
			first, err := a.Admit(context.Background(), "ten_a")
			if err != nil {
				t.Fatal(err)
			}
			queued := make(chan any, tt.queued)
			for range tt.queued {
				go func() { queued <- <-admitted(a, "ten_a") }()
			}
			waitFor(t, a, tt.queued)
			_, err = a.Admit(context.Background(), "ten_a")
			var e *switchboard.Error
			if !errors.As(err, &e) || e.Code != tt.wantCode || e.RetryAfter != time.Second {
				t.Fatalf("error = %v, want %s with a 1 s Retry-After", err, tt.wantCode)
			}
			if got := testwait.Recv(t, counts, "the refusal to be counted"); got != tt.wantCount {
				t.Errorf("counted %q, want %q", got, tt.wantCount)
			}
			// The waiting calls still get their places, in turn.
			first.Release()
			for range tt.queued {
				s, ok := testwait.Recv(t, queued, "a waiting call to get its place").(*limits.Slot)
				if !ok {
					t.Fatal("a waiting call was refused")
				}
				s.Release()
			}
			if a.Running() != 0 || a.Waiting() != 0 {
				t.Errorf("running %d, waiting %d after every release", a.Running(), a.Waiting())
			}
		})
	}
}

// TestAdmissionServesTenantsInTurn: a tenant with one call waiting behind another
// tenant's many gets the next place, not the last.
func TestAdmissionServesTenantsInTurn(t *testing.T) {
	t.Parallel()
	a := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 1, MaxWait: time.Hour})
	s, err := a.Admit(context.Background(), "ten_busy")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	var busy []chan any
	for range 5 {
		busy = append(busy, admitted(a, "ten_busy"))
		waitFor(t, a, len(busy))
	}
	quiet := admitted(a, "ten_quiet")
	waitFor(t, a, 6)
	// Release places one at a time and note whose call got each.
	pending := map[string][]chan any{"busy": busy, "quiet": {quiet}}
	for range 6 {
		s.Release()
		s = nil
		testwait.Until(t, "a waiting call to get the released place", func() bool {
			for name, chs := range pending {
				if len(chs) == 0 {
					continue
				}
				select {
				case v := <-chs[0]:
					s = v.(*limits.Slot)
					order = append(order, name)
					pending[name] = chs[1:]
					return true
				default:
				}
			}
			return false
		})
	}
	s.Release()
	want := []string{"busy", "quiet", "busy", "busy", "busy", "busy"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("order of places (-want +got):\n%s", diff)
	}
}

// TestSlotPauseLetsOthersIn: a call waiting for its upstream gives its place to
// another, and takes one back ahead of new calls.
func TestSlotPauseLetsOthersIn(t *testing.T) {
	t.Parallel()
	a := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 1, MaxWait: time.Hour})
	s, err := a.Admit(context.Background(), "ten_a")
	if err != nil {
		t.Fatal(err)
	}
	s.Pause()
	other, err := a.Admit(context.Background(), "ten_b")
	if err != nil {
		t.Fatalf("a call was refused while the only place was paused: %v", err)
	}
	resumed := make(chan struct{})
	go func() { s.Resume(); close(resumed) }()
	waitFor(t, a, 1)
	late := admitted(a, "ten_c")
	waitFor(t, a, 2)
	other.Release()
	testwait.Recv(t, resumed, "the paused call to take a place back") // the resumed call comes first
	select {
	case <-late:
		t.Fatal("a new call took the place before the call back from its upstream")
	default:
	}
	s.Release()
	testwait.Recv(t, late, "the new call to get its place").(*limits.Slot).Release()
	if a.Running() != 0 {
		t.Errorf("running = %d after every release", a.Running())
	}
}
