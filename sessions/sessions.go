// Package sessions records the hub's MCP sessions: every session id is issued by the
// hub and kept as a row (who it belongs to, what the client negotiated, when it was
// last used), so any node can serve any session, an unknown or ended id is refused,
// and sessions are bounded per principal and expire when abandoned.
//
// Start from [Store] (rows, within [Limits]) and [Memory]; a [Record] is one session.
package sessions

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// Record is one MCP session.
type Record struct {
	// ID is the session id the client sends as Mcp-Session-Id.
	ID       string
	TenantID switchboard.TenantID
	// PrincipalID is the Principal.ID() of the key that initialized the session, and
	// KeyID that key's id (Principal.KeyID: an API key's or an OAuth grant's); only that
	// credential may use the session, not another key of the same principal.
	PrincipalID string
	KeyID       string
	// AgentID is set for a session at an agent URL.
	AgentID string
	// ProtocolVersion is the version negotiated at initialize.
	ProtocolVersion string
	// ClientInfo and Capabilities are the client's initialize parameters, restored on
	// a node that has not seen the session yet.
	ClientInfo   json.RawMessage
	Capabilities json.RawMessage
	// LogLevel is the level the client set with logging/setLevel ("" when never set).
	LogLevel string
	// Subscriptions are the resource URIs the session subscribed to
	// (resources/subscribe), restored with the session on a node that has not seen it.
	Subscriptions []string
	CreatedAt     time.Time
	// LastUsedAt is nil until the first request after initialize.
	LastUsedAt *time.Time
}

// Limits bound the sessions.
type Limits struct {
	// PerPrincipal caps the live sessions of one principal; creating one more evicts
	// the oldest idle ones.
	PerPrincipal int
	// Unused is how long a session never used after initialize lives.
	Unused time.Duration
	// Idle is how long a used session lives without a request.
	Idle time.Duration
}

// DefaultLimits are the limits of a deployment that sets none.
var DefaultLimits = Limits{PerPrincipal: 100, Unused: 2 * time.Minute, Idle: 30 * time.Minute}

// Expired reports whether the session has ended by time under the limits.
func (r Record) Expired(now time.Time, l Limits) bool {
	if r.LastUsedAt == nil {
		return now.Sub(r.CreatedAt) > l.Unused
	}
	return now.Sub(*r.LastUsedAt) > l.Idle
}

// lastActive is when the session was last used, or created.
func (r Record) lastActive() time.Time {
	if r.LastUsedAt != nil {
		return *r.LastUsedAt
	}
	return r.CreatedAt
}

// Ended names a session that was deleted (evicted or expired), so the nodes holding
// its state can drop it.
type Ended struct {
	TenantID switchboard.TenantID
	ID       string
}

// withSubscription returns subs with uri added (on) or removed, and whether that
// changed them.
func withSubscription(subs []string, uri string, on bool) ([]string, bool) {
	i := slices.Index(subs, uri)
	switch {
	case on && i < 0:
		return append(slices.Clone(subs), uri), true
	case !on && i >= 0:
		return slices.Delete(slices.Clone(subs), i, i+1), true
	}
	return subs, false
}

// NewID returns a new session id: 192 random bits.
func NewID() string { return "mcs_" + switchboard.RandomToken(24) }
