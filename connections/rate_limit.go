package connections

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/limits"
)

// RateLimit is a connection's own token bucket, which replaces its provider's
// (providers.Spec.RateLimit, SWITCHBOARD_<PROVIDER>_RATE_LIMIT) for that connection:
// PerSecond requests a second sustained, Burst at once. Like the provider's, it is
// kept by the fleet together (in Redis when configured), and the windows the upstream
// announces (Retry-After, X-RateLimit-Remaining: 0) apply on top of it.
type RateLimit struct {
	PerSecond float64 `json:"per_second"`
	Burst     int     `json:"burst"`
}

// The bounds of a connection's own rate limit.
const (
	MaxRatePerSecond = 1000
	MaxRateBurst     = 10000
)

// Rate is the limit as the limits package keeps it.
func (r RateLimit) Rate() limits.Rate { return limits.Rate{PerSecond: r.PerSecond, Burst: r.Burst} }

// Check refuses a limit out of bounds, naming the field and the reason.
func (r RateLimit) Check() error {
	if math.IsNaN(r.PerSecond) || r.PerSecond <= 0 || r.PerSecond > MaxRatePerSecond {
		return switchboard.Invalid("rate_limit.per_second", fmt.Sprintf("must be more than 0 and at most %d requests a second (0.5 is one every two seconds)", MaxRatePerSecond))
	}
	if r.Burst < 1 || r.Burst > MaxRateBurst {
		return switchboard.Invalid("rate_limit.burst", fmt.Sprintf("must be from 1 to %d requests", MaxRateBurst))
	}
	return nil
}

// OwnRateLimit is the connection's own rate limit, if an admin set one.
func (c *Connection) OwnRateLimit() (RateLimit, bool) {
	if c.RatePerSecond <= 0 {
		return RateLimit{}, false
	}
	return RateLimit{PerSecond: c.RatePerSecond, Burst: c.RateBurst}, true
}

// SetRateLimit gives the connection id its own rate limit (nil: its provider's again).
// Only a tenant admin may; a limit out of bounds changes nothing. Every node applies
// it from its next call on the connection.
func (s *Service) SetRateLimit(ctx context.Context, p switchboard.Principal, id string, rl *RateLimit) (Connection, error) {
	if p.Kind != switchboard.PrincipalUser || !p.Role.IsAdmin() {
		return Connection{}, switchboard.Errorf(switchboard.CodeForbidden, "only a tenant admin can set a connection's rate limit")
	}
	if rl != nil {
		if err := rl.Check(); err != nil {
			return Connection{}, err
		}
	}
	existing, err := s.Get(ctx, p, id)
	if err != nil {
		return Connection{}, err
	}
	updates := map[string]any{"rate_per_second": 0.0, "rate_burst": 0, "version": existing.Version + 1, "updated_at": time.Now().UTC().Truncate(time.Microsecond)}
	detail := "the provider's"
	if rl != nil {
		updates["rate_per_second"], updates["rate_burst"] = rl.PerSecond, rl.Burst
		detail = fmt.Sprintf("%g/s, burst %d", rl.PerSecond, rl.Burst)
	}
	c, err := s.store.update(ctx, p.TenantID, existing.ID, existing.Version, updates)
	if err != nil {
		return Connection{}, err
	}
	s.record(p, audit.KindConnectionRateLimitSet, c.ID, "", c.Provider+" "+detail)
	s.notify(ctx, events.ConnectionChanged, p.TenantID, c.ID)
	return c, nil
}
