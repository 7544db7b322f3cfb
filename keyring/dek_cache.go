package keyring

import (
	"container/list"
	"crypto/cipher"
	"sync"
	"time"
)

// dekCache holds unwrapped data keys (as ready AEADs) by their wrapped form, bounded
// in count (least recently used goes first) and in age (an entry older than ttl is
// dropped when next looked up, and never returned).
type dekCache struct {
	max int
	ttl time.Duration
	now func() time.Time

	mu    sync.Mutex
	order *list.List // of *dekEntry, most recently used first
	byKey map[string]*list.Element
}

type dekEntry struct {
	wrapped string
	aead    cipher.AEAD
	expires time.Time
}

func newDEKCache(max int, ttl time.Duration, now func() time.Time) *dekCache {
	return &dekCache{max: max, ttl: ttl, now: now, order: list.New(), byKey: make(map[string]*list.Element)}
}

// get returns the AEAD of a wrapped data key if it is cached and fresh.
func (c *dekCache) get(wrapped string) (cipher.AEAD, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[wrapped]
	if !ok {
		return nil, false
	}
	e := el.Value.(*dekEntry)
	if !c.now().Before(e.expires) {
		c.remove(el)
		return nil, false
	}
	c.order.MoveToFront(el)
	return e.aead, true
}

// put caches the AEAD of a wrapped data key, dropping the least recently used entries
// beyond the bound.
func (c *dekCache) put(wrapped string, aead cipher.AEAD) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for el := c.order.Back(); el != nil && !now.Before(el.Value.(*dekEntry).expires); el = c.order.Back() {
		c.remove(el)
	}
	expires := now.Add(c.ttl)
	if el, ok := c.byKey[wrapped]; ok {
		e := el.Value.(*dekEntry)
		e.aead, e.expires = aead, expires
		c.order.MoveToFront(el)
		return
	}
	c.byKey[wrapped] = c.order.PushFront(&dekEntry{wrapped: wrapped, aead: aead, expires: expires})
	for c.order.Len() > c.max {
		c.remove(c.order.Back())
	}
}

func (c *dekCache) remove(el *list.Element) {
	c.order.Remove(el)
	delete(c.byKey, el.Value.(*dekEntry).wrapped)
}

// len is the number of entries, fresh or not yet dropped.
func (c *dekCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
