package limits_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/limits"
)

// admit admits one call of the tenant, which must not wait.
func admit(t *testing.T, a *limits.Admission, tenant switchboard.TenantID) *limits.Slot {
	t.Helper()
	s, err := a.Admit(context.Background(), tenant)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// goAway starts s.Away in the background and returns where its error goes.
func goAway(ctx context.Context, s *limits.Slot, upstream string) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- s.Away(ctx, upstream) }()
	return ch
}

// waitAway waits until upstream has away calls away at it and waiting calls waiting to go.
func waitAway(t *testing.T, a *limits.Admission, upstream string, away, waiting int) {
	t.Helper()
	testwait.Until(t, "the calls at "+upstream, func() bool {
		x, w := limits.AwayAt(a, upstream)
		return x == away && w == waiting
	})
}

// TestSlowUpstreamGivesItsRoomBack: calls waiting for their upstream's answer keep
// their room among MaxAdmitted, so a new call waits at the door, until they have
// waited UpstreamSlow: then it comes in, though they are still away. While the
// upstream is slow, a call to it beyond UpstreamAdmitted is refused at once, having
// sent nothing; a call to another upstream goes.
func TestSlowUpstreamGivesItsRoomBack(t *testing.T) {
	t.Parallel()
	clk := newClock()
	counts := make(chan string, 8)
	a := limits.NewAdmissionWithClock(limits.AdmissionOptions{MaxInFlight: 2, MaxAdmitted: 2, UpstreamSlow: 20 * time.Millisecond, MaxWait: time.Hour,
		Refused: func(scope, reason string) { counts <- scope + "/" + reason }}, clk.Now)
	var slow []*limits.Slot
	for range 2 {
		s := admit(t, a, "ten_a")
		if err := s.Away(context.Background(), "slow.example"); err != nil {
			t.Fatal(err)
		}
		slow = append(slow, s)
	}
	if a.Running() != 0 {
		t.Fatalf("running = %d with both calls away", a.Running())
	}
	other := admitted(a, "ten_b")
	waitFor(t, a, 1)
	select {
	case <-other:
		t.Fatal("a call came in while two calls away for less than UpstreamSlow filled MaxAdmitted 2")
	default:
	}
	clk.advance(20 * time.Millisecond)
	s, ok := testwait.Recv(t, other, "the waiting call to come in once the calls away turned slow").(*limits.Slot)
	if !ok {
		t.Fatal("the waiting call was refused")
	}
	err := s.Away(context.Background(), "slow.example")
	var e *switchboard.Error
	if !errors.As(err, &e) || e.Code != switchboard.CodeUnavailable || e.RetryAfter != time.Second ||
		!strings.Contains(e.Message, "slow.example") || !strings.Contains(e.Message, "nothing was sent") {
		t.Fatalf("a third call to the slow upstream: %v, want unavailable naming slow.example, saying nothing was sent, with a 1 s Retry-After", err)
	}
	if got := testwait.Recv(t, counts, "the refusal to be counted"); got != "upstream/slow" {
		t.Errorf("counted %q, want upstream/slow", got)
	}
	if err := s.Away(context.Background(), "fast.example"); err != nil {
		t.Fatalf("a call to another upstream: %v", err)
	}
	s.Resume()
	s.Release()
	for _, s := range slow {
		s.Resume()
		s.Release()
	}
	if away, waiting := limits.AwayAt(a, "slow.example"); away+waiting != 0 {
		t.Errorf("slow.example: %d away, %d waiting after every call ended", away, waiting)
	}
	// Every call ended: the bound is whole again, two calls come in and a third waits.
	admit(t, a, "ten_a")
	admit(t, a, "ten_a")
	third := admitted(a, "ten_a")
	waitFor(t, a, 1)
	select {
	case <-third:
		t.Fatal("a third call came in with two under way, MaxAdmitted 2")
	default:
	}
}

// TestUpstreamAdmittedBoundsCallsAtAnUpstream: an upstream has UpstreamAdmitted calls
// away at it; one more waits for one of them to come back, and gets its turn when it
// does; one more again, with as many waiting, is refused at once, unavailable with a
// Retry-After and saying nothing was sent, counted, and its slot held as before.
func TestUpstreamAdmittedBoundsCallsAtAnUpstream(t *testing.T) {
	t.Parallel()
	counts := make(chan string, 8)
	a := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 4, UpstreamAdmitted: 1, UpstreamSlow: time.Hour, MaxWait: time.Hour,
		Refused: func(scope, reason string) { counts <- scope + "/" + reason }})
	first, second, third := admit(t, a, "ten_a"), admit(t, a, "ten_a"), admit(t, a, "ten_b")
	if err := first.Away(context.Background(), "slow.example"); err != nil {
		t.Fatal(err)
	}
	waiting := goAway(context.Background(), second, "slow.example")
	waitAway(t, a, "slow.example", 1, 1)
	if a.Running() != 1 {
		t.Errorf("running = %d, want 1: a call waiting to go holds no place", a.Running())
	}
	err := third.Away(context.Background(), "slow.example")
	var e *switchboard.Error
	if !errors.As(err, &e) || e.Code != switchboard.CodeUnavailable || e.RetryAfter != time.Second ||
		!strings.Contains(e.Message, "slow.example") || !strings.Contains(e.Message, "as many more wait to go; nothing was sent") {
		t.Fatalf("error = %v, want unavailable naming slow.example, saying as many more wait and nothing was sent, with a 1 s Retry-After", err)
	}
	if got := testwait.Recv(t, counts, "the refusal to be counted"); got != "upstream/queue_full" {
		t.Errorf("counted %q, want upstream/queue_full", got)
	}
	if a.Running() != 1 {
		t.Errorf("running = %d, want 1: the refused call still holds its place", a.Running())
	}
	// Another upstream is not bound by this one's calls.
	if err := third.Away(context.Background(), "fast.example"); err != nil {
		t.Errorf("a call to another upstream: %v", err)
	}
	third.Resume()
	third.Release()
	first.Resume()
	if err := testwait.Recv(t, waiting, "the waiting call to go once the first came back"); err != nil {
		t.Fatal(err)
	}
	waitAway(t, a, "slow.example", 1, 0)
	first.Release()
	second.Resume()
	second.Release()
	waitAway(t, a, "slow.example", 0, 0)
	if a.Running() != 0 {
		t.Errorf("running = %d after every call ended", a.Running())
	}
}

// TestUpstreamWaitEnds: a call waiting to go to an upstream is refused after MaxWait
// (wait_exceeded), or ends with its context; either way its slot is held again, and
// its turn is no one's.
func TestUpstreamWaitEnds(t *testing.T) {
	t.Parallel()
	counts := make(chan string, 8)
	a := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 4, UpstreamAdmitted: 1, UpstreamSlow: time.Hour, MaxWait: 20 * time.Millisecond,
		Refused: func(scope, reason string) { counts <- scope + "/" + reason }})
	first, second := admit(t, a, "ten_a"), admit(t, a, "ten_a")
	if err := first.Away(context.Background(), "slow.example"); err != nil {
		t.Fatal(err)
	}
	err := second.Away(context.Background(), "slow.example")
	if switchboard.CodeOf(err) != switchboard.CodeUnavailable || !strings.Contains(err.Error(), "none came back in time") {
		t.Fatalf("error = %v, want unavailable, none came back in time", err)
	}
	if got := testwait.Recv(t, counts, "the refusal to be counted"); got != "upstream/wait_exceeded" {
		t.Errorf("counted %q, want upstream/wait_exceeded", got)
	}
	waitAway(t, a, "slow.example", 1, 0)
	if a.Running() != 1 {
		t.Errorf("running = %d, want 1: the refused call holds its place again", a.Running())
	}

	b := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 4, UpstreamAdmitted: 1, UpstreamSlow: time.Hour, MaxWait: time.Hour})
	first, second = admit(t, b, "ten_a"), admit(t, b, "ten_a")
	if err := first.Away(context.Background(), "slow.example"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ended := goAway(ctx, second, "slow.example")
	waitAway(t, b, "slow.example", 1, 1)
	cancel()
	if err := testwait.Recv(t, ended, "the wait to end with its context"); !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	waitAway(t, b, "slow.example", 1, 0)
	second.Release()
	first.Resume()
	first.Release()
	waitAway(t, b, "slow.example", 0, 0)
	if b.Running() != 0 {
		t.Errorf("running = %d after every call ended", b.Running())
	}
}

// TestReleaseWhileAway: a call released while away at its upstream (its request
// ended) gives its turn at the upstream on.
func TestReleaseWhileAway(t *testing.T) {
	t.Parallel()
	a := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 4, UpstreamAdmitted: 1, UpstreamSlow: time.Hour, MaxWait: time.Hour})
	first, second := admit(t, a, "ten_a"), admit(t, a, "ten_a")
	if err := first.Away(context.Background(), "slow.example"); err != nil {
		t.Fatal(err)
	}
	waiting := goAway(context.Background(), second, "slow.example")
	waitAway(t, a, "slow.example", 1, 1)
	first.Release()
	if err := testwait.Recv(t, waiting, "the waiting call to go once the first was released"); err != nil {
		t.Fatal(err)
	}
	second.Resume()
	second.Release()
	waitAway(t, a, "slow.example", 0, 0)
}

// TestAdmissionStates: each call under way is counted in the one state it is in.
func TestAdmissionStates(t *testing.T) {
	t.Parallel()
	clk := newClock()
	a := limits.NewAdmissionWithClock(limits.AdmissionOptions{MaxInFlight: 2, MaxAdmitted: 16, UpstreamAdmitted: 1, UpstreamSlow: time.Second, MaxWait: time.Hour}, clk.Now)
	slow := admit(t, a, "ten_a")
	if err := slow.Away(context.Background(), "a.example"); err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Second)
	young := admit(t, a, "ten_a")
	if err := young.Away(context.Background(), "b.example"); err != nil {
		t.Fatal(err)
	}
	queued := admit(t, a, "ten_b")
	goAway(context.Background(), queued, "b.example")
	waitAway(t, a, "b.example", 1, 1)
	committing := admit(t, a, "ten_b")
	committing.Pause()
	back := admit(t, a, "ten_b")
	back.Pause()
	admit(t, a, "ten_c")
	admit(t, a, "ten_c") // both places held
	go back.Resume()
	waitFor(t, a, 1)
	admitted(a, "ten_c")
	waitFor(t, a, 2)
	want := map[string]int{"running": 2, "waiting": 1, "resuming": 1, "audit_commit": 1, "upstream": 1, "upstream_slow": 1, "upstream_queued": 1}
	if diff := cmp.Diff(want, a.States()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
}
