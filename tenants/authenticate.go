package tenants

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/limits"
)

// touchEvery is how often a key's last_used_at is written at most.
const touchEvery = time.Minute

// errUnauthorized is the one answer to every bad key, malformed, unknown or revoked,
// so that the answer says nothing about which.
func errUnauthorized() error {
	return &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "invalid or revoked API key"}
}

// Authenticate returns the principal an API key stands for. Verified keys are cached
// in memory (by the SHA-256 of the key) for 30 s, so the hot path costs a hash and a map
// lookup; RevokeKey, SetUserRole and RemoveUser invalidate every node's cache at once
// through the change feed (see SetFeed), the 30 s being only a backstop. Keys that are
// not found do not cost a database query each time (limits.KeyMisses): a key not found
// lately is answered from memory, and a client address (limits.SourceFrom(ctx)) that
// sends many unknown keys has them refused with rate_limited for a while. A valid key
// is looked up and accepted whatever its address sent.
func (s *Store) Authenticate(ctx context.Context, key string) (switchboard.Principal, error) {
	sum := sha256.Sum256([]byte(key))
	now := time.Now()
	if p, touch, ok := s.cache.get(sum, now); ok {
		if touch {
			s.touch(p.KeyID, now)
		}
		return p, nil
	}
	prefix, ok := parseKey(key)
	if !ok {
		return switchboard.Principal{}, errUnauthorized()
	}
	if err := s.keyMisses.Recall(sum, limits.SourceFrom(ctx)); err != nil {
		if errors.Is(err, limits.ErrKnownMissing) {
			return switchboard.Principal{}, errUnauthorized()
		}
		return switchboard.Principal{}, err
	}
	// Every caller of this key meanwhile shares one lookup (a fresh node, or the cache's
	// entry expiring under load, would otherwise send the database one query per
	// caller). The lookup runs apart from any one caller's context, so a caller that
	// leaves does not fail the others; each caller waits on its own.
	ch := s.lookups.DoChan(string(sum[:]), func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lookupTimeout)
		defer cancel()
		return s.lookUp(lctx, sum, prefix)
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return switchboard.Principal{}, r.Err
		}
		return r.Val.(switchboard.Principal), nil
	case <-ctx.Done():
		return switchboard.Principal{}, ctx.Err()
	}
}

// lookupTimeout bounds a key's lookup, which no caller's context bounds.
const lookupTimeout = 10 * time.Second

// lookUp finds the principal of a key that is not cached, caches it, and records a key
// not found (see keyMissing).
func (s *Store) lookUp(ctx context.Context, sum [32]byte, prefix string) (switchboard.Principal, error) {
	now := time.Now()
	gen := s.cache.generation()
	var row struct {
		ID         string
		TenantID   switchboard.TenantID
		UserID     string
		AgentID    *string
		Hash       string
		Operator   bool
		RevokedAt  *time.Time
		ExpiresAt  *time.Time
		LastUsedAt *time.Time
		Role       switchboard.Role
		Slug       string
	}
	err := s.db.WithContext(ctx).Table("api_keys AS k").
		Select("k.id, k.tenant_id, k.user_id, k.agent_id, k.hash, k.operator, k.revoked_at, k.expires_at, k.last_used_at, u.role, t.slug").
		Joins("JOIN users u ON u.id = k.user_id AND u.tenant_id = k.tenant_id").
		Joins("JOIN tenants t ON t.id = k.tenant_id").
		Where("k.prefix = ?", prefix).
		Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return switchboard.Principal{}, s.keyMissing(ctx, sum)
	}
	if err != nil {
		return switchboard.Principal{}, switchboard.Internal(fmt.Errorf("authenticate key: %w", err))
	}
	stored, err := hex.DecodeString(row.Hash)
	expired := row.ExpiresAt != nil && !now.Before(*row.ExpiresAt)
	if err != nil || subtle.ConstantTimeCompare(stored, sum[:]) != 1 || row.RevokedAt != nil || expired {
		return switchboard.Principal{}, s.keyMissing(ctx, sum)
	}
	p := switchboard.Principal{
		TenantID:   row.TenantID,
		TenantSlug: row.Slug,
		Kind:       switchboard.PrincipalUser,
		UserID:     row.UserID,
		Role:       row.Role,
		KeyID:      row.ID,
		Operator:   row.Operator,
	}
	if row.AgentID != nil {
		p.Kind = switchboard.PrincipalAgent
		p.AgentID = *row.AgentID
	}
	var lastUsed time.Time
	if row.LastUsedAt != nil {
		lastUsed = *row.LastUsedAt
	}
	touch := now.Sub(lastUsed) >= touchEvery
	if touch {
		lastUsed = now
	}
	var until time.Time // the cache keeps an expiring key no longer than it works
	if row.ExpiresAt != nil {
		until = *row.ExpiresAt
	}
	s.cache.put(sum, p, now, lastUsed, gen, until)
	if touch {
		s.touch(p.KeyID, now)
	}
	return p, nil
}

// keyMissing records a key that was looked up and not found, and answers the error to
// send for it: unauthorized, or rate_limited once the client address has sent many.
func (s *Store) keyMissing(ctx context.Context, sum [32]byte) error {
	if err := s.keyMisses.Missing(sum, limits.SourceFrom(ctx)); err != nil {
		return err
	}
	return errUnauthorized()
}

// parseKey returns the prefix of a well-formed key.
func parseKey(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, keyPrefix)
	if !ok || len(rest) != prefixLen+1+secretLen || rest[prefixLen] != '_' {
		return "", false
	}
	return rest[:prefixLen], true
}

// touch records that a key was used, off the request path: with its own context, since
// the request's ends with the request.
func (s *Store) touch(keyID string, at time.Time) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.db.WithContext(ctx).Model(&APIKey{}).Where("id = ?", keyID).
			Update("last_used_at", at.UTC().Truncate(time.Microsecond)).Error // best effort: a missed update only delays last_used_at
	}()
}

// keyCache holds verified keys by their SHA-256, for a short time, in bounded space.
type keyCache struct {
	mu      sync.Mutex
	entries map[[32]byte]*cacheEntry
	gen     uint64 // bumped by every invalidation, so a lookup racing a revocation is not cached
	max     int
	ttl     time.Duration
}

type cacheEntry struct {
	p        switchboard.Principal
	expires  time.Time
	lastUsed time.Time
}

func newKeyCache(max int, ttl time.Duration) *keyCache {
	return &keyCache{entries: map[[32]byte]*cacheEntry{}, max: max, ttl: ttl}
}

// get returns the cached principal and whether last_used_at is due an update (which
// it then counts as done).
func (c *keyCache) get(sum [32]byte, now time.Time) (switchboard.Principal, bool, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[sum]
	if !ok {
		return switchboard.Principal{}, false, false
	}
	if now.After(e.expires) {
		delete(c.entries, sum)
		return switchboard.Principal{}, false, false
	}
	touch := now.Sub(e.lastUsed) >= touchEvery
	if touch {
		e.lastUsed = now
	}
	return e.p, touch, true
}

func (c *keyCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put caches a principal unless an invalidation happened since gen was read, for the
// cache's lifetime but never past until (the key's expiry; zero: none).
func (c *keyCache) put(sum [32]byte, p switchboard.Principal, now, lastUsed time.Time, gen uint64, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if len(c.entries) >= c.max {
		for k, e := range c.entries {
			if now.After(e.expires) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) < c.max {
				break
			}
			delete(c.entries, k)
		}
	}
	expires := now.Add(c.ttl)
	if !until.IsZero() && until.Before(expires) {
		expires = until
	}
	c.entries[sum] = &cacheEntry{p: p, expires: expires, lastUsed: lastUsed}
}

// invalidateKey drops every cached entry of a key.
func (c *keyCache) invalidateKey(keyID string) {
	c.invalidateWhere(func(p switchboard.Principal) bool { return p.KeyID == keyID })
}

// invalidateWhere drops every cached entry whose principal matches.
func (c *keyCache) invalidateWhere(match func(switchboard.Principal) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for k, e := range c.entries {
		if match(e.p) {
			delete(c.entries, k)
		}
	}
}

// SetFeed makes the store publish key revocations and users' removals and
// role changes on the change feed, drop what it cached when any node publishes them
// (everything after a gap in the feed), and tell its OnKeysRevoked hooks of other
// nodes' revocations. Call it once, while wiring.
func (s *Store) SetFeed(b events.Bus) {
	s.feed = b
	b.Subscribe(func(e events.Event) {
		switch e.Kind {
		case events.Gap:
			s.cache.invalidateWhere(func(switchboard.Principal) bool { return true })
		case events.KeyRevoked:
			s.cache.invalidateKey(e.ID)
			if e.Origin != b.Node() {
				s.keysRevoked(e.Tenant, []string{e.ID}) // this node's hooks heard of its own
			}
		case events.UserRemoved, events.UserRoleChanged:
			s.cache.invalidateWhere(func(p switchboard.Principal) bool { return p.TenantID == e.Tenant && p.UserID == e.ID })
		}
	})
}
