package limits

import (
	"math"
	"time"
)

// bucket is a token bucket: it holds up to burst tokens and gains one every `every`;
// an attempt takes one, and an attempt that turns out to be good gives it back. (The
// buckets of golang.org/x/time/rate cannot give a token back once the reservation's
// time has passed, which a password check that takes a while always does.)
type bucket struct {
	tokens float64
	at     time.Time // when tokens was last brought up to date
}

// shape is a bucket's shape.
type shape struct {
	burst int
	every time.Duration
}

func newBucket(r shape, now time.Time) *bucket {
	return &bucket{tokens: float64(r.burst), at: now}
}

// refill brings the tokens up to date.
func (b *bucket) refill(r shape, now time.Time) {
	if now.After(b.at) {
		b.tokens = math.Min(float64(r.burst), b.tokens+float64(now.Sub(b.at))/float64(r.every))
		b.at = now
	}
}

// take takes a token, or says how long until there is one.
func (b *bucket) take(r shape, now time.Time) (time.Duration, bool) {
	if wait := b.wait(r, now); wait > 0 {
		return wait, false
	}
	b.tokens--
	return 0, true
}

// wait says how long until the bucket holds a token, without taking one: 0 when it
// holds one now.
func (b *bucket) wait(r shape, now time.Time) time.Duration {
	b.refill(r, now)
	if b.tokens >= 1 {
		return 0
	}
	return time.Duration(math.Ceil((1 - b.tokens) * float64(r.every)))
}

// give returns a token taken for an attempt that turned out good.
func (b *bucket) give(r shape, now time.Time) {
	b.refill(r, now)
	b.tokens = math.Min(float64(r.burst), b.tokens+1)
}

// full reports whether the bucket holds every token, so forgetting it changes nothing.
func (b *bucket) full(r shape, now time.Time) bool {
	b.refill(r, now)
	return b.tokens >= float64(r.burst)
}
