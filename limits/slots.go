package limits

import (
	"context"
	"sync"
	"time"
)

// Slots bounds how many holders a key (a tenant's executing runs) has at once, across
// every node that shares it. A holder keeps its slot by renewing it within ttl; the slot
// of a holder that stopped renewing (its node died) frees itself when ttl runs out.
// Implementations are safe for concurrent use and never fail: Redis falls back to
// this node's share of max when it cannot be reached.
type Slots interface {
	// Acquire takes a slot of key for holder when fewer than max are held, and reports
	// whether it did; a holder that has one already keeps it.
	Acquire(ctx context.Context, key, holder string, max int, ttl time.Duration) bool
	// Renew keeps holder's slot for ttl more.
	Renew(ctx context.Context, key, holder string, ttl time.Duration)
	// Release frees holder's slot.
	Release(ctx context.Context, key, holder string)
}

// acquireScript: KEYS: the key's sorted set of holders, scored by when their slot
// expires (milliseconds, the Redis server's clock). ARGV: holder, max, ttl.
var acquireScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
return 1
`

// renewScript: as acquireScript, for a holder that has its slot.
var renewScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
if redis.call('ZADD', KEYS[1], 'XX', 'CH', now + ttl, ARGV[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1
`

func (r *Redis) slotKey(key string) string { return r.o.Prefix + "slots:{" + key + "}" }

// Acquire implements Slots.
func (r *Redis) Acquire(ctx context.Context, key, holder string, limit int, ttl time.Duration) bool {
	if r.usable() {
		rctx, cancel := r.round(ctx)
		n, err := r.client.Eval(rctx, acquireScript, []string{r.slotKey(key)}, holder, limit, ceilMillis(ttl)).Int64()
		cancel()
		if err == nil {
			r.up()
			return n == 1
		}
		r.failed("take a run slot", err)
	}
	r.fallbacks.Add(1)
	return r.slots.acquire(key, holder, max(1, limit/max(1, r.o.Nodes())))
}

// Renew implements Slots.
func (r *Redis) Renew(ctx context.Context, key, holder string, ttl time.Duration) {
	if !r.usable() {
		return
	}
	rctx, cancel := r.round(ctx)
	defer cancel()
	if err := r.client.Eval(rctx, renewScript, []string{r.slotKey(key)}, holder, ceilMillis(ttl)).Err(); err != nil {
		r.failed("renew a run slot", err)
		return
	}
	r.up()
}

// Release implements Slots.
func (r *Redis) Release(ctx context.Context, key, holder string) {
	r.slots.release(key, holder)
	if !r.usable() {
		return
	}
	rctx, cancel := r.round(ctx)
	defer cancel()
	if err := r.client.ZRem(rctx, r.slotKey(key), holder).Err(); err != nil {
		r.failed("free a run slot", err)
	}
}

// localSlots are the slots a node keeps while Redis cannot be reached.
type localSlots struct {
	mu sync.Mutex
	m  map[string]map[string]struct{}
}

func newLocalSlots() *localSlots { return &localSlots{m: map[string]map[string]struct{}{}} }

// acquire takes one of limit slots of key for holder.
func (s *localSlots) acquire(key, holder string, limit int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.m[key]
	if _, ok := h[holder]; ok {
		return true
	}
	if len(h) >= limit {
		return false
	}
	if h == nil {
		h = map[string]struct{}{}
		s.m[key] = h
	}
	h[holder] = struct{}{}
	return true
}

func (s *localSlots) release(key, holder string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m[key], holder)
	if len(s.m[key]) == 0 {
		delete(s.m, key)
	}
}
