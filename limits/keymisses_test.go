package limits_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/limits"
)

// TestKeyMisses looks keys up: a key not found is answered from memory until its TTL
// ends; an address that sends unknown keys runs out and refills; keys found cost it
// nothing; Forget (a key was created) clears both.
func TestKeyMisses(t *testing.T) {
	t.Parallel()
	c := newClock()
	k := limits.NewKeyMisses(limits.KeyMissOptions{TTL: time.Minute, SourceBurst: 2, SourceEvery: 3 * time.Second, Now: c.Now})
	const addr = "203.0.113.9"
	// lookup begins a lookup and ends it as found or missing; it says what Begin answered.
	lookup := func(key, source string, found bool) string {
		l, err := k.Begin(sha256.Sum256([]byte(key)), source)
		switch {
		case errors.Is(err, limits.ErrKnownMissing):
			return "known missing"
		case err != nil:
			return refusal(err)
		}
		if found {
			l.Found()
		} else {
			l.Missing()
		}
		return "queried"
	}
	var got []string
	got = append(got,
		lookup("good", addr, true), lookup("good", addr, true), lookup("good", addr, true), // found: free
		lookup("bad-1", addr, false), lookup("bad-1", addr, false), // remembered
		lookup("bad-2", addr, false), lookup("bad-3", addr, false), // the bucket is empty
		lookup("bad-3", "198.51.100.7", false), // another address
	)
	c.advance(3 * time.Second)
	got = append(got, lookup("bad-4", addr, false), lookup("bad-5", addr, false))
	c.advance(time.Minute)
	got = append(got, lookup("bad-1", "192.0.2.1", false)) // the TTL ended
	k.Forget()
	got = append(got, lookup("bad-6", addr, false), lookup("bad-1", "192.0.2.1", false))
	const limited = "rate_limited after 3s: too many unknown API keys from your network; try again in 3 seconds, check the key you send"
	want := []string{
		"queried", "queried", "queried",
		"queried", "known missing",
		"queried", limited,
		"queried",
		"queried", limited,
		"queried",
		"queried", "queried",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("lookups (-want +got):\n%s", diff)
	}
}

// TestKeyMissesBounded sends more unknown keys than the memory holds: the table stays
// within its bound, and a key looked up last is still remembered.
func TestKeyMissesBounded(t *testing.T) {
	t.Parallel()
	k := limits.NewKeyMisses(limits.KeyMissOptions{MaxKeys: 64})
	for i := range 1000 {
		l, err := k.Begin(sha256.Sum256(fmt.Appendf(nil, "key-%d", i)), "")
		if err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		l.Missing()
	}
	if n := limits.RememberedKeys(k); n > 64 {
		t.Fatalf("%d keys remembered, want at most 64", n)
	}
	if _, err := k.Begin(sha256.Sum256([]byte("key-999")), ""); !errors.Is(err, limits.ErrKnownMissing) {
		t.Fatalf("the last key: %v, want ErrKnownMissing", err)
	}
}
