package mcpadapter

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/mcptransport"
)

// Relay carries what one node must tell the others about MCP sessions: a session that
// ended (deleted, evicted, expired), and a message posted to one node that belongs to
// another (the answer to a server-to-client request pending there, the cancellation
// of a call running there). Every node publishes and every node subscribes; a node
// ignores what it does not hold. In one process, NewLocalRelay; across processes, the
// hub's change feed (FeedRelay).
type Relay interface {
	Publish(ctx context.Context, m RelayMessage) error
	// Subscribe calls fn for every message published, by any node, until stop is called.
	Subscribe(fn func(RelayMessage)) (stop func())
}

// The kinds of relay messages.
const (
	// RelaySessionEnded tells the nodes to forget a session.
	RelaySessionEnded = "session_ended"
	// RelayPost carries a JSON-RPC message posted to a session to the node that can
	// act on it.
	RelayPost = "session_post"
	// RelayCancel carries the cancellation of a stateless (2026-07-28) request, which
	// has no session, to the node running it: Principal and AgentID name the caller's
	// scope, Body is the request's JSON-RPC id.
	RelayCancel = "call_cancelled"
	// RelayGap says messages may have been lost (the feed reconnected): every node
	// reads its sessions' records again.
	RelayGap = "gap"
)

// RelayMessage is one message between nodes.
type RelayMessage struct {
	Kind string `json:"kind"`
	// Node is the node that published it.
	Node    string               `json:"node"`
	Tenant  switchboard.TenantID `json:"tenant"`
	Session string               `json:"session"`
	// Principal and AgentID name the scope the session belongs to (RelayPost).
	Principal string `json:"principal,omitempty"`
	AgentID   string `json:"agent,omitempty"`
	// ProtocolVersion is the session's MCP-Protocol-Version (RelayPost).
	ProtocolVersion string `json:"protocol_version,omitempty"`
	// Body is the JSON-RPC message (RelayPost).
	Body json.RawMessage `json:"body,omitempty"`
}

// LocalRelay is a Relay between the adapters of one process: a single node, or tests
// that run several nodes side by side.
type LocalRelay struct {
	mu   sync.Mutex
	next int
	subs map[int]func(RelayMessage)
}

// NewLocalRelay returns a LocalRelay.
func NewLocalRelay() *LocalRelay { return &LocalRelay{subs: map[int]func(RelayMessage){}} }

// Publish hands m to every subscriber in turn and returns when they have taken it. A
// subscriber may publish in turn (no lock is held while it runs).
func (l *LocalRelay) Publish(_ context.Context, m RelayMessage) error {
	l.mu.Lock()
	fns := make([]func(RelayMessage), 0, len(l.subs))
	for _, fn := range l.subs {
		fns = append(fns, fn)
	}
	l.mu.Unlock()
	for _, fn := range fns {
		fn(m)
	}
	return nil
}

// Subscribe adds fn until stop is called.
func (l *LocalRelay) Subscribe(fn func(RelayMessage)) func() {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := l.next
	l.next++
	l.subs[id] = fn
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.subs, id)
	}
}

var _ Relay = (*LocalRelay)(nil)

// publish sends m to the other nodes; a failure is logged, as the message is an
// optimisation of what the records already say (an ended session is refused by every
// node once its cache entry ages out).
func (a *Adapter) publish(m RelayMessage) {
	if a.opts.Relay == nil {
		return
	}
	m.Node = a.node
	if err := a.opts.Relay.Publish(context.Background(), m); err != nil {
		a.opts.Logger.Error("relay MCP session message", "kind", m.Kind, "tenant", m.Tenant, "err", err)
	}
}

// relayed acts on a message from another node.
func (a *Adapter) relayed(m RelayMessage) {
	if m.Node == a.node {
		return
	}
	switch m.Kind {
	case RelayGap:
		a.cache.Clear()
	case RelaySessionEnded:
		a.forgetSession(m.Tenant, m.Session)
	case RelayCancel:
		if mcptransport.ValidID(m.Body) {
			a.modern.cancel(modernKey(m.Principal, m.AgentID, m.Body))
		}
	case RelayPost:
		// What the message changes (a log level) is read again from the record.
		a.cache.Drop(m.Session)
		a.mu.Lock()
		s := a.scopes[string(m.Tenant)+"|"+m.Principal+"|"+m.AgentID]
		if s != nil {
			s.inFlight.Add(1)
		}
		a.mu.Unlock()
		if s == nil {
			return
		}
		defer s.done()
		if !s.holds(m.Session) {
			return
		}
		if a.answerCall(m.Session, m.Body) {
			return // the answer to a request the hub sent on a call's stream here
		}
		a.cancelSessionCall(m.Session, m.Body) // a relayed cancellation silences the call's answer here
		body, _ := s.ids.Incoming(m.Body)      // an answer, with the id this node's server gave its request
		s.inject(context.Background(), m.Session, m.ProtocolVersion, body)
	}
}
