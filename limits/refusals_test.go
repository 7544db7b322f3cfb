package limits_test

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/limits"
)

// refusalLog records the kinds a throttle tells its refusals to.
type refusalLog struct {
	mu    sync.Mutex
	kinds []string
}

func (l *refusalLog) refused(kind string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kinds = append(l.kinds, kind)
}

// TestThrottlesTellTheirRefusals: every refusal of a per-client throttle is told, by
// kind, and nothing else is.
func TestThrottlesTellTheirRefusals(t *testing.T) {
	t.Parallel()
	var log refusalLog
	c := newClock()
	const addr = "203.0.113.9"

	k := limits.NewKeyMisses(limits.KeyMissOptions{SourceBurst: 1, SourceEvery: time.Minute, Now: c.Now})
	k.OnRefusal(log.refused)
	sum := func(s string) [32]byte { return sha256.Sum256([]byte(s)) }
	_ = k.Missing(sum("bad-1"), addr) // the address's one unknown key: not refused
	if k.Missing(sum("bad-2"), addr) == nil {
		t.Fatal("the second unknown key was not refused")
	}
	if k.Recall(sum("bad-1"), addr) == nil { // remembered, from an address that ran out
		t.Fatal("a remembered key from an address that ran out was not refused")
	}

	s := limits.NewSignIns(limits.SignInOptions{FreeFailures: 1, SourceBurst: 1, SourceEvery: time.Minute, Checks: 1, Waiting: -1, Now: c.Now})
	s.OnRefusal(log.refused)
	ctx := context.Background()
	a, err := s.Begin(ctx, "alice", addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Begin(ctx, "bob", "198.51.100.7"); err == nil { // the one check slot is taken
		t.Fatal("a sign-in beyond the checks was not refused")
	}
	a.Failed()
	if _, err := s.Begin(ctx, "alice", "198.51.100.7"); err == nil { // locked after a failure
		t.Fatal("a sign-in to a locked account was not refused")
	}
	if _, err := s.Begin(ctx, "carol", addr); err == nil { // the address failed once: its bucket is empty
		t.Fatal("a sign-in from an address out of attempts was not refused")
	}

	b := limits.NewBodyBudget(1<<20, 256<<10) // an address 256 KiB
	b.OnRefusal(log.refused)
	reserve := func(source string, n int64) (func(), error) {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("x"))
		r.ContentLength = n
		return b.Reserve(httptest.NewRecorder(), r.WithContext(limits.WithSource(context.Background(), source)))
	}
	var held []func()
	for _, src := range []string{"a", "b", "c", "d"} {
		release, err := reserve(src, 256<<10)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, release)
	}
	if _, err := reserve("a", 1); err == nil {
		t.Fatal("a body over the address's share was not refused")
	}
	if _, err := reserve("e", 1); err == nil {
		t.Fatal("a body over the budget was not refused")
	}
	for _, release := range held {
		release()
	}

	want := []string{limits.RefusedUnknownKey, limits.RefusedUnknownKey,
		limits.RefusedSignInBusy, limits.RefusedSignInAccount, limits.RefusedSignInAddress,
		limits.RefusedBodyAddress, limits.RefusedBodyBudget}
	if diff := cmp.Diff(want, log.kinds); diff != "" {
		t.Errorf("refusals told (-want +got):\n%s", diff)
	}
}
