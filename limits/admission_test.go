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
// another, and takes one back ahead of its tenant's new calls, even one that came first.
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
	late := slotReady(admitted(a, "ten_a"))
	waitFor(t, a, 1)
	resumed := make(chan struct{})
	go func() { s.Resume(); close(resumed) }()
	waitFor(t, a, 2)
	other.Release()
	if first := firstOf(t, map[string]<-chan struct{}{"resumed": resumed, "new": late}); first != "resumed" {
		t.Fatal("a new call of the tenant took the place before its call back from its upstream")
	}
	s.Release()
	testwait.Recv(t, late, "the new call to get its place")
	if a.Running() != 1 {
		t.Errorf("running = %d with one call admitted", a.Running())
	}
}

// TestResumesTakeTurnsWithOtherTenants: calls of one tenant coming back from their
// upstream all at once (a group commit's) go ahead of that tenant's new calls only;
// another tenant's new call gets the next turn, not the place after all of them.
func TestResumesTakeTurnsWithOtherTenants(t *testing.T) {
	t.Parallel()
	a := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 1, MaxWait: time.Hour})
	var paused []*limits.Slot
	for range 3 {
		s, err := a.Admit(context.Background(), "ten_busy")
		if err != nil {
			t.Fatal(err)
		}
		s.Pause()
		paused = append(paused, s)
	}
	holder, err := a.Admit(context.Background(), "ten_busy")
	if err != nil {
		t.Fatal(err)
	}
	resumed := make([]chan struct{}, len(paused))
	for i, s := range paused {
		resumed[i] = make(chan struct{})
		go func() { s.Resume(); close(resumed[i]) }()
		waitFor(t, a, i+1)
	}
	quiet := slotReady(admitted(a, "ten_quiet"))
	waitFor(t, a, len(paused)+1)

	holder.Release()
	// The busy tenant's turn: one of its resumed calls.
	if got := firstOf(t, map[string]<-chan struct{}{"busy0": resumed[0], "busy1": resumed[1], "busy2": resumed[2], "quiet": quiet}); got == "quiet" {
		t.Fatal("the quiet tenant went before the busy one, whose turn it was")
	}
	paused[0].Release()
	// The quiet tenant's turn, though two more busy calls are back from their upstream.
	if got := firstOf(t, map[string]<-chan struct{}{"busy1": resumed[1], "busy2": resumed[2], "quiet": quiet}); got != "quiet" {
		t.Fatalf("after one busy call, %s got the place; want the quiet tenant's call", got)
	}
}

// slotReady is closed when the admitted call's slot arrives (never, on a refusal).
func slotReady(ch chan any) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		if _, ok := (<-ch).(*limits.Slot); ok {
			close(done)
		}
	}()
	return done
}

// firstOf waits (bounded) for one of the named channels to be closed and names it.
func firstOf(t *testing.T, chs map[string]<-chan struct{}) string {
	t.Helper()
	first := ""
	testwait.Until(t, "one of the waiting calls to get a place", func() bool {
		for name, ch := range chs {
			select {
			case <-ch:
				first = name
				return true
			default:
			}
		}
		return false
	})
	return first
}

// TestAdmissionSharesABusyNode: alone, a tenant may queue calls behind its own; beside
// another tenant's calls, a call that would wait while its tenant holds or waits for
// its share of the places is refused at once (429 with Retry-After), and the other
// tenant's call gets the next place.
func TestAdmissionSharesABusyNode(t *testing.T) {
	t.Parallel()
	counts := make(chan string, 8)
	a := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 2, MaxWait: time.Hour, Refused: func(scope, reason string) { counts <- scope + "/" + reason }})
	var noisy []*limits.Slot
	for range 2 {
		s, err := a.Admit(context.Background(), "ten_noisy")
		if err != nil {
			t.Fatal(err)
		}
		noisy = append(noisy, s)
	}
	// Alone on the node, its third call waits.
	ctx, cancel := context.WithCancel(context.Background())
	alone := make(chan error, 1)
	go func() { _, err := a.Admit(ctx, "ten_noisy"); alone <- err }()
	waitFor(t, a, 1)
	cancel()
	if err := testwait.Recv(t, alone, "the waiting call to end"); !errors.Is(err, context.Canceled) {
		t.Fatalf("the noisy tenant's call alone: %v, want it to wait until canceled", err)
	}
	waitFor(t, a, 0)

	quiet := slotReady(admitted(a, "ten_quiet"))
	waitFor(t, a, 1)
	_, err := a.Admit(context.Background(), "ten_noisy")
	var e *switchboard.Error
	if !errors.As(err, &e) || e.Code != switchboard.CodeRateLimited || e.RetryAfter != time.Second {
		t.Fatalf("the noisy tenant's call beside the quiet one: %v, want rate_limited with a 1 s Retry-After", err)
	}
	if got := testwait.Recv(t, counts, "the refusal to be counted"); got != "tenant/over_share" {
		t.Errorf("counted %q, want tenant/over_share", got)
	}
	noisy[0].Release()
	testwait.Recv(t, quiet, "the quiet tenant's call to get the place")
	noisy[1].Release()
}

// TestAdmissionServesTheLightestTenantFirst: a freed place goes to the waiting tenant
// holding the fewest places, even when it is another's turn, so a tenant with one call
// does not wait behind a neighbour that already holds the rest of the node.
func TestAdmissionServesTheLightestTenantFirst(t *testing.T) {
	t.Parallel()
	a := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 3, MaxWait: time.Hour})
	var noisy []*limits.Slot
	for range 3 {
		s, err := a.Admit(context.Background(), "ten_noisy")
		if err != nil {
			t.Fatal(err)
		}
		noisy = append(noisy, s)
	}
	next := slotReady(admitted(a, "ten_noisy")) // waiting first, alone on the node
	waitFor(t, a, 1)
	quiet := slotReady(admitted(a, "ten_quiet"))
	waitFor(t, a, 2)

	noisy[0].Release() // the noisy tenant still holds two places, the quiet one none
	if got := firstOf(t, map[string]<-chan struct{}{"noisy": next, "quiet": quiet}); got != "quiet" {
		t.Fatalf("the freed place went to the %s tenant; want the quiet one, holding none", got)
	}
	noisy[1].Release()
	testwait.Recv(t, next, "the noisy tenant's waiting call to get the next place")
}

// TestAdmissionQueuesALighterTenantOverItsShare: beside a tenant flooding the node, a
// burst of another tenant's calls over its share waits its turn as long as the flooding
// tenant holds or waits for as many places or more; the flooding tenant's next call,
// heavier than the other's, is refused.
func TestAdmissionQueuesALighterTenantOverItsShare(t *testing.T) {
	t.Parallel()
	counts := make(chan string, 8)
	a := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 2, MaxWait: time.Hour, Refused: func(scope, reason string) { counts <- scope + "/" + reason }})
	var noisy []*limits.Slot
	for range 2 {
		s, err := a.Admit(context.Background(), "ten_noisy")
		if err != nil {
			t.Fatal(err)
		}
		noisy = append(noisy, s)
	}
	// Alone, the noisy tenant queues three more calls: it holds or waits for five.
	var noisyWaiting []<-chan struct{}
	for i := range 3 {
		noisyWaiting = append(noisyWaiting, releasedOnce(admitted(a, "ten_noisy")))
		waitFor(t, a, i+1)
	}
	// Two busy tenants, a share of two each: the quiet tenant's burst of three waits.
	var quiet []<-chan struct{}
	for i := range 3 {
		ch := admitted(a, "ten_quiet")
		waitFor(t, a, 4+i)
		quiet = append(quiet, releasedOnce(ch))
	}
	_, err := a.Admit(context.Background(), "ten_noisy")
	var e *switchboard.Error
	if !errors.As(err, &e) || e.Code != switchboard.CodeRateLimited {
		t.Fatalf("the noisy tenant's next call: %v, want rate_limited", err)
	}
	if got := testwait.Recv(t, counts, "the refusal to be counted"); got != "tenant/over_share" {
		t.Errorf("counted %q, want tenant/over_share", got)
	}
	// Three more quiet calls, the last one holding or waiting for as many as the noisy
	// tenant: no heavier than its neighbour, the quiet tenant still waits its turn.
	for i := range 3 {
		ch := admitted(a, "ten_quiet")
		waitFor(t, a, 7+i)
		quiet = append(quiet, releasedOnce(ch))
	}
	select {
	case got := <-counts:
		t.Errorf("a quiet call was refused (%s); want the quiet tenant's burst to wait", got)
	default:
	}
	// Every waiting call gets its place as places free.
	for _, s := range noisy {
		s.Release()
	}
	for i, ch := range quiet {
		testwait.Recv(t, ch, fmt.Sprintf("quiet call %d to get a place", i))
	}
	for i, ch := range noisyWaiting {
		testwait.Recv(t, ch, fmt.Sprintf("waiting noisy call %d to get a place", i))
	}
}

// releasedOnce is closed once the admitted call has its slot, which it then releases
// (never closed on a refusal).
func releasedOnce(ch chan any) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		if s, ok := (<-ch).(*limits.Slot); ok {
			s.Release()
			close(done)
		}
	}()
	return done
}

// TestAdmissionBoundsCallsUnderWay: paused calls (waiting for their upstream or their
// audit commit) leave their places to others, but no more than MaxAdmitted calls are
// under way at once: a new call beyond it waits, though places are free, until one
// ends; a paused call still resumes; releasing a slot twice counts once.
func TestAdmissionBoundsCallsUnderWay(t *testing.T) {
	t.Parallel()
	a := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 2, MaxAdmitted: 2, MaxWait: time.Hour})
	var under []*limits.Slot
	for range 2 {
		s, err := a.Admit(context.Background(), "ten_a")
		if err != nil {
			t.Fatal(err)
		}
		s.Pause()
		under = append(under, s)
	}
	if a.Running() != 0 {
		t.Fatalf("running = %d with both calls paused", a.Running())
	}
	third := slotReady(admitted(a, "ten_b"))
	waitFor(t, a, 1)
	resumed := make(chan struct{})
	go func() { under[0].Resume(); close(resumed) }()
	testwait.Recv(t, resumed, "a paused call to resume while new calls wait")
	select {
	case <-third:
		t.Fatal("a third call got a place while two calls were under way, MaxAdmitted 2")
	default:
	}
	under[0].Release()
	under[0].Release()
	testwait.Recv(t, third, "the new call to get a place once a call ended")
	// One call ended (released twice), one paused, one new: a fourth waits.
	fourth := slotReady(admitted(a, "ten_b"))
	waitFor(t, a, 1)
	under[1].Release()
	testwait.Recv(t, fourth, "the fourth call to get a place once the paused one ended")
}

// TestAdmissionCountsPausedCallsInTheShare: a tenant whose calls wait for their
// upstream holds few places but many calls under way; beside it, another tenant's
// burst that waits for places is not refused as over its share, since the first is the
// heavier one.
func TestAdmissionCountsPausedCallsInTheShare(t *testing.T) {
	t.Parallel()
	counts := make(chan string, 8)
	a := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 2, MaxWait: time.Hour, Refused: func(scope, reason string) { counts <- scope + "/" + reason }})
	var noisy []*limits.Slot
	for i := range 4 {
		s, err := a.Admit(context.Background(), "ten_noisy")
		if err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			s.Pause() // waiting for its upstream
		}
		noisy = append(noisy, s)
	}
	var quiet []<-chan struct{}
	for i := range 4 {
		ch := admitted(a, "ten_quiet")
		waitFor(t, a, i+1)
		quiet = append(quiet, releasedOnce(ch))
	}
	select {
	case got := <-counts:
		t.Fatalf("a quiet call was refused (%s) beside a tenant with four calls under way; want it to wait its turn", got)
	default:
	}
	noisy[2].Release()
	noisy[3].Release()
	for i, ch := range quiet {
		testwait.Recv(t, ch, fmt.Sprintf("quiet call %d to get a place", i))
	}
	noisy[0].Release()
	noisy[1].Release()
}
