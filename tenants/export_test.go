package tenants

import (
	"time"

	"github.com/switchboard-hub/switchboard"
)

// PasswordChecks is how many password hash comparisons s has made, for tests that
// check the throttles keep bcrypt from running.
func PasswordChecks(s *Store) int64 { return s.pwChecks.Load() }

// CachedUntil caches p for key sum in a new cache with ttl, as Authenticate would with
// the key's expiry until, and reports whether a lookup at each of the times finds it.
func CachedUntil(ttl time.Duration, now, until time.Time, at ...time.Time) []bool {
	c := newKeyCache(8, ttl)
	var sum [32]byte
	c.put(sum, switchboard.Principal{KeyID: "key_x"}, now, now, c.generation(), until)
	out := make([]bool, 0, len(at))
	for _, t := range at {
		_, _, ok := c.get(sum, t)
		out = append(out, ok)
	}
	return out
}
