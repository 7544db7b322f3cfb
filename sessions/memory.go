package sessions

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// Memory keeps the sessions of a single process in memory, with the Store's rules:
// for a hub without a database (tests, embedding).
type Memory struct {
	mu   sync.Mutex
	byID map[string]Record
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{byID: map[string]Record{}} }

// Create records a new session and evicts the principal's oldest idle sessions beyond
// limit (0: no cap).
func (m *Memory) Create(_ context.Context, r Record, limit int) ([]Ended, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.byID[r.ID] = r
	if limit <= 0 {
		return nil, nil
	}
	var mine []Record
	for _, o := range m.byID {
		if o.TenantID == r.TenantID && o.PrincipalID == r.PrincipalID {
			mine = append(mine, o)
		}
	}
	if len(mine) <= limit {
		return nil, nil
	}
	slices.SortFunc(mine, func(a, b Record) int {
		if c := b.lastActive().Compare(a.lastActive()); c != 0 {
			return c
		}
		return -compareStrings(a.ID, b.ID)
	})
	var evicted []Ended
	for _, o := range mine[limit:] {
		delete(m.byID, o.ID)
		evicted = append(evicted, Ended{TenantID: o.TenantID, ID: o.ID})
	}
	return evicted, nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Get returns a session of the tenant.
func (m *Memory) Get(_ context.Context, tenant switchboard.TenantID, id string) (Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.byID[id]
	if !ok || r.TenantID != tenant {
		return Record{}, switchboard.NotFound("MCP session")
	}
	if r.LastUsedAt != nil {
		t := *r.LastUsedAt
		r.LastUsedAt = &t
	}
	r.Subscriptions = slices.Clone(r.Subscriptions)
	return r, nil
}

// Touch records that the session was used at t.
func (m *Memory) Touch(_ context.Context, tenant switchboard.TenantID, id string, t time.Time) error {
	m.update(tenant, id, func(r *Record) { r.LastUsedAt = &t })
	return nil
}

// SetLogLevel records the log level the client asked for.
func (m *Memory) SetLogLevel(_ context.Context, tenant switchboard.TenantID, id, level string) error {
	m.update(tenant, id, func(r *Record) { r.LogLevel = level })
	return nil
}

// SetSubscription records that the session subscribed to uri (on) or unsubscribed
// from it.
func (m *Memory) SetSubscription(_ context.Context, tenant switchboard.TenantID, id, uri string, on bool) error {
	m.update(tenant, id, func(r *Record) { r.Subscriptions, _ = withSubscription(r.Subscriptions, uri, on) })
	return nil
}

func (m *Memory) update(tenant switchboard.TenantID, id string, fn func(*Record)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.byID[id]; ok && r.TenantID == tenant {
		fn(&r)
		m.byID[id] = r
	}
}

// Delete ends a session of the tenant.
func (m *Memory) Delete(_ context.Context, tenant switchboard.TenantID, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.byID[id]; ok && r.TenantID == tenant {
		delete(m.byID, id)
	}
	return nil
}

// DeleteExpired deletes the sessions expired at now and returns them.
func (m *Memory) DeleteExpired(_ context.Context, now time.Time, l Limits) ([]Ended, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Ended
	for id, r := range m.byID {
		if r.Expired(now, l) {
			delete(m.byID, id)
			out = append(out, Ended{TenantID: r.TenantID, ID: id})
		}
	}
	return out, nil
}
