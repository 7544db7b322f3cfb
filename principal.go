package switchboard

import "context"

// TenantID identifies a tenant. Every store call takes one.
type TenantID string

// PrincipalKind says what kind of caller a principal is.
type PrincipalKind string

// The principal kinds.
const (
	PrincipalUser  PrincipalKind = "user"
	PrincipalAgent PrincipalKind = "agent"
)

// Role is a user's role in its tenant.
type Role string

// The roles, from most to least powerful.
const (
	RoleOwner  Role = "owner"
	RoleAdmin  Role = "admin"
	RoleMember Role = "member"
)

// IsAdmin reports whether the role may administer its tenant.
func (r Role) IsAdmin() bool { return r == RoleOwner || r == RoleAdmin }

// Principal is who is asking: a user or an agent of one tenant, authenticated by an API key.
type Principal struct {
	TenantID   TenantID
	TenantSlug string
	Kind       PrincipalKind
	UserID     string // set for users; for agents, the user who created the agent
	AgentID    string // set for agents
	Role       Role
	KeyID      string // the API key that authenticated the request
	// Operator is set for keys of the deployment's operator, who may manage tenants.
	Operator bool
}

// IsAdmin reports whether the principal may administer its tenant: a user whose role
// is owner or admin. An agent's key never may, whatever its creator's role: the role
// it carries is its creator's, and only a person acts on it.
func (p Principal) IsAdmin() bool { return p.Kind == PrincipalUser && p.Role.IsAdmin() }

// AgentForbidden is the refusal of what an agent's key may not do, naming it ("manage
// workflows"): only a person's key or session may.
func AgentForbidden(what string) *Error {
	return Errorf(CodeForbidden, "an agent's API key cannot %s; use a person's API key", what)
}

// ID is a stable identifier of the principal within its tenant, for audit records.
func (p Principal) ID() string {
	if p.Kind == PrincipalAgent {
		return "agent:" + p.AgentID
	}
	return "user:" + p.UserID
}

type principalKey struct{}

// WithPrincipal returns a context that carries the principal.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal the context carries, if any.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
