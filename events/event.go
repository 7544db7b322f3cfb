// Package events is the change feed: small typed events that say what changed (a
// connection, an agent, a key, a user, …) so that every node of a fleet drops what it
// cached about it. On SQLite the bus is in process (one node); on PostgreSQL it travels
// over LISTEN/NOTIFY, reconnects by itself and tells every subscriber to drop
// everything (a Gap) after it was disconnected, since it may have missed events then.
//
// Events carry ids, never secrets or contents: a subscriber re-reads what it needs.
//
// Start from [Bus] (publish and subscribe) and its two kinds, [Local] and [Postgres]; an
// [Event] carries a [Kind]; [PublishAfterCommit] publishes once a transaction commits.
package events

import (
	"encoding/json"
	"fmt"

	"github.com/switchboard-hub/switchboard"
)

// Kind names what changed. The kinds below are the hub's; other packages may define
// their own (for example to relay a message to the node holding an MCP session), in
// the form "area.what".
type Kind string

// The hub's change kinds.
const (
	// Gap is delivered by a bus, never published: events may have been missed (the
	// PostgreSQL listener reconnected), so every cache must be dropped.
	Gap Kind = "gap"

	ConnectionAdded    Kind = "connection.added"   // ID: connection id
	ConnectionChanged  Kind = "connection.changed" // ID: connection id (label, sharing, credentials)
	ConnectionStatus   Kind = "connection.status"  // ID: connection id (active, needs_reconnect, …)
	ConnectionRemoved  Kind = "connection.removed" // ID: connection id
	AgentChanged       Kind = "agent.changed"      // ID: agent id (created or updated)
	AgentDeleted       Kind = "agent.deleted"      // ID: agent id
	KeyRevoked         Kind = "key.revoked"        // ID: API key id
	UserRemoved        Kind = "user.removed"       // ID: user id
	UserRoleChanged    Kind = "user.role"          // ID: user id
	TenantMCPSettings  Kind = "tenant.mcp"         // the tenant's MCP settings (confirmations, …)
	RunCanceled        Kind = "run.canceled"       // ID: run id
	KeyringRotated     Kind = "keyring.rotated"    // ID: the new key id; Tenant empty
	RemoteToolsChanged Kind = "remote.tools"       // ID: connection id of a remote MCP server
)

// Connection reports whether k is one of the connection kinds.
func (k Kind) Connection() bool {
	switch k {
	case ConnectionAdded, ConnectionChanged, ConnectionStatus, ConnectionRemoved, RemoteToolsChanged:
		return true
	}
	return false
}

// Agent reports whether k changes what an agent exposes (the agent or the tenant's
// MCP settings).
func (k Kind) Agent() bool {
	return k == AgentChanged || k == AgentDeleted || k == TenantMCPSettings
}

// MaxSize is the largest encoded event a bus accepts. PostgreSQL refuses NOTIFY
// payloads of 8000 bytes or more; the rest is left for the envelope.
const MaxSize = 7900

// Event is one change. Keep it small: ids, not contents.
type Event struct {
	Kind   Kind                 `json:"k"`
	Tenant switchboard.TenantID `json:"t,omitempty"`
	// ID is what changed (see each Kind).
	ID string `json:"id,omitempty"`
	// To, when set, is the only node that delivers the event to its subscribers (a
	// relay to the node holding a session); empty means every node.
	To string `json:"to,omitempty"`
	// Data is a small payload for kinds that need one (a relayed answer, a
	// fingerprint); the whole encoded event must stay under MaxSize.
	Data json.RawMessage `json:"d,omitempty"`
	// Origin is the node that published the event; the bus sets it.
	Origin string `json:"o,omitempty"`
}

// encode returns the event's wire form, refusing one too large to travel.
func encode(e Event) ([]byte, error) {
	if e.Kind == "" {
		return nil, switchboard.Invalid("kind", "an event needs a kind")
	}
	if e.Kind == Gap {
		return nil, switchboard.Invalid("kind", "gap is delivered by the bus, not published")
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encode %s event: %w", e.Kind, err)
	}
	if len(b) > MaxSize {
		return nil, switchboard.Invalid("data", fmt.Sprintf("event %s is %d bytes encoded; the limit is %d (send an id and read the rest from the database)", e.Kind, len(b), MaxSize))
	}
	return b, nil
}
