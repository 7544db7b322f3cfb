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
// nothing, and are looked up even when it has run out; a key remembered is refused
// like a new one while its address has run out.
func TestKeyMisses(t *testing.T) {
	t.Parallel()
	c := newClock()
	k := limits.NewKeyMisses(limits.KeyMissOptions{TTL: time.Minute, SourceBurst: 2, SourceEvery: 3 * time.Second, Now: c.Now})
	const addr = "203.0.113.9"
	// lookup looks a key up, found or not, and says what the throttle answered.
	lookup := func(key, source string, found bool) string {
		sum := sha256.Sum256([]byte(key))
		if err := k.Recall(sum, source); err != nil {
			if !errors.Is(err, limits.ErrKnownMissing) {
				return "recalled, " + refusal(err)
			}
			return "known missing"
		}
		if found {
			return "found"
		}
		if err := k.Missing(sum, source); err != nil {
			return refusal(err)
		}
		return "missing"
	}
	var got []string
	got = append(got,
		lookup("good", addr, true), lookup("good", addr, true), lookup("good", addr, true), // found: free
		lookup("bad-1", addr, false), lookup("bad-1", addr, false), // remembered
		lookup("bad-2", addr, false), lookup("bad-3", addr, false), // the bucket is empty
		lookup("good", addr, true),             // a key found is looked up all the same
		lookup("bad-3", addr, false),           // remembered: refused alike
		lookup("bad-3", "198.51.100.7", false), // remembered, whatever the address
		lookup("bad-4", "198.51.100.7", false), // another address
	)
	c.advance(3 * time.Second)
	got = append(got, lookup("bad-5", addr, false), lookup("bad-6", addr, false))
	c.advance(time.Minute)
	got = append(got, lookup("bad-1", "192.0.2.1", false)) // the TTL ended
	const limited = "rate_limited after 3s: too many unknown API keys from your network; try again in 3 seconds, check the key you send"
	want := []string{
		"found", "found", "found",
		"missing", "known missing",
		"missing", limited,
		"found",
		"recalled, " + limited,
		"known missing",
		"missing",
		"missing", limited,
		"missing",
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
		sum := sha256.Sum256(fmt.Appendf(nil, "key-%d", i))
		if err := k.Recall(sum, ""); err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		if err := k.Missing(sum, ""); err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
	}
	if n := limits.RememberedKeys(k); n > 64 {
		t.Fatalf("%d keys remembered, want at most 64", n)
	}
	if err := k.Recall(sha256.Sum256([]byte("key-999")), ""); !errors.Is(err, limits.ErrKnownMissing) {
		t.Fatalf("the last key: %v, want ErrKnownMissing", err)
	}
}
