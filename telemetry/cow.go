package telemetry

import (
	"sync"
	"sync/atomic"
)

// cowMap is a copy-on-write map for bound metric handles: reads take no lock and
// allocate nothing; a key seen for the first time copies the map. Label combinations
// are few (tools × outcomes), so the copies are rare and small.
type cowMap[K comparable, V any] struct {
	mu sync.Mutex
	p  atomic.Pointer[map[K]V]
}

// get returns the value of k, making it with mk the first time.
func (c *cowMap[K, V]) get(k K, mk func() V) V {
	if m := c.p.Load(); m != nil {
		if v, ok := (*m)[k]; ok {
			return v
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.p.Load()
	size := 1
	if old != nil {
		if v, ok := (*old)[k]; ok {
			return v
		}
		size += len(*old)
	}
	next := make(map[K]V, size)
	if old != nil {
		for key, v := range *old {
			next[key] = v
		}
	}
	v := mk()
	next[k] = v
	c.p.Store(&next)
	return v
}
