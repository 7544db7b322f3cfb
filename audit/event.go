// Package audit records one event per tool call and per security-relevant action, in
// batches off the request path, and lists them per tenant.
//
// Start from [Writer] (the batched writer behind [Recorder]), [Event] (one row, of a
// [Kind]) and [Store] (the listing, by [ListOptions]).
package audit

import (
	"time"

	"github.com/switchboard-hub/switchboard"
)

// Kind says what an event records.
type Kind string

// The event kinds.
const (
	KindToolCall          Kind = "tool_call"
	KindConnectionCreated Kind = "connection_created"
	KindConnectionDeleted Kind = "connection_deleted"
	// KindConnectionReconnected: a connection got new credentials in place, or the
	// attempt was refused (the outcome says why).
	KindConnectionReconnected Kind = "connection_reconnected"
	// KindConnectionNeedsReconnect: the provider refused a connection's credentials.
	KindConnectionNeedsReconnect Kind = "connection_needs_reconnect"
	// KindConnectionRefreshFailed: a token refresh failed (the detail says why, never a token).
	KindConnectionRefreshFailed Kind = "connection_refresh_failed"
	// KindConnectionHandedOver: a removed user's connection got a new owner.
	KindConnectionHandedOver Kind = "connection_handed_over"
	// KindConnectionRevokeFailed: a disconnect could not revoke the token at the provider.
	KindConnectionRevokeFailed Kind = "connection_revoke_failed"
	// KindConnectionRateLimitSet: an admin set a connection's own rate limit, or gave it
	// its provider's again (the detail says which).
	KindConnectionRateLimitSet Kind = "connection_rate_limit_set"
	// KindOAuthConnectFailed: an OAuth connect flow ended without a connection.
	KindOAuthConnectFailed Kind = "oauth_connect_failed"
	KindOAuthAppSet        Kind = "oauth_app_set"
	KindOAuthAppDeleted    Kind = "oauth_app_deleted"
	KindKeyCreated         Kind = "key_created"
	KindKeyRevoked         Kind = "key_revoked"
	// KindGrantRevoked is a person revoking an MCP client's access (Connected apps).
	KindGrantRevoked  Kind = "grant_revoked"
	KindTenantCreated Kind = "tenant_created"
	KindUserCreated   Kind = "user_created"
	KindUserInvited   Kind = "user_invited"
	// KindInvitationRevoked: an admin revoked a pending invitation.
	KindInvitationRevoked Kind = "invitation_revoked"
	// KindUserRoleChanged: an admin changed a user's role (the detail says from and to).
	KindUserRoleChanged Kind = "user_role_changed"
	// KindUserRemoved: an admin removed a user, revoking their keys and ending their sessions.
	KindUserRemoved Kind = "user_removed"
	// KindKeysRotated: `switchboard keys rotate` re-sealed the tenant's secrets under a new key.
	KindKeysRotated Kind = "keys_rotated"
	// KindOpenAPIChanged: an admin added or deleted one of the tenant's APIs (its OpenAPI
	// description; the detail says which).
	KindOpenAPIChanged Kind = "openapi_changed"
	// KindSSOSignIn: a person signed in, or was refused, through the tenant's identity
	// provider (single sign-on); the detail says how, or why not.
	KindSSOSignIn Kind = "sso_sign_in"
	// KindSSOSet and KindSSODeleted: an owner set or removed the tenant's single sign-on.
	KindSSOSet     Kind = "sso_set"
	KindSSODeleted Kind = "sso_deleted"
	// KindSSOLinked: a person linked their account to the tenant's identity provider
	// (confirming their password), or an owner approved such a link, or a link was
	// refused.
	KindSSOLinked Kind = "sso_linked"
)

// Event is one audit record. It never holds credentials, and arguments only as a hash.
type Event struct {
	ID             string               `gorm:"primaryKey;size:40" json:"id"`
	TenantID       switchboard.TenantID `gorm:"size:40;not null;index:idx_audit_tenant_at,priority:1" json:"-"`
	At             time.Time            `gorm:"not null;index:idx_audit_tenant_at,priority:2" json:"at"`
	Kind           Kind                 `gorm:"size:32;not null" json:"kind"`
	Principal      string               `gorm:"size:64;not null" json:"principal"` // "user:…" or "agent:…"
	KeyID          string               `gorm:"size:40" json:"key_id,omitempty"`
	Tool           string               `gorm:"size:64" json:"tool,omitempty"`
	ConnectionID   string               `gorm:"size:40" json:"connection_id,omitempty"`
	Outcome        string               `gorm:"size:32;not null" json:"outcome"` // "ok" or an error code
	UpstreamStatus int                  `json:"upstream_status,omitempty"`
	LatencyMicros  int64                `json:"latency_us,omitempty"`
	ArgsHash       string               `gorm:"size:64" json:"args_sha256,omitempty"`
	Detail         string               `gorm:"size:500" json:"detail,omitempty"`
	// Node is the node that sent the call's upstream request, on a row written before
	// it left (OutcomeInFlight): if that node goes away before the row is completed,
	// the row is marked OutcomeUnknown (MarkUnfinished).
	Node string `gorm:"size:64;not null;default:''" json:"-"`
}

// The outcomes of a tool call's row besides "ok" and the error codes.
const (
	// OutcomeInFlight is the outcome of a call's row written before its upstream
	// request leaves; the call's completion overwrites it.
	OutcomeInFlight = "in_flight"
	// OutcomeUnknown is the outcome of a call whose request may have reached its
	// upstream but whose answer was lost: its node stopped (killed, or shut down with
	// the call under way), or the connection broke.
	OutcomeUnknown = string(switchboard.CodeOutcomeUnknown)
)

// Recorder takes events; the batched Writer is the production one.
type Recorder interface {
	Record(e Event)
}

// TableName is the table events live in.
func (Event) TableName() string { return "audit_events" }
