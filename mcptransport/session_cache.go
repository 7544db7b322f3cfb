package mcptransport

import (
	"slices"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard/sessions"
)

const (
	// touchEvery coalesces the writes of a session's last use: at most one per this
	// long per session per node.
	touchEvery = 30 * time.Second
	// recordFresh is how long a node trusts its copy of a session record without
	// reading it again; ended sessions reach the node sooner through the relay.
	recordFresh = 10 * time.Second
)

// SessionCache is a node's copy of the session records it served recently.
type SessionCache struct {
	mu   sync.Mutex
	recs map[string]*cachedSession
}

// NewSessionCache returns an empty SessionCache.
func NewSessionCache() *SessionCache { return &SessionCache{recs: map[string]*cachedSession{}} }

type cachedSession struct {
	rec     sessions.Record
	fetched time.Time
	touched time.Time // when this node last wrote the session's last use
}

// Get returns the node's copy of a session record while it is fresh.
func (c *SessionCache) Get(id string, now time.Time) (sessions.Record, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.recs[id]
	if !ok || now.Sub(e.fetched) > recordFresh {
		return sessions.Record{}, false
	}
	return e.rec, true
}

// Put keeps a copy of a session record, read now.
func (c *SessionCache) Put(rec sessions.Record, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.recs[rec.ID]
	if !ok {
		e = &cachedSession{}
		c.recs[rec.ID] = e
	}
	e.rec, e.fetched = rec, now
}

// Due reports whether the session's use should be written now, and if so marks it
// written: the first use always is (it turns a new session into a used one).
func (c *SessionCache) Due(id string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.recs[id]
	if !ok {
		return true
	}
	if e.rec.LastUsedAt != nil && now.Sub(e.touched) < touchEvery {
		return false
	}
	e.touched = now
	t := now
	e.rec.LastUsedAt = &t
	return true
}

// SetLevel records a log level in the copy of a session's record.
func (c *SessionCache) SetLevel(id, level string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.recs[id]; ok {
		e.rec.LogLevel = level
	}
}

// SetSubscription records a subscription (on) or its end in the copy of a session's
// record.
func (c *SessionCache) SetSubscription(id, uri string, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.recs[id]; ok {
		e.rec.Subscriptions = slices.DeleteFunc(slices.Clone(e.rec.Subscriptions), func(u string) bool { return u == uri })
		if on {
			e.rec.Subscriptions = append(e.rec.Subscriptions, uri)
		}
	}
}

// Clear forgets every copy.
func (c *SessionCache) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.recs)
}

// Drop forgets the copy of one session's record.
func (c *SessionCache) Drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.recs, id)
}

// Prune forgets copies too old to be used again.
func (c *SessionCache) Prune(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, e := range c.recs {
		if now.Sub(e.fetched) > recordFresh+touchEvery {
			delete(c.recs, id)
		}
	}
}
