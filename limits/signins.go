package limits

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// SignInOptions shape the sign-in throttle; zero fields take the defaults.
type SignInOptions struct {
	// FreeFailures is how many failed sign-ins in a row an account has before it must
	// wait (default 5).
	FreeFailures int
	// FirstWait is the wait after them (default 30 s); each further failure doubles
	// it, up to MaxWait (default 15 minutes), so an account is never locked for longer.
	FirstWait time.Duration
	MaxWait   time.Duration
	// SourceBurst failed sign-ins may come from one client address at once (default
	// 20), then one every SourceEvery (default 6 s). Good sign-ins cost nothing.
	SourceBurst int
	SourceEvery time.Duration
	// Checks is how many password checks run at once (default GOMAXPROCS, at least 2);
	// Waiting more may wait for one (default 4 × Checks; negative: none); beyond,
	// sign-ins are refused at once, so a flood cannot queue up work.
	Checks  int
	Waiting int
	// MaxEntries bounds the accounts and the addresses remembered (default 100,000).
	MaxEntries int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (o *SignInOptions) defaults() {
	if o.FreeFailures <= 0 {
		o.FreeFailures = 5
	}
	if o.FirstWait <= 0 {
		o.FirstWait = 30 * time.Second
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 15 * time.Minute
	}
	o.MaxWait = max(o.MaxWait, o.FirstWait)
	if o.SourceBurst <= 0 {
		o.SourceBurst = 20
	}
	if o.SourceEvery <= 0 {
		o.SourceEvery = 6 * time.Second
	}
	if o.Checks <= 0 {
		o.Checks = max(2, runtime.GOMAXPROCS(0))
	}
	if o.Waiting < 0 {
		o.Waiting = 0
	} else if o.Waiting == 0 {
		o.Waiting = 4 * o.Checks
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 100_000
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// SignIns throttles password sign-ins, whose check (bcrypt) is costly on purpose:
//
//   - Per account: FreeFailures failures in a row, then a wait that doubles with each
//     further failure up to MaxWait. An attempt counts as a failure from the moment it
//     starts, so parallel guesses count too; a good password clears the account, and
//     so does Reset (a password link used). The lock is bounded: whatever an attacker
//     does, the owner may try again at most MaxWait after the last counted failure,
//     and a password link gets them in at any time.
//   - Per client address: a bucket of SourceBurst failures refilled one per
//     SourceEvery, so one address cannot guess across many accounts.
//   - At most Checks password checks at once and Waiting more queued; the rest are
//     refused at once rather than piling up.
//
// Refused attempts run no password check and change nothing.
type SignIns struct {
	o      SignInOptions
	source shape
	slots  chan struct{}
	hook   refusalHook

	mu       sync.Mutex
	accounts *table[*account]
	sources  *table[*bucket]
	queued   int // attempts holding or waiting for a slot
}

type account struct {
	failures int       // counted failures in a row, attempts in flight included
	until    time.Time // no attempt before this
}

// NewSignIns returns a sign-in throttle.
func NewSignIns(o SignInOptions) *SignIns {
	o.defaults()
	return &SignIns{
		o: o, source: shape{burst: o.SourceBurst, every: o.SourceEvery}, slots: make(chan struct{}, o.Checks),
		accounts: newTable[*account](o.MaxEntries), sources: newTable[*bucket](o.MaxEntries),
	}
}

// SignInAttempt is one sign-in being checked. Exactly one of Succeeded, Failed or
// Abandoned ends it.
type SignInAttempt struct {
	s       *SignIns
	account string
	source  string
	before  time.Time // the account's lock before this attempt counted
	ended   bool
}

// Begin starts a sign-in to the account name (any stable name for it, such as the
// tenant and the email; unknown accounts are throttled like known ones) from source (a
// client address from Sources; "" skips the per-address bucket). It refuses with a
// rate_limited error that says when to try again, or an unavailable one when too many
// checks are under way; it waits for a check slot until ctx ends.
func (s *SignIns) Begin(ctx context.Context, name, source string) (*SignInAttempt, error) {
	now := s.o.Now()
	s.mu.Lock()
	a, _ := s.accounts.get(name)
	if a != nil && now.Before(a.until) {
		s.mu.Unlock()
		s.hook.refused(RefusedSignInAccount)
		return nil, rateLimited("too many failed sign-ins to this account", a.until.Sub(now), "or ask an admin for a password link")
	}
	if s.queued >= s.o.Checks+s.o.Waiting {
		s.mu.Unlock()
		s.hook.refused(RefusedSignInBusy)
		return nil, &switchboard.Error{Code: switchboard.CodeUnavailable, Message: "the server is checking too many sign-ins at once; try again in a few seconds", RetryAfter: 2 * time.Second}
	}
	if source != "" {
		b, ok := s.sources.get(source)
		if !ok {
			b = newBucket(s.source, now)
			s.sources.put(source, b, func(b *bucket) bool { return b.full(s.source, now) })
		}
		if wait, ok := b.take(s.source, now); !ok {
			s.mu.Unlock()
			s.hook.refused(RefusedSignInAddress)
			return nil, rateLimited("too many failed sign-ins from your network", wait, "")
		}
	}
	if a == nil {
		a = &account{}
		s.accounts.put(name, a, func(a *account) bool { return a.failures == 0 || !now.Before(a.until) })
	}
	att := &SignInAttempt{s: s, account: name, source: source, before: a.until}
	a.failures++
	a.until = s.lockedUntil(a.failures, now)
	s.queued++
	s.mu.Unlock()

	select {
	case s.slots <- struct{}{}:
		return att, nil
	case <-ctx.Done():
		att.end(outcomeAbandoned, false)
		return nil, ctx.Err()
	}
}

// OnRefusal has fn called with the kind of every refusal (RefusedSignInAccount,
// RefusedSignInAddress, RefusedSignInBusy), for a metric.
func (s *SignIns) OnRefusal(fn func(kind string)) { s.hook.set(fn) }

// lockedUntil is when an account with this many failures in a row may try again.
func (s *SignIns) lockedUntil(failures int, now time.Time) time.Time {
	over := failures - s.o.FreeFailures
	if over < 0 {
		return time.Time{}
	}
	wait := s.o.FirstWait
	for i := 0; i < over && wait < s.o.MaxWait; i++ {
		wait *= 2
	}
	return now.Add(min(wait, s.o.MaxWait))
}

// Reset clears an account's failures: its password was just set with a password or
// invitation link.
func (s *SignIns) Reset(account string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accounts.remove(account)
}

type outcome int

const (
	outcomeFailed outcome = iota
	outcomeSucceeded
	outcomeAbandoned
)

// Succeeded ends an attempt whose password was right: the account's failures are
// cleared and the address's token given back.
func (a *SignInAttempt) Succeeded() { a.end(outcomeSucceeded, true) }

// Failed ends an attempt whose password was wrong (or whose account does not exist):
// it stays counted.
func (a *SignInAttempt) Failed() { a.end(outcomeFailed, true) }

// Abandoned ends an attempt that could not be decided (the database failed): it is
// not counted against the account or the address.
func (a *SignInAttempt) Abandoned() { a.end(outcomeAbandoned, true) }

func (a *SignInAttempt) end(o outcome, slot bool) {
	if a.ended {
		return
	}
	a.ended = true
	s := a.s
	if slot {
		<-s.slots
	}
	now := s.o.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queued--
	if o == outcomeFailed {
		return
	}
	if o == outcomeSucceeded {
		s.accounts.remove(a.account)
	} else if acc, ok := s.accounts.get(a.account); ok {
		acc.failures = max(0, acc.failures-1)
		acc.until = a.before
	}
	if a.source != "" {
		if b, ok := s.sources.get(a.source); ok {
			b.give(s.source, now)
		}
	}
}
