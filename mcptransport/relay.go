package mcptransport

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/switchboard-hub/switchboard"
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
	// RelayTaskInput carries the client's answers to the input requests of an MCP
	// task (tasks/update, 2026-07-28) to the node running the task: Principal names the
	// caller, whom the sending node checked owns the task, and Body is a
	// TaskInputResponses.
	RelayTaskInput = "task_input"
	// RelayKeepStream asks the node running a session's call to keep the call's stream
	// in the StreamLog now (CallStream.Keep): its client came back on another node with
	// Last-Event-ID (Body, a JSON string) before that node saw it leave.
	RelayKeepStream = "keep_stream"
	// RelayGap says messages may have been lost (the feed reconnected): every node
	// reads its sessions' records again.
	RelayGap = "gap"
)

// TaskInputResponses is the Body of a RelayTaskInput: the task and the client's
// inputResponses, by the key of the input request each answers.
type TaskInputResponses struct {
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// RelayMessage is one message between nodes.
type RelayMessage struct {
	Kind string `json:"kind"`
	// Node is the node that published it.
	Node    string               `json:"node"`
	Tenant  switchboard.TenantID `json:"tenant"`
	Session string               `json:"session"`
	// Principal and AgentID name the scope the session belongs to (RelayPost), or the
	// caller (RelayCancel, RelayTaskInput).
	Principal string `json:"principal,omitempty"`
	AgentID   string `json:"agent,omitempty"`
	// ProtocolVersion is the session's MCP-Protocol-Version (RelayPost).
	ProtocolVersion string `json:"protocol_version,omitempty"`
	// Body is the JSON-RPC message (RelayPost), the request's id (RelayCancel), or the
	// answers (RelayTaskInput).
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
