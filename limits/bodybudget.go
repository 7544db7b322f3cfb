package limits

import (
	"net/http"
	"sync/atomic"
)

// Default bounds of a BodyBudget.
const (
	// DefaultBodyBudget is the bytes of request bodies a process holds at once.
	DefaultBodyBudget = 32 << 20
	// DefaultBodyPerRequest is what a request whose length is unknown (chunked) is
	// counted as, and what any one request may send: the largest per-request cap (the
	// MCP adapter's).
	DefaultBodyPerRequest = 4 << 20
)

// BodyBudget bounds the memory of request bodies in flight: a semaphore on bytes. Each
// request reserves its declared length (or the per-request bound when it declares
// none) before it is read, and gives it back when it is done; a request that does not
// fit is refused at once, so parallel large bodies cannot grow the heap without bound.
type BodyBudget struct {
	total, perRequest int64
	used              atomic.Int64
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
	return &BodyBudget{total: total, perRequest: min(perRequest, total)}
}

// Reserve takes the bytes r's body may hold from the budget, bounding a body of unknown
// length to the per-request size. It returns the function that gives them back, or
// false when the budget cannot hold them now.
func (b *BodyBudget) Reserve(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	n := r.ContentLength
	if n < 0 || n > b.perRequest {
		n = b.perRequest
	}
	if n == 0 || r.Body == nil || r.Body == http.NoBody {
		return func() {}, true
	}
	for {
		used := b.used.Load()
		if used+n > b.total {
			return nil, false
		}
		if b.used.CompareAndSwap(used, used+n) {
			break
		}
	}
	// A body longer than it reserved cannot be read past the reservation.
	r.Body = http.MaxBytesReader(w, r.Body, n)
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			b.used.Add(-n)
		}
	}, true
}

// InUse is the bytes reserved now.
func (b *BodyBudget) InUse() int64 { return b.used.Load() }
