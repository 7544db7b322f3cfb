package bench

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/limits"
)

// TestRefusalReasonNamesAdmissionsRefusals: the benchmarks' names of refusals follow
// the words limits refuses with, so a reworded refusal is not counted as "other".
func TestRefusalReasonNamesAdmissionsRefusals(t *testing.T) {
	ctx := context.Background()
	named := func(err error, want string) {
		t.Helper()
		if err == nil {
			t.Fatalf("admitted; want a refusal named %s", want)
		}
		if got := refusalReason([]byte(err.Error())); got != want {
			t.Errorf("%v: named %q, want %s", err, got, want)
		}
	}
	// over_part: a tenant with its part under way beside another active tenant.
	// (The node contended: one call waited for the only place.)
	a := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 1, TenantAdmitted: 1, MaxWait: time.Millisecond})
	first, err := a.Admit(ctx, "ten_noisy")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Admit(ctx, "ten_noisy"); err == nil {
		t.Fatal("a call was admitted beside the only place's holder")
	}
	first.Release()
	quiet, err := a.Admit(ctx, "ten_quiet")
	if err != nil {
		t.Fatal(err)
	}
	quiet.Release() // active: it asked just now
	noisy, err := a.Admit(ctx, "ten_noisy")
	if err != nil {
		t.Fatal(err)
	}
	noisy.Pause()
	_, err = a.Admit(ctx, "ten_noisy")
	named(err, "over_part")
	// wait_exceeded: the only place held, a call waits longer than MaxWait.
	b := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 1, MaxWait: time.Millisecond})
	held, err := b.Admit(ctx, "ten_a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Admit(ctx, "ten_a")
	named(err, "wait_exceeded")
	held.Release()
	noisy.Release()
	// upstream_wait_exceeded, upstream_queue_full, upstream_slow: at an upstream's gate.
	c := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 4, MaxAdmitted: 4, UpstreamAdmitted: 1, UpstreamSlow: time.Hour, MaxWait: time.Millisecond})
	away, err := c.Admit(ctx, "ten_a")
	if err != nil {
		t.Fatal(err)
	}
	if err := away.Away(ctx, "api.github.com"); err != nil {
		t.Fatal(err)
	}
	next, err := c.Admit(ctx, "ten_a")
	if err != nil {
		t.Fatal(err)
	}
	named(next.Away(ctx, "api.github.com"), "upstream_wait_exceeded")
	d := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 4, MaxAdmitted: 4, UpstreamAdmitted: 1, UpstreamSlow: time.Nanosecond, MaxWait: time.Hour})
	slow, err := d.Admit(ctx, "ten_a")
	if err != nil {
		t.Fatal(err)
	}
	if err := slow.Away(ctx, "api.github.com"); err != nil {
		t.Fatal(err)
	}
	after, err := d.Admit(ctx, "ten_a")
	if err != nil {
		t.Fatal(err)
	}
	named(after.Away(ctx, "api.github.com"), "upstream_slow")
	for _, s := range []*limits.Slot{away, next, slow, after} {
		s.Resume()
		s.Release()
	}
}
