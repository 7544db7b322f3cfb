package limits

import (
	"net/http"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// Default bounds of a BodyBudget.
const (
	// DefaultBodyBudget is the bytes of request bodies a process holds at once.
	DefaultBodyBudget = 32 << 20
	// DefaultBodyPerRequest is what a request whose length is unknown (chunked) is
	// counted as, and what any one request may send: the largest per-request cap (the
	// MCP adapter's).
	DefaultBodyPerRequest = 4 << 20
	// PublicBodyPerRequest is the most a request may send to a route that reads its
	// body before any credential is checked (sign-in and OAuth forms, client
	// registration) unless the route says otherwise: more than any of those takes.
	PublicBodyPerRequest = 64 << 10
	// PublicBodyTimeout is how long such a body, or a webhook's, may take to arrive.
	PublicBodyTimeout = 10 * time.Second
)

// Shares of a BodyBudget's total: the bodies of one client address together, and the
// bodies of one public pool together (each pool its own eighth); the bodies of one
// client address in a pool, as a part of the pool's share.
const (
	sourceShare       = 4
	publicShare       = 8
	publicSourceShare = 8
)

// BodyBudget bounds the memory of request bodies in flight: a semaphore on bytes. Each
// request reserves its declared length (or the per-request bound when it declares
// none) before it is read, and gives it back when it is done; a request that does not
// fit is refused at once, so parallel large bodies cannot grow the heap without bound.
//
// Besides the total, one client address holds at most a quarter of it. Public bodies,
// those of routes that read them before any credential is checked, count in a pool
// per kind of route (sign-in and OAuth forms, webhooks), each at most an eighth of the
// total, of which one client address holds at most an eighth: a client that opens many
// slow bodies fills its own share of one pool, not the budget of signed-in callers or
// of the other pools.
type BodyBudget struct {
	total, perRequest, perSource int64
	pool, poolPerSource          int64
	hook                         refusalHook

	mu       sync.Mutex
	used     int64
	bySource map[string]int64
	// byPool holds each public pool's bytes under its name, and each client address's
	// bytes in it under the pool's name, a zero byte and the address.
	byPool map[string]int64
}

// NewBodyBudget returns a budget of total bytes in which one request counts for at most
// perRequest bytes. Zero or negative values take the defaults.
func NewBodyBudget(total, perRequest int64) *BodyBudget {
	if total <= 0 {
		total = DefaultBodyBudget
	}
	if perRequest <= 0 {
		perRequest = DefaultBodyPerRequest
	}
	perRequest = min(perRequest, total)
	pool := min(max(total/publicShare, PublicBodyPerRequest), total)
	return &BodyBudget{total: total, perRequest: perRequest, perSource: max(total/sourceShare, perRequest),
		pool: pool, poolPerSource: min(max(pool/publicSourceShare, PublicBodyPerRequest), pool),
		bySource: map[string]int64{}, byPool: map[string]int64{}}
}

// Reserve takes the bytes r's body may hold from the budget, bounding a body of unknown
// length to the per-request size, for a route that has checked the caller's
// credentials. It returns the function that gives them back, or the refusal when the
// budget or the client address's share cannot hold them now (503 or 429, each with
// Retry-After).
func (b *BodyBudget) Reserve(w http.ResponseWriter, r *http.Request) (release func(), err error) {
	return b.reserve(w, r, b.perRequest, "")
}

// ReservePublic is Reserve for a route that reads the body before any credential is
// checked, and takes at most limit bytes (PublicBodyPerRequest when zero): a body
// declared longer is refused (an *http.MaxBytesError) without a byte read, and the
// body counts in the named public pool. One client address may always hold one body
// of limit bytes, whatever its share of the pool.
func (b *BodyBudget) ReservePublic(w http.ResponseWriter, r *http.Request, pool string, limit int64) (release func(), err error) {
	if limit <= 0 {
		limit = PublicBodyPerRequest
	}
	limit = min(limit, b.pool)
	if r.ContentLength > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	if pool == "" {
		pool = "public"
	}
	return b.reserve(w, r, limit, pool)
}

// busyBodies is the refusal of a body the budget cannot hold now.
var busyBodies = &switchboard.Error{Code: switchboard.CodeUnavailable, RetryAfter: time.Second,
	Message: "the server is busy reading other large requests; retry in a second"}

// busySource is the refusal of a body over its client address's share.
var busySource = &switchboard.Error{Code: switchboard.CodeRateLimited, RetryAfter: time.Second,
	Message: "your address is sending too many large requests at once; retry in a second"}

func (b *BodyBudget) reserve(w http.ResponseWriter, r *http.Request, limit int64, pool string) (func(), error) {
	n := r.ContentLength
	if n < 0 || n > limit {
		n = limit
	}
	if n == 0 || r.Body == nil || r.Body == http.NoBody {
		return func() {}, nil
	}
	source := SourceFrom(r.Context())
	if source == "" {
		source = (&Sources{}).Of(r)
	}
	if err := b.take(source, pool, n, limit); err != nil {
		if err == busySource {
			b.hook.refused(RefusedBodyAddress)
		} else {
			b.hook.refused(RefusedBodyBudget)
		}
		return nil, err
	}
	// A body longer than it reserved cannot be read past the reservation.
	r.Body = http.MaxBytesReader(w, r.Body, n)
	var once sync.Once
	return func() { once.Do(func() { b.give(source, pool, n) }) }, nil
}

// OnRefusal has fn called with the kind of every refusal (RefusedBodyAddress,
// RefusedBodyBudget), for a metric.
func (b *BodyBudget) OnRefusal(fn func(kind string)) { b.hook.set(fn) }

// take counts n bytes of source's body, in pool ("" for none) of a route that takes at
// most limit, or says which bound they would pass.
func (b *BodyBudget) take(source, pool string, n, limit int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	inPool := pool + "\x00" + source
	switch {
	case b.bySource[source]+n > b.perSource, pool != "" && b.byPool[inPool]+n > max(b.poolPerSource, limit):
		return busySource
	case b.used+n > b.total, pool != "" && b.byPool[pool]+n > b.pool:
		return busyBodies
	}
	b.used += n
	b.bySource[source] += n
	if pool != "" {
		b.byPool[pool] += n
		b.byPool[inPool] += n
	}
	return nil
}

// give returns n bytes of source's body in pool, forgetting what holds none.
func (b *BodyBudget) give(source, pool string, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	drop(b.bySource, source, n)
	if pool != "" {
		drop(b.byPool, pool, n)
		drop(b.byPool, pool+"\x00"+source, n)
	}
}

// drop takes n from m[key], deleting the key at zero.
func drop(m map[string]int64, key string, n int64) {
	if m[key] -= n; m[key] <= 0 {
		delete(m, key)
	}
}

// InUse is the bytes reserved now.
func (b *BodyBudget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}
