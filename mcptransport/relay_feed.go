package mcptransport

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchboard-hub/switchboard/events"
)

// The change-feed kinds that carry the session relay.
const (
	KindSessionEnded events.Kind = "mcp.session_ended"  // ID: session id
	KindSessionPost  events.Kind = "mcp.session_post"   // ID: session id; Data: the message
	KindCallCanceled events.Kind = "mcp.call_cancelled" // ID: the caller's principal id; Data: the request's id
	KindKeepStream   events.Kind = "mcp.keep_stream"    // ID: session id; Data: the Last-Event-ID
	KindTaskInput    events.Kind = "mcp.task_input"     // ID: the caller's principal id; Data: the task and its answers
)

// FeedRelay carries the session relay on the hub's change feed: in process on SQLite,
// over PostgreSQL's LISTEN/NOTIFY between nodes. A relayed message must fit an event
// (events.MaxSize): an elicitation answer or a cancellation does; a larger one is
// refused with an invalid error (field data).
func FeedRelay(bus events.Bus) Relay { return feedRelay{bus: bus} }

type feedRelay struct{ bus events.Bus }

// relayData is the event payload: the message without what the event itself carries.
type relayData struct {
	Node            string          `json:"n"`
	Principal       string          `json:"p,omitempty"`
	AgentID         string          `json:"a,omitempty"`
	ProtocolVersion string          `json:"v,omitempty"`
	Body            json.RawMessage `json:"b,omitempty"`
}

func (f feedRelay) Publish(ctx context.Context, m RelayMessage) error {
	e := events.Event{Tenant: m.Tenant, ID: m.Session}
	switch m.Kind {
	case RelaySessionEnded:
		e.Kind = KindSessionEnded
	case RelayPost:
		e.Kind = KindSessionPost
	case RelayCancel:
		e.Kind, e.ID = KindCallCanceled, m.Principal
	case RelayKeepStream:
		e.Kind = KindKeepStream
	case RelayTaskInput:
		e.Kind, e.ID = KindTaskInput, m.Principal
	default:
		return fmt.Errorf("relay %q: not a relay message kind", m.Kind)
	}
	data, err := json.Marshal(relayData{Node: m.Node, Principal: m.Principal, AgentID: m.AgentID, ProtocolVersion: m.ProtocolVersion, Body: m.Body})
	if err != nil {
		return fmt.Errorf("encode relay message: %w", err)
	}
	e.Data = data
	return f.bus.Publish(ctx, e)
}

// Subscribe delivers the relay's events, and a Gap (events may have been missed) as
// RelayGap. The adapter skips its own messages by their node, so adapters may share a
// bus (several nodes in one process, in tests).
func (f feedRelay) Subscribe(fn func(RelayMessage)) func() {
	return f.bus.Subscribe(func(e events.Event) {
		switch e.Kind {
		case events.Gap:
			fn(RelayMessage{Kind: RelayGap})
			return
		case KindSessionEnded, KindSessionPost, KindCallCanceled, KindKeepStream, KindTaskInput:
		default:
			return
		}
		var d relayData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return
		}
		m := RelayMessage{Kind: RelaySessionEnded, Node: d.Node, Tenant: e.Tenant, Session: e.ID}
		switch e.Kind {
		case KindSessionPost:
			m.Kind, m.Principal, m.AgentID, m.ProtocolVersion, m.Body = RelayPost, d.Principal, d.AgentID, d.ProtocolVersion, d.Body
		case KindCallCanceled:
			m.Kind, m.Session, m.Principal, m.AgentID, m.Body = RelayCancel, "", d.Principal, d.AgentID, d.Body
		case KindKeepStream:
			m.Kind, m.Principal, m.AgentID, m.Body = RelayKeepStream, d.Principal, d.AgentID, d.Body
		case KindTaskInput:
			m.Kind, m.Session, m.Principal, m.AgentID, m.Body = RelayTaskInput, "", d.Principal, d.AgentID, d.Body
		}
		fn(m)
	})
}
