package switchboard_test

import (
	"testing"

	"github.com/switchboard-hub/switchboard"
)

// TestPrincipalIsAdmin: only a person whose role is owner or admin administers the
// tenant; an agent's key never does, though it carries its creator's role.
func TestPrincipalIsAdmin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		kind switchboard.PrincipalKind
		role switchboard.Role
		want bool
	}{
		{name: "owner", kind: switchboard.PrincipalUser, role: switchboard.RoleOwner, want: true},
		{name: "admin", kind: switchboard.PrincipalUser, role: switchboard.RoleAdmin, want: true},
		{name: "member", kind: switchboard.PrincipalUser, role: switchboard.RoleMember},
		{name: "agent of an owner", kind: switchboard.PrincipalAgent, role: switchboard.RoleOwner},
		{name: "agent of an admin", kind: switchboard.PrincipalAgent, role: switchboard.RoleAdmin},
		{name: "agent of a member", kind: switchboard.PrincipalAgent, role: switchboard.RoleMember},
		{name: "no kind", role: switchboard.RoleOwner},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := switchboard.Principal{TenantID: "ten_a", Kind: tt.kind, UserID: "usr_a", Role: tt.role}
			if p.Kind == switchboard.PrincipalAgent {
				p.AgentID = "agt_a"
			}
			if got := p.IsAdmin(); got != tt.want {
				t.Errorf("IsAdmin() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestAgentForbidden: the refusal is a 403 that says an agent's key cannot do what
// was asked.
func TestAgentForbidden(t *testing.T) {
	t.Parallel()
	e := switchboard.AgentForbidden("manage workflows")
	if e.Code != switchboard.CodeForbidden || e.Message != "an agent's API key cannot manage workflows; use a person's API key" {
		t.Errorf("AgentForbidden = %q (%s)", e.Message, e.Code)
	}
}
