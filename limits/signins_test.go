package limits_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/limits"
)

// refusal describes a Begin's answer: "" for an attempt, else the error's code, its
// Retry-After and its message.
func refusal(err error) string {
	if err == nil {
		return ""
	}
	e := switchboard.AsError(err)
	return fmt.Sprintf("%s after %s: %s", e.Code, e.RetryAfter, e.Message)
}

// TestSignInAccountBackoff fails one account's sign-ins: the free failures run, then
// each attempt waits, the wait doubling up to the bound and never beyond; a good
// password clears the account, and so does Reset.
func TestSignInAccountBackoff(t *testing.T) {
	t.Parallel()
	c := newClock()
	s := limits.NewSignIns(limits.SignInOptions{FreeFailures: 3, FirstWait: 10 * time.Second, MaxWait: 40 * time.Second, Now: c.Now})
	ctx := context.Background()
	fail := func() string {
		a, err := s.Begin(ctx, "acme\x00ada@acme.test", "")
		if err != nil {
			return refusal(err)
		}
		a.Failed()
		return "checked"
	}
	locked := func(wait string) string {
		return "rate_limited after " + wait + ": too many failed sign-ins to this account; try again in "
	}
	var got []string
	for range 5 {
		got = append(got, fail())
	}
	c.advance(9 * time.Second)
	got = append(got, fail())
	c.advance(time.Second)
	got = append(got, fail(), fail()) // the 4th failure: 20 s
	c.advance(20 * time.Second)
	got = append(got, fail(), fail()) // the 5th: 40 s
	c.advance(40 * time.Second)
	got = append(got, fail(), fail()) // the 6th: still 40 s, the bound
	want := []string{"checked", "checked", "checked", locked("10s"), locked("10s"), locked("1s"), "checked", locked("20s"), "checked", locked("40s"), "checked", locked("40s")}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) })); diff != "" {
		t.Fatalf("attempts (-want +got):\n%s", diff)
	}
	if !strings.HasSuffix(got[3], "try again in 10 seconds, or ask an admin for a password link") {
		t.Errorf("message %q does not say when to try again and what else to do", got[3])
	}

	// The other accounts are not affected.
	if a, err := s.Begin(ctx, "acme\x00bob@acme.test", ""); err != nil {
		t.Fatalf("another account: %v", err)
	} else {
		a.Failed()
	}
	// A good password clears the account.
	c.advance(40 * time.Second)
	a, err := s.Begin(ctx, "acme\x00ada@acme.test", "")
	if err != nil {
		t.Fatal(err)
	}
	a.Succeeded()
	for i := range 3 {
		if r := fail(); r != "checked" {
			t.Fatalf("failure %d after a good sign-in: %s, want checked", i+1, r)
		}
	}
	if r := fail(); !strings.HasPrefix(r, locked("10s")) {
		t.Fatalf("after 3 more failures: %s, want locked 10s", r)
	}
	// Reset (a password link used) clears it too.
	s.Reset("acme\x00ada@acme.test")
	if r := fail(); r != "checked" {
		t.Fatalf("after Reset: %s, want checked", r)
	}
}

// TestSignInParallelGuessesCount begins many attempts on one account before any ends:
// each counts from the moment it starts, so parallel guesses get no more than the free
// failures; an abandoned attempt (the database failed) is not counted.
func TestSignInParallelGuessesCount(t *testing.T) {
	t.Parallel()
	c := newClock()
	s := limits.NewSignIns(limits.SignInOptions{FreeFailures: 4, Checks: 100, Now: c.Now})
	var begun []*limits.SignInAttempt
	refused := 0
	for range 20 {
		a, err := s.Begin(context.Background(), "acct", "")
		if err != nil {
			refused++
			continue
		}
		begun = append(begun, a)
	}
	if len(begun) != 4 || refused != 16 {
		t.Fatalf("began %d and refused %d of 20 parallel attempts, want 4 and 16", len(begun), refused)
	}
	for _, a := range begun {
		a.Abandoned()
	}
	a, err := s.Begin(context.Background(), "acct", "")
	if err != nil {
		t.Fatalf("after abandoned attempts: %v, want an attempt", err)
	}
	a.Failed()
}

// TestSignInPerSource fails sign-ins to many accounts from one address: the address's
// bucket runs out and refills one attempt at a time; good sign-ins cost it nothing, and
// other addresses are not affected.
func TestSignInPerSource(t *testing.T) {
	t.Parallel()
	c := newClock()
	s := limits.NewSignIns(limits.SignInOptions{SourceBurst: 3, SourceEvery: 5 * time.Second, Now: c.Now})
	ctx := context.Background()
	try := func(account, source string, good bool) string {
		a, err := s.Begin(ctx, account, source)
		if err != nil {
			return refusal(err)
		}
		if good {
			a.Succeeded()
		} else {
			a.Failed()
		}
		return "checked"
	}
	var got []string
	got = append(got, try("alice", "203.0.113.9", true), try("bob", "203.0.113.9", true)) // free
	for i := range 4 {
		got = append(got, try(fmt.Sprintf("guess-%d", i), "203.0.113.9", false))
	}
	got = append(got, try("carol", "198.51.100.7", false))
	c.advance(5 * time.Second)
	got = append(got, try("guess-9", "203.0.113.9", false), try("guess-10", "203.0.113.9", false))
	const limited = "rate_limited after 5s: too many failed sign-ins from your network; try again in 5 seconds"
	want := []string{"checked", "checked", "checked", "checked", "checked", limited, "checked", "checked", limited}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("attempts (-want +got):\n%s", diff)
	}
}

// TestSignInConcurrencyBound holds every check slot: further sign-ins are refused at
// once as unavailable, with a Retry-After, until one ends.
func TestSignInConcurrencyBound(t *testing.T) {
	t.Parallel()
	s := limits.NewSignIns(limits.SignInOptions{Checks: 2, Waiting: -1})
	ctx := context.Background()
	a1, err1 := s.Begin(ctx, "a", "")
	a2, err2 := s.Begin(ctx, "b", "")
	if err1 != nil || err2 != nil {
		t.Fatalf("first two: %v, %v", err1, err2)
	}
	_, err := s.Begin(ctx, "c", "")
	if e := switchboard.AsError(err); e == nil || e.Code != switchboard.CodeUnavailable || e.RetryAfter <= 0 || !strings.Contains(e.Message, "try again") {
		t.Fatalf("third while two run: %v, want unavailable with Retry-After", err)
	}
	a1.Failed()
	a3, err := s.Begin(ctx, "c", "")
	if err != nil {
		t.Fatalf("third after one ended: %v", err)
	}
	a2.Succeeded()
	a3.Failed()
}

// TestSignInBeginWaitsForSlot has a sign-in wait for a check slot: a cancelled
// context ends the wait, and the attempt is not counted.
func TestSignInBeginWaitsForSlot(t *testing.T) {
	t.Parallel()
	s := limits.NewSignIns(limits.SignInOptions{Checks: 1, Waiting: 1, FreeFailures: 1})
	held, err := s.Begin(context.Background(), "a", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Begin(ctx, "b", ""); err != context.Canceled {
		t.Fatalf("Begin with a cancelled context while the slot is held = %v, want context.Canceled", err)
	}
	held.Failed()
	b, err := s.Begin(context.Background(), "b", "")
	if err != nil {
		t.Fatalf("b after its cancelled attempt: %v, want an attempt (the cancelled one did not count)", err)
	}
	b.Failed()
}
