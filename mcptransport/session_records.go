package mcptransport

import (
	"context"
	"log/slog"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/sessions"
)

// Records are the MCP sessions as database rows, as one node reads and writes them:
// the store, the node's cache of recently served records, the limits a session lives
// under, and the relay that tells the other nodes when a session ended.
type Records struct {
	Store  SessionStore
	Limits sessions.Limits
	// Relay carries the node's messages to the others; nil when the node serves alone.
	Relay Relay
	// Node names this node among those that share the relay.
	Node   string
	Logger *slog.Logger
	// Drop drops this node's state of an ended session (the sessions its endpoints hold).
	Drop func(tenant switchboard.TenantID, id string)

	cache *SessionCache
}

// NewRecords returns r ready to use, with an empty cache.
func NewRecords(r Records) *Records {
	r.cache = NewSessionCache()
	return &r
}

// Live returns the live record of a session for the principal at the endpoint of
// agentID: not found when it does not exist, ended, expired, or belongs to another
// principal, to another key or grant of the same principal, or to another URL (the
// same answer, so a stolen id tells nothing).
func (r *Records) Live(ctx context.Context, p switchboard.Principal, agentID, id string, now time.Time) (sessions.Record, error) {
	rec, ok := r.cache.Get(id, now)
	if !ok || rec.Expired(now, r.Limits) {
		// A copy may be stale (another node used the session since): read it again.
		var err error
		rec, err = r.Store.Get(ctx, p.TenantID, id)
		if err != nil {
			if switchboard.CodeOf(err) == switchboard.CodeNotFound {
				r.cache.Drop(id)
			}
			return sessions.Record{}, err
		}
		if rec.Expired(now, r.Limits) {
			r.End(ctx, p.TenantID, id)
			return sessions.Record{}, switchboard.NotFound("MCP session")
		}
		r.cache.Put(rec, now)
	}
	if rec.TenantID != p.TenantID || rec.PrincipalID != p.ID() || rec.KeyID != p.KeyID || rec.AgentID != agentID {
		return sessions.Record{}, switchboard.NotFound("MCP session")
	}
	return rec, nil
}

// Create records a new session; the sessions it evicted (over the principal's limit)
// end everywhere.
func (r *Records) Create(ctx context.Context, rec sessions.Record) error {
	evicted, err := r.Store.Create(ctx, rec, r.Limits.PerPrincipal)
	if err != nil {
		return err
	}
	for _, e := range evicted {
		r.Forget(e.TenantID, e.ID)
		r.Publish(RelayMessage{Kind: RelaySessionEnded, Tenant: e.TenantID, Session: e.ID})
	}
	return nil
}

// Touch records the session's use, at most once per touchEvery per node.
func (r *Records) Touch(ctx context.Context, tenant switchboard.TenantID, id string, now time.Time) {
	if !r.cache.Due(id, now) {
		return
	}
	if err := r.Store.Touch(context.WithoutCancel(ctx), tenant, id, now); err != nil {
		r.Logger.ErrorContext(ctx, "record MCP session use", "tenant", tenant, "err", err)
	}
}

// SetLogLevel records the log level a client set, for the nodes that restore the
// session.
func (r *Records) SetLogLevel(ctx context.Context, tenant switchboard.TenantID, id, level string) {
	if err := r.Store.SetLogLevel(context.WithoutCancel(ctx), tenant, id, level); err != nil {
		r.Logger.ErrorContext(ctx, "record MCP session log level", "tenant", tenant, "err", err)
		return
	}
	r.cache.SetLevel(id, level)
}

// SetSubscription records that a session subscribed to uri (on) or unsubscribed from
// it, for the nodes that restore the session.
func (r *Records) SetSubscription(ctx context.Context, tenant switchboard.TenantID, id, uri string, on bool) {
	if err := r.Store.SetSubscription(context.WithoutCancel(ctx), tenant, id, uri, on); err != nil {
		r.Logger.ErrorContext(ctx, "record MCP session subscription", "tenant", tenant, "err", err)
		return
	}
	r.cache.SetSubscription(id, uri, on)
}

// End deletes a session's record and tells every node to drop its state.
func (r *Records) End(ctx context.Context, tenant switchboard.TenantID, id string) {
	if err := r.Store.Delete(context.WithoutCancel(ctx), tenant, id); err != nil {
		r.Logger.ErrorContext(ctx, "end MCP session", "tenant", tenant, "err", err)
	}
	r.Forget(tenant, id)
	r.Publish(RelayMessage{Kind: RelaySessionEnded, Tenant: tenant, Session: id})
}

// Forget drops this node's copy and state of an ended session.
func (r *Records) Forget(tenant switchboard.TenantID, id string) {
	r.cache.Drop(id)
	if r.Drop != nil {
		r.Drop(tenant, id)
	}
}

// Expire ends the expired records (every node may; the deletes are idempotent).
func (r *Records) Expire(ctx context.Context, now time.Time) {
	ended, err := r.Store.DeleteExpired(ctx, now, r.Limits)
	if err != nil {
		r.Logger.Error("end expired MCP sessions", "err", err)
	}
	for _, e := range ended {
		r.Forget(e.TenantID, e.ID)
		r.Publish(RelayMessage{Kind: RelaySessionEnded, Tenant: e.TenantID, Session: e.ID})
	}
}

// Prune forgets the node's copies too old to be used again.
func (r *Records) Prune(now time.Time) { r.cache.Prune(now) }

// Stale forgets the node's copy of one session's record (another node changed it).
func (r *Records) Stale(id string) { r.cache.Drop(id) }

// StaleAll forgets every copy (messages from other nodes may have been lost).
func (r *Records) StaleAll() { r.cache.Clear() }

// Publish sends m to the other nodes; a failure is logged, as the message is an
// optimisation of what the records already say (an ended session is refused by every
// node once its cache entry ages out).
func (r *Records) Publish(m RelayMessage) {
	if r.Relay == nil {
		return
	}
	m.Node = r.Node
	if err := r.Relay.Publish(context.Background(), m); err != nil {
		r.Logger.Error("relay MCP session message", "kind", m.Kind, "tenant", m.Tenant, "err", err)
	}
}
