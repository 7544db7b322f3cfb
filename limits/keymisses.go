package limits

import (
	"encoding/hex"
	"errors"
	"sync"
	"time"
)

// ErrKnownMissing is Begin's answer for a key looked up and not found lately: answer
// it as any unknown key, without asking the database again.
var ErrKnownMissing = errors.New("api key looked up lately and not found")

// KeyMissOptions shape the unknown-key throttle; zero fields take the defaults.
type KeyMissOptions struct {
	// TTL is how long a key that was not found is remembered (default 1 minute), and
	// MaxKeys how many are (default 10,000).
	TTL     time.Duration
	MaxKeys int
	// SourceBurst lookups of unknown keys may come from one client address at once
	// (default 30), then one every SourceEvery (default 2 s). Keys that are found cost
	// nothing.
	SourceBurst int
	SourceEvery time.Duration
	// MaxSources bounds the addresses remembered (default 100,000).
	MaxSources int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (o *KeyMissOptions) defaults() {
	if o.TTL <= 0 {
		o.TTL = time.Minute
	}
	if o.MaxKeys <= 0 {
		o.MaxKeys = 10_000
	}
	if o.SourceBurst <= 0 {
		o.SourceBurst = 30
	}
	if o.SourceEvery <= 0 {
		o.SourceEvery = 2 * time.Second
	}
	if o.MaxSources <= 0 {
		o.MaxSources = 100_000
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// KeyMisses keeps API keys that are not found from costing a database query each:
//
//   - A key looked up and not found (unknown, revoked, or a wrong secret) is
//     remembered by its SHA-256 for TTL, so repeating it costs a map lookup.
//   - Each client address has a bucket of SourceBurst lookups that find nothing,
//     refilled one per SourceEvery; an empty bucket refuses further lookups (of keys
//     not already verified) with a rate_limited error before the database is asked.
//
// Forget, called when a key is created, clears both, so a new key works at once even
// from an address that just ran out.
type KeyMisses struct {
	o      KeyMissOptions
	source shape

	mu      sync.Mutex
	missing *table[time.Time] // by the key's SHA-256, in hex: until when
	sources *table[*bucket]
}

// NewKeyMisses returns an unknown-key throttle.
func NewKeyMisses(o KeyMissOptions) *KeyMisses {
	o.defaults()
	return &KeyMisses{o: o, source: shape{burst: o.SourceBurst, every: o.SourceEvery},
		missing: newTable[time.Time](o.MaxKeys), sources: newTable[*bucket](o.MaxSources)}
}

// KeyLookup is one database lookup of an API key. Exactly one of Found, Missing or
// Abandoned ends it.
type KeyLookup struct {
	k      *KeyMisses
	sum    string
	source string
	ended  bool
}

// Begin starts the lookup of the key whose SHA-256 is sum, from source (a client
// address from Sources; "" skips the per-address bucket). It answers ErrKnownMissing
// for a key not found lately, and a rate_limited error when source has run out.
func (k *KeyMisses) Begin(sum [32]byte, source string) (*KeyLookup, error) {
	h := hex.EncodeToString(sum[:])
	now := k.o.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if until, ok := k.missing.get(h); ok {
		if now.Before(until) {
			return nil, ErrKnownMissing
		}
		k.missing.remove(h)
	}
	if source != "" {
		b, ok := k.sources.get(source)
		if !ok {
			b = newBucket(k.source, now)
			k.sources.put(source, b, func(b *bucket) bool { return b.full(k.source, now) })
		}
		if wait, ok := b.take(k.source, now); !ok {
			return nil, rateLimited("too many unknown API keys from your network", wait, "check the key you send")
		}
	}
	return &KeyLookup{k: k, sum: h, source: source}, nil
}

// Found ends a lookup that found a valid key: the address's token is given back.
func (l *KeyLookup) Found() { l.end(false, true) }

// Missing ends a lookup that found no valid key: the key is remembered, and the
// address's token stays spent.
func (l *KeyLookup) Missing() { l.end(true, false) }

// Abandoned ends a lookup that could not be decided (the database failed).
func (l *KeyLookup) Abandoned() { l.end(false, true) }

func (l *KeyLookup) end(missing, refund bool) {
	if l.ended {
		return
	}
	l.ended = true
	k := l.k
	now := k.o.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if missing {
		k.missing.put(l.sum, now.Add(k.o.TTL), func(until time.Time) bool { return !now.Before(until) })
	}
	if refund && l.source != "" {
		if b, ok := k.sources.get(l.source); ok {
			b.give(k.source, now)
		}
	}
}

// Forget clears the remembered keys and the addresses' buckets: a key was just
// created, and must work at once wherever it is used from.
func (k *KeyMisses) Forget() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.missing.clear()
	k.sources.clear()
}
