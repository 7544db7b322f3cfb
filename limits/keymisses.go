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
	// SourceBurst unknown keys may come from one client address at once (default 30),
	// then one every SourceEvery (default 2 s); further ones are refused. Keys that are
	// found cost nothing and are never refused.
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

// KeyMisses keeps API keys that are not found from costing a database query each
// time they are sent, and slows down the guessing of keys:
//
//   - A key looked up and not found (unknown, revoked, or a wrong secret) is
//     remembered by its SHA-256 for TTL, so repeating it costs a map lookup.
//   - Each client address has a bucket of SourceBurst keys that find nothing,
//     refilled one per SourceEvery; an unknown key from an address whose bucket is
//     empty is answered with a rate_limited error instead of unauthorized.
//
// Only keys that turn out unknown count and are refused: a valid key is always looked
// up and answered, however many unknown keys its address sent, since behind a reverse
// proxy that is not trusted every client shares one address, and one client's guessing
// must not lock the others out.
type KeyMisses struct {
	o      KeyMissOptions
	source shape
	hook   refusalHook

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

// Recall answers nil when the key whose SHA-256 is sum must be looked up; for a key
// looked up lately and not found, ErrKnownMissing, or the rate_limited error Missing
// gives when source (see Missing) has run out, so a key is answered alike whether it
// was seen before or not. It costs source nothing.
func (k *KeyMisses) Recall(sum [32]byte, source string) error {
	h := hex.EncodeToString(sum[:])
	now := k.o.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	until, ok := k.missing.get(h)
	if !ok {
		return nil
	}
	if !now.Before(until) {
		k.missing.remove(h)
		return nil
	}
	if b, ok := k.sources.get(source); ok && source != "" {
		if wait := b.wait(k.source, now); wait > 0 {
			k.hook.refused(RefusedUnknownKey)
			return refusedKey(wait)
		}
	}
	return ErrKnownMissing
}

// Missing records that the key whose SHA-256 is sum, sent from source (a client
// address from Sources; "" skips the per-address bucket), was looked up and not found:
// the key is remembered, and the address's bucket loses a token. It answers a
// rate_limited error, to send instead of unauthorized, when the bucket was empty.
func (k *KeyMisses) Missing(sum [32]byte, source string) error {
	h := hex.EncodeToString(sum[:])
	now := k.o.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	k.missing.put(h, now.Add(k.o.TTL), func(until time.Time) bool { return !now.Before(until) })
	if source == "" {
		return nil
	}
	b, ok := k.sources.get(source)
	if !ok {
		b = newBucket(k.source, now)
		k.sources.put(source, b, func(b *bucket) bool { return b.full(k.source, now) })
	}
	if wait, ok := b.take(k.source, now); !ok {
		k.hook.refused(RefusedUnknownKey)
		return refusedKey(wait)
	}
	return nil
}

// OnRefusal has fn called with RefusedUnknownKey at every refusal (a metric).
func (k *KeyMisses) OnRefusal(fn func(kind string)) { k.hook.set(fn) }

// refusedKey is the answer to an unknown key from an address that has run out.
func refusedKey(wait time.Duration) error {
	return rateLimited("too many unknown API keys from your network", wait, "check the key you send")
}
