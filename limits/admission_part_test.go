package limits_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/limits"
)

// partAdmission is an Admission on a test clock whose refusals are counted into
// counts, with places enough (MaxInFlight 2, and every call here pauses at once) that
// only the parts of the calls under way refuse anything.
func partAdmission(part int, counts chan string) (*limits.Admission, *clock) {
	c := newClock()
	return limits.NewAdmissionWithClock(limits.AdmissionOptions{MaxInFlight: 2, MaxAdmitted: 64, TenantAdmitted: part, MaxWait: time.Hour,
		Refused: func(scope, reason string) { counts <- scope + "/" + reason }}, c.Now), c
}

// contend makes one call of the tenant wait for a place (it goes away at once), as
// calls do while the node's places are all taken: the parts apply for a second after.
func contend(t *testing.T, a *limits.Admission, tenant switchboard.TenantID, places int) {
	t.Helper()
	var held []*limits.Slot
	for range places {
		s, err := a.Admit(context.Background(), tenant)
		if err != nil {
			t.Fatalf("a call of %s was refused: %v", tenant, err)
		}
		held = append(held, s)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Admit(gone, tenant); !errors.Is(err, context.Canceled) {
		t.Fatalf("a call made to wait: %v", err)
	}
	for _, s := range held {
		s.Release()
	}
}

// releaseAll releases every slot, and checks that no call is then left running,
// waiting or away at an upstream.
func releaseAll(t *testing.T, a *limits.Admission, slots ...*limits.Slot) {
	t.Helper()
	for _, s := range slots {
		s.Release()
	}
	if a.Running() != 0 || a.Waiting() != 0 {
		t.Errorf("running %d, waiting %d after every release", a.Running(), a.Waiting())
	}
	if st := a.States(); st["upstream"]+st["upstream_slow"]+st["upstream_queued"] != 0 {
		t.Errorf("states after every release: %v", st)
	}
}

// goneAway admits n calls of the tenant and sends each away to its upstream, as calls
// waiting for GitHub's answer are.
func goneAway(t *testing.T, a *limits.Admission, tenant switchboard.TenantID, n int) []*limits.Slot {
	t.Helper()
	var away []*limits.Slot
	for range n {
		s, err := a.Admit(context.Background(), tenant)
		if err != nil {
			t.Fatalf("a call of %s was refused: %v", tenant, err)
		}
		if err := s.Away(context.Background(), "api.github.com"); err != nil {
			t.Fatalf("a call of %s could not go to its upstream: %v", tenant, err)
		}
		away = append(away, s)
	}
	return away
}

// underWay admits a call of the tenant and pauses it, as a call waiting for its
// upstream is: it holds no place but is under way.
func underWay(t *testing.T, a *limits.Admission, tenant switchboard.TenantID) *limits.Slot {
	t.Helper()
	s, err := a.Admit(context.Background(), tenant)
	if err != nil {
		t.Fatalf("a call of %s was refused: %v", tenant, err)
	}
	s.Pause()
	return s
}

// TestAdmissionHoldsATenantToItsPartBesideAnother: alone, a tenant may have more
// calls under way than its part; while another tenant is active (asked for a place
// within the last second), a new call of a tenant over its part and heavier than the
// other is refused at once, rate_limited with Retry-After, though places are free,
// rather than queued; the other tenant's calls are still admitted; a second after the
// other's last call, the tenant is alone again.
func TestAdmissionHoldsATenantToItsPartBesideAnother(t *testing.T) {
	t.Parallel()
	counts := make(chan string, 16)
	a, c := partAdmission(3, counts)
	contend(t, a, "ten_noisy", 2)
	var noisy []*limits.Slot
	for range 5 {
		noisy = append(noisy, underWay(t, a, "ten_noisy")) // alone: past its part
	}
	quiet := underWay(t, a, "ten_quiet")
	refused := func(when string) {
		t.Helper()
		_, err := a.Admit(context.Background(), "ten_noisy")
		var e *switchboard.Error
		if !errors.As(err, &e) || e.Code != switchboard.CodeRateLimited || e.RetryAfter != time.Second ||
			!strings.Contains(e.Message, "part of this server's tool calls under way") || !strings.HasSuffix(e.Message, "nothing was run; retry in 1 s") {
			t.Fatalf("%s, the noisy tenant's next call: %v; want it refused as over its part, rate_limited, retry in 1 s", when, err)
		}
		select {
		case got := <-counts:
			if got != "tenant/over_part" {
				t.Errorf("counted %q, want tenant/over_part", got)
			}
		default:
			t.Error("the refusal was not counted")
		}
	}
	refused("beside a quiet call under way")
	if a.Waiting() != 0 {
		t.Errorf("%d calls wait; a call over its part is refused, not queued", a.Waiting())
	}
	// The quiet tenant is not held back by its neighbour's calls.
	quiet2 := underWay(t, a, "ten_quiet")
	quiet.Release()
	quiet2.Release()
	c.advance(900 * time.Millisecond)
	refused("0.9 s after the quiet tenant's last call")
	c.advance(200 * time.Millisecond)
	noisy = append(noisy, underWay(t, a, "ten_noisy")) // 1.1 s after: alone again
	select {
	case got := <-counts:
		t.Errorf("a call was refused (%s) with its tenant alone on the node", got)
	default:
	}
	releaseAll(t, a, noisy...)
}

// TestAdmissionLetsTenantsAsHeavyShareTheNode: tenants flooding alike are not held to
// their parts (each would cap the other at a few dozen calls under way, which a slow
// upstream needs more of): a tenant over its part is admitted while another active
// tenant has as many calls under way, and a third active tenant with none changes
// nothing.
func TestAdmissionLetsTenantsAsHeavyShareTheNode(t *testing.T) {
	t.Parallel()
	counts := make(chan string, 16)
	a, _ := partAdmission(2, counts)
	contend(t, a, "ten_light", 2) // active, with nothing under way
	underWay(t, a, "ten_light").Release()
	var slotsA, slotsB []*limits.Slot
	for i := range 6 {
		slotsA = append(slotsA, underWay(t, a, "ten_a"))
		slotsB = append(slotsB, underWay(t, a, "ten_b"))
		if n := len(counts); n > 0 {
			t.Fatalf("round %d: %s refused beside a tenant as heavy", i, <-counts)
		}
	}
	// Six under way each; one of ten_a's ends: ten_b, now the heavier, is held to its part.
	slotsA[0].Release()
	_, err := a.Admit(context.Background(), "ten_b")
	if code := switchboard.CodeOf(err); code != switchboard.CodeRateLimited {
		t.Fatalf("ten_b's call with ten_a lighter: %v, want rate_limited", err)
	}
	if got := <-counts; got != "tenant/over_part" {
		t.Errorf("counted %q, want tenant/over_part", got)
	}
	for _, s := range append(slotsA, slotsB...) {
		s.Release()
	}
}

// TestAdmissionHoldsOnlyTheTenantAskingMore: while the node stalls, a tenant asking
// for a tenth of its neighbour's calls may have more calls under way than the
// neighbour, which is held to its part; it is still not held to its own, since it is not
// the one flooding the node.
func TestAdmissionHoldsOnlyTheTenantAskingMore(t *testing.T) {
	t.Parallel()
	counts := make(chan string, 16)
	a, _ := partAdmission(3, counts)
	contend(t, a, "ten_noisy", 2)
	quiet := []*limits.Slot{underWay(t, a, "ten_quiet")}
	var noisy []*limits.Slot
	refused := 0
	for range 10 {
		s, err := a.Admit(context.Background(), "ten_noisy")
		if err != nil {
			refused++
			continue
		}
		s.Pause()
		noisy = append(noisy, s)
	}
	if len(noisy) != 3 || refused != 7 {
		t.Fatalf("the noisy tenant's ten calls: %d admitted, %d refused; want 3 (its part) and 7", len(noisy), refused)
	}
	for range 7 {
		<-counts
	}
	for range 4 { // four more: five under way, over its part and more than the noisy tenant's three
		quiet = append(quiet, underWay(t, a, "ten_quiet"))
	}
	if len(counts) > 0 {
		t.Errorf("%s: the quiet tenant, asking less, was held to its part", <-counts)
	}
	for _, s := range append(quiet, noisy...) {
		s.Release()
	}
}

// TestAdmissionTakesATenantJustBegunToFloodForTheHeavier: a tenant that began asking a
// moment ago, faster than a steady neighbour, is the heavier of the two though it has
// asked fewer calls over the last second; so the neighbour, with more calls under way
// while the node stalls, is not held to its part (in the noisy-neighbour benchmarks the
// quiet tenant was refused so in the first instants of each flood).
func TestAdmissionTakesATenantJustBegunToFloodForTheHeavier(t *testing.T) {
	t.Parallel()
	counts := make(chan string, 16)
	a, c := partAdmission(3, counts)
	for range 150 { // the quiet tenant: 100 calls a second for 1.5 s
		underWay(t, a, "ten_quiet").Release()
		c.advance(10 * time.Millisecond)
	}
	contend(t, a, "ten_quiet", 2)
	var quiet, noisy []*limits.Slot
	for range 4 { // four under way while it is alone: over its part of 3
		quiet = append(quiet, underWay(t, a, "ten_quiet"))
	}
	for range 3 { // the neighbour begins: three calls at once, as fast as can be
		noisy = append(noisy, underWay(t, a, "ten_noisy"))
	}
	s, err := a.Admit(context.Background(), "ten_quiet")
	if err != nil {
		t.Fatalf("the steady tenant, with 4 calls under way beside a flood just begun, was refused: %v", err)
	}
	for _, s := range append(append(quiet, noisy...), s) {
		s.Release()
	}
	if len(counts) > 0 {
		t.Errorf("refused: %s", <-counts)
	}
}

// TestAdmissionForgetsTenantsNoLongerActive: the tenants an Admission remembers are
// those that asked for a place within the last second or have calls under way, however
// many have ever called.
func TestAdmissionForgetsTenantsNoLongerActive(t *testing.T) {
	t.Parallel()
	a, c := partAdmission(2, make(chan string, 1))
	for i := range 100 {
		underWay(t, a, switchboard.TenantID(fmt.Sprintf("ten_%d", i))).Release()
	}
	kept := underWay(t, a, "ten_kept") // under way for the whole test
	c.advance(1100 * time.Millisecond)
	underWay(t, a, "ten_new").Release()
	if n := limits.ActiveTenants(a); n != 2 {
		t.Errorf("%d tenants remembered; want 2, the one with a call under way and the one that just called", n)
	}
	kept.Release()
}

// TestAdmissionPartOff: with the part at MaxAdmitted, a tenant's calls beyond the
// node's bound wait their turn beside another active tenant instead of being refused.
func TestAdmissionPartOff(t *testing.T) {
	t.Parallel()
	counts := make(chan string, 16)
	c := newClock()
	a := limits.NewAdmissionWithClock(limits.AdmissionOptions{MaxInFlight: 2, MaxAdmitted: 4, TenantAdmitted: 4, MaxWait: time.Hour,
		Refused: func(scope, reason string) { counts <- scope + "/" + reason }}, c.Now)
	underWay(t, a, "ten_quiet").Release()
	var noisy []*limits.Slot
	for range 4 {
		noisy = append(noisy, underWay(t, a, "ten_noisy"))
	}
	next := slotReady(admitted(a, "ten_noisy"))
	waitFor(t, a, 1)
	if len(counts) > 0 {
		t.Fatalf("%s: refused with the part off; want the call to wait", <-counts)
	}
	noisy[0].Release()
	testwait.Recv(t, next, "the waiting call to get a place")
	for _, s := range noisy[1:] {
		s.Release()
	}
}

// TestAdmissionShareRefusesOnlyTheTenantAskingMore: a tenant asking for fewer calls
// than its neighbour, whose calls wait for places though they outnumber the
// neighbour's (as when the node stalls and the neighbour is held to its part), waits
// its turn rather than being refused as over its share.
func TestAdmissionShareRefusesOnlyTheTenantAskingMore(t *testing.T) {
	t.Parallel()
	counts := make(chan string, 16)
	c := newClock()
	a := limits.NewAdmissionWithClock(limits.AdmissionOptions{MaxInFlight: 2, MaxAdmitted: 64, TenantAdmitted: 64, MaxWait: time.Hour,
		Refused: func(scope, reason string) { counts <- scope + "/" + reason }}, c.Now)
	var noisy []*limits.Slot
	for range 2 {
		s, err := a.Admit(context.Background(), "ten_noisy")
		if err != nil {
			t.Fatal(err)
		}
		noisy = append(noisy, s) // both places
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	for range 8 { // eight more asked for, by callers that went away
		if _, err := a.Admit(gone, "ten_noisy"); !errors.Is(err, context.Canceled) {
			t.Fatalf("a canceled call: %v", err)
		}
	}
	var quiet []<-chan struct{}
	for i := range 4 { // the last one waits beside more of its own than the noisy tenant has
		ch := admitted(a, "ten_quiet")
		testwait.Until(t, "the quiet call to wait or be refused", func() bool { return a.Waiting() == i+1 || len(counts) > 0 })
		if len(counts) > 0 {
			t.Fatalf("quiet call %d: %s; the quiet tenant, asking less, was refused", i, <-counts)
		}
		quiet = append(quiet, releasedOnce(ch))
	}
	for _, s := range noisy {
		s.Release()
	}
	for i, ch := range quiet {
		testwait.Recv(t, ch, fmt.Sprintf("quiet call %d to get a place", i))
	}
}

// TestAdmissionPartOnlyWhileCallsWait: a tenant's part applies only while the node is
// contended, for a second after a call last had to wait for a place: a tenant whose
// many calls wait for a slow upstream while places stay free is not held to it.
func TestAdmissionPartOnlyWhileCallsWait(t *testing.T) {
	t.Parallel()
	counts := make(chan string, 16)
	a, c := partAdmission(3, counts)
	underWay(t, a, "ten_quiet").Release() // active
	var slow []*limits.Slot
	for range 6 { // past its part, beside an active tenant, no call ever waited
		slow = append(slow, underWay(t, a, "ten_slow"))
	}
	if len(counts) > 0 {
		t.Fatalf("%s: held to its part with the node's places free", <-counts)
	}
	contend(t, a, "ten_slow", 2)
	c.advance(500 * time.Millisecond)
	underWay(t, a, "ten_quiet").Release()
	if _, err := a.Admit(context.Background(), "ten_slow"); switchboard.CodeOf(err) != switchboard.CodeRateLimited {
		t.Fatalf("half a second after a call waited: %v, want rate_limited (over its part)", err)
	}
	<-counts
	c.advance(600 * time.Millisecond) // 1.1 s after the wait; the quiet tenant asked 0.6 s ago
	slow = append(slow, underWay(t, a, "ten_slow"))
	for _, s := range slow {
		s.Release()
	}
}

// TestAdmissionPartCountsNoCallsAwayAtTheirUpstream: a tenant's calls waiting for
// their upstream's answer (Away) cost the node nothing until they come back, so they
// do not count towards its part: beside an active tenant on a contended node, a tenant
// with more calls away than its part is still admitted. Once they are back, they
// count, and its next call is refused as over its part.
func TestAdmissionPartCountsNoCallsAwayAtTheirUpstream(t *testing.T) {
	t.Parallel()
	counts := make(chan string, 16)
	a, _ := partAdmission(3, counts)
	contend(t, a, "ten_noisy", 2)
	quiet := underWay(t, a, "ten_quiet")
	away := goneAway(t, a, "ten_noisy", 5)
	more, err := a.Admit(context.Background(), "ten_noisy")
	if err != nil {
		t.Fatalf("with 5 calls away at their upstream and none in the node, the next call was refused: %v", err)
	}
	if len(counts) > 0 {
		t.Fatalf("counted %s with the tenant's calls away at their upstream", <-counts)
	}
	more.Pause()
	for _, s := range away {
		s.Resume()
		s.Pause() // back, waiting for its audit commit: in the node again
	}
	if _, err := a.Admit(context.Background(), "ten_noisy"); switchboard.CodeOf(err) != switchboard.CodeRateLimited {
		t.Fatalf("with its 6 calls back in the node, past its part of 3: %v, want rate_limited (over its part)", err)
	}
	if got := <-counts; got != "tenant/over_part" {
		t.Errorf("counted %q, want tenant/over_part", got)
	}
	releaseAll(t, a, append(away, more, quiet)...)
}

// TestAdmissionPartCountsCallsAtASlowUpstream: a tenant's calls away at an upstream
// that has not answered them within UpstreamSlow count towards its part again: they
// hold that upstream's room, which other tenants' calls to it need. So a tenant whose
// flood waits on a slow upstream is held to its part beside an active tenant, as
// before it went.
func TestAdmissionPartCountsCallsAtASlowUpstream(t *testing.T) {
	t.Parallel()
	counts := make(chan string, 16)
	a, c := partAdmission(3, counts)
	quiet := underWay(t, a, "ten_quiet") // under way throughout, asking little
	away := goneAway(t, a, "ten_noisy", 5)
	c.advance(1500 * time.Millisecond) // UpstreamSlow is 1 s: every call away is slow now
	contend(t, a, "ten_noisy", 2)
	if _, err := a.Admit(context.Background(), "ten_noisy"); switchboard.CodeOf(err) != switchboard.CodeRateLimited {
		t.Fatalf("with 5 calls at a slow upstream, past its part of 3: %v, want rate_limited (over its part)", err)
	}
	if got := <-counts; got != "tenant/over_part" {
		t.Errorf("counted %q, want tenant/over_part", got)
	}
	releaseAll(t, a, append(away, quiet)...)
}
