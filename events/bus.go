package events

import (
	"context"
	"database/sql"
	"log/slog"
	"slices"
	"sync"

	"github.com/switchboard-hub/switchboard"
)

// Bus publishes change events to every node and delivers them to this node's
// subscribers.
//
// Publish delivers to this node's subscribers before it returns, in the caller's
// goroutine, so the node that made a change sees it at once; other nodes receive it
// from the bus's own goroutine. Handlers are therefore called from several goroutines
// and must be quick and must not block: one that has slow work to do hands it off.
type Bus interface {
	// Publish sends e to every node (or to e.To only). Call it after the change is
	// committed. It sets e.Origin.
	Publish(ctx context.Context, e Event) error
	// Subscribe calls fn for every event delivered on this node, including Gap; the
	// returned function ends the subscription.
	Subscribe(fn func(Event)) (unsubscribe func())
	// Node is this node's id, as Origin and To name it.
	Node() string
}

// Publish publishes e on b, doing nothing when b is nil (a service wired without a
// feed, in tests).
func Publish(ctx context.Context, b Bus, e Event) error {
	if b == nil {
		return nil
	}
	return b.Publish(ctx, e)
}

// NewNodeID returns a random id for this process, for a bus's Node.
func NewNodeID() string { return switchboard.NewID("node") }

// subscribers is the list of handlers a bus delivers to.
type subscribers struct {
	node string
	mu   sync.Mutex
	next int
	fns  map[int]func(Event)
}

func (s *subscribers) subscribe(fn func(Event)) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fns == nil {
		s.fns = map[int]func(Event){}
	}
	id := s.next
	s.next++
	s.fns[id] = fn
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.fns, id)
	}
}

// deliver calls every handler with e, unless e is meant for another node.
func (s *subscribers) deliver(e Event) {
	if e.To != "" && e.To != s.node {
		return
	}
	s.mu.Lock()
	ids := make([]int, 0, len(s.fns))
	for id := range s.fns {
		ids = append(ids, id)
	}
	slices.Sort(ids) // in the order of subscription
	fns := make([]func(Event), 0, len(ids))
	for _, id := range ids {
		fns = append(fns, s.fns[id])
	}
	s.mu.Unlock()
	for _, fn := range fns {
		fn(e)
	}
}

// Local is the bus of a single node (SQLite): events reach this process's
// subscribers only.
type Local struct {
	subs subscribers
}

var _ Bus = (*Local)(nil)

// NewLocal returns an in-process bus for the node named node ("" for a random id).
func NewLocal(node string) *Local {
	if node == "" {
		node = NewNodeID()
	}
	return &Local{subs: subscribers{node: node}}
}

// Publish delivers e to this process's subscribers.
func (l *Local) Publish(_ context.Context, e Event) error {
	e.Origin = l.subs.node
	if _, err := encode(e); err != nil {
		return err
	}
	l.subs.deliver(e)
	return nil
}

// Deliver hands e to this process's subscribers as it is, without publishing it: what
// a bus does with another node's event, for tests that play another node (see
// internal/feedtest).
func (l *Local) Deliver(e Event) { l.subs.deliver(e) }

// Subscribe calls fn for every event published here.
func (l *Local) Subscribe(fn func(Event)) func() { return l.subs.subscribe(fn) }

// Node is this node's id.
func (l *Local) Node() string { return l.subs.node }

// Open returns the bus for a database: a PostgreSQL bus when dialect is "postgres"
// (dsn and db name the same database), a Local one otherwise. close stops it.
func Open(ctx context.Context, dialect string, db *sql.DB, dsn, node string, log *slog.Logger) (bus Bus, close func(), err error) {
	if dialect != "postgres" {
		return NewLocal(node), func() {}, nil
	}
	p, err := NewPostgres(ctx, PostgresOptions{DSN: dsn, DB: db, Node: node, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	return p, p.Close, nil
}
