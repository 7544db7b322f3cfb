package agents_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
	"github.com/switchboard-hub/switchboard/tenants"
)

// rig is two tenants, each with an owner, a member and a shared GitHub connection, and
// the agents service on a migrated database.
type rig struct {
	svc     *agents.Service
	store   *agents.Store
	a, b    switchboard.Principal // owners
	member  switchboard.Principal // tenant a's member
	connA   string                // tenant a's shared GitHub connection
	private string                // tenant a's owner's private GitHub connection
	connB   string
	conns   *connections.Store

	mu      sync.Mutex
	changes []string
}

// newRig builds the rig; extra providers join the registry.
func newRig(t *testing.T, db *gorm.DB, extra ...providers.Spec) *rig {
	t.Helper()
	ctx := context.Background()
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	cs := connections.NewStore(db, kr)
	reg := providers.NewRegistry()
	if err := all.Register(reg); err != nil {
		t.Fatal(err)
	}
	for _, s := range extra {
		if err := reg.Register(s); err != nil {
			t.Fatal(err)
		}
	}
	r := &rig{conns: cs}
	principal := func(slug string, role switchboard.Role, email string) switchboard.Principal {
		tn, err := ts.TenantBySlug(ctx, slug)
		if err != nil {
			tn, err = ts.CreateTenant(ctx, slug, slug)
			if err != nil {
				t.Fatal(err)
			}
		}
		u, err := ts.CreateUser(ctx, tn.ID, email, role)
		if err != nil {
			t.Fatal(err)
		}
		return switchboard.Principal{TenantID: tn.ID, TenantSlug: slug, Kind: switchboard.PrincipalUser, UserID: u.ID, Role: role}
	}
	r.a = principal("alpha", switchboard.RoleOwner, "owner@alpha.test")
	r.member = principal("alpha", switchboard.RoleMember, "member@alpha.test")
	r.b = principal("beta", switchboard.RoleOwner, "owner@beta.test")
	conn := func(p switchboard.Principal, shared bool) string {
		c := connections.Connection{OwnerUserID: p.UserID, Provider: "github", AuthKind: providers.AuthAPIKey, AccountID: "1", AccountLabel: "octocat", Shared: shared}
		if err := cs.Create(ctx, p.TenantID, &c, connections.Credentials{AccessToken: "ghp_x"}); err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	r.connA, r.private, r.connB = conn(r.a, true), conn(r.a, false), conn(r.b, true)
	r.store = agents.NewStore(db)
	r.svc = agents.NewService(r.store, reg, connections.NewService(cs, reg, &providers.Transports{}, nil))
	r.svc.Subscribe(func(tenant switchboard.TenantID, agentID string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.changes = append(r.changes, string(tenant)+"/"+agentID)
	})
	return r
}

func (r *rig) notified() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.changes)
}

func TestAgentsTenancy(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		r := newRig(t, db)
		a, err := r.svc.Create(ctx, r.a, agents.Input{Name: "Triage", Instructions: "Sort.", Tools: []agents.ToolInput{{Tool: "github_get_issue", ConnectionID: r.connA}}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{string(r.a.TenantID) + "/" + a.ID}, r.notified()); diff != "" {
			t.Errorf("notifications after create (-want +got):\n%s", diff)
		}
		tests := []struct {
			name string
			do   func() error
		}{
			{name: "get", do: func() error { _, err := r.svc.Get(ctx, r.b, a.ID); return err }},
			{name: "update", do: func() error {
				_, err := r.svc.Update(ctx, r.b, a.ID, 1, agents.Input{Name: "Mine"})
				return err
			}},
			{name: "delete", do: func() error { _, err := r.svc.Delete(ctx, r.b, a.ID); return err }},
			{name: "manage keys", do: func() error { _, err := r.svc.Manageable(ctx, r.b, a.ID); return err }},
			{name: "store get", do: func() error { _, err := r.store.Get(ctx, r.b.TenantID, a.ID); return err }},
			{name: "store delete", do: func() error { return r.store.Delete(ctx, r.b.TenantID, a.ID) }},
		}
		for _, tt := range tests {
			t.Run("another tenant's "+tt.name, func(t *testing.T) {
				if code := switchboard.CodeOf(tt.do()); code != switchboard.CodeNotFound {
					t.Errorf("code %q, want not_found", code)
				}
			})
		}
		got, err := r.svc.Get(ctx, r.a, a.ID)
		if err != nil || got.Name != "Triage" || got.Version != 1 || len(got.Tools) != 1 {
			t.Errorf("after the other tenant's attempts: %+v, %v", got, err)
		}
		if list, _ := r.svc.List(ctx, r.b); len(list) != 0 {
			t.Errorf("tenant b lists %+v", list)
		}
		if len(r.notified()) != 1 {
			t.Errorf("refused changes notified: %v", r.notified())
		}
		ids, err := r.store.UsingConnection(ctx, r.a.TenantID, r.connA)
		if err != nil || !cmp.Equal(ids, []string{a.ID}) {
			t.Errorf("agents using %s = %v, %v", r.connA, ids, err)
		}
		if ids, _ := r.store.UsingConnection(ctx, r.b.TenantID, r.connA); len(ids) != 0 {
			t.Errorf("tenant b sees agents using a's connection: %v", ids)
		}
	})
}

func TestConfirmPolicy(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		r := newRig(t, db)
		inherits, err := r.svc.Create(ctx, r.a, agents.Input{Name: "Inherits"})
		if err != nil {
			t.Fatal(err)
		}
		own, err := r.svc.Create(ctx, r.a, agents.Input{Name: "Own", Confirm: agents.ConfirmAlways, ToolMode: agents.ToolModeSearch})
		if err != nil {
			t.Fatal(err)
		}
		agentOf := func(id string) switchboard.Principal {
			return switchboard.Principal{TenantID: r.a.TenantID, Kind: switchboard.PrincipalAgent, UserID: r.a.UserID, AgentID: id}
		}
		check := func(step string, want map[string]string) {
			t.Helper()
			got := map[string]string{}
			for name, p := range map[string]switchboard.Principal{"user": r.member, "inherits": agentOf(inherits.ID), "own": agentOf(own.ID), "other tenant": r.b} {
				policy, err := r.svc.Policy(ctx, p)
				if err != nil {
					t.Fatalf("%s: %s: %v", step, name, err)
				}
				got[name] = policy.Confirm
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: policies (-want +got):\n%s", step, diff)
			}
		}
		check("defaults", map[string]string{"user": "never", "inherits": "never", "own": "always", "other tenant": "never"})
		if _, err := r.svc.PutSettings(ctx, r.member, agents.Settings{Confirm: agents.ConfirmDestructive, ToolMode: agents.ToolModeAll}); switchboard.CodeOf(err) != switchboard.CodeForbidden {
			t.Errorf("a member changed the tenant's settings: %v", err)
		}
		if _, err := r.svc.PutSettings(ctx, r.a, agents.Settings{Confirm: agents.ConfirmDestructive, ToolMode: agents.ToolModeAll}); err != nil {
			t.Fatal(err)
		}
		check("after the tenant's change", map[string]string{"user": "destructive", "inherits": "destructive", "own": "always", "other tenant": "never"})
		if _, err := r.svc.Policy(ctx, switchboard.Principal{TenantID: r.b.TenantID, Kind: switchboard.PrincipalAgent, AgentID: own.ID}); switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Errorf("an agent key of tenant b naming a's agent: %v, want not_found", err)
		}
		if !slices.Contains(r.notified(), string(r.a.TenantID)+"/") {
			t.Errorf("a settings change notified %v, want %s/ (every scope of the tenant)", r.notified(), r.a.TenantID)
		}
	})
}

func TestPrivateConnectionsStayTheirOwners(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		r := newRig(t, db)
		// The member cannot bind the owner's private connection (nor see it).
		_, err := r.svc.Create(ctx, r.member, agents.Input{Name: "Sneaky", Tools: []agents.ToolInput{{Tool: "github_get_issue", ConnectionID: r.private}}})
		if e := switchboard.AsError(err); e.Code != switchboard.CodeInvalid || e.Field != "tools[0].connection_id" {
			t.Errorf("member binding the owner's private connection: %v", err)
		}
		// The member's agent: the admin may edit it, but not bind the admin's private
		// connection, which the agent's creator (the member) may not use.
		mine, err := r.svc.Create(ctx, r.member, agents.Input{Name: "Member's"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.svc.Update(ctx, r.a, mine.ID, mine.Version, agents.Input{Name: "Member's", Tools: []agents.ToolInput{{Tool: "github_get_issue", ConnectionID: r.private}}})
		if e := switchboard.AsError(err); e.Code != switchboard.CodeInvalid || e.Field != "tools[0].connection_id" {
			t.Errorf("admin binding a private connection to the member's agent: %v", err)
		}
		updated, err := r.svc.Update(ctx, r.a, mine.ID, mine.Version, agents.Input{Name: "Member's", Tools: []agents.ToolInput{{Tool: "github_get_issue", ConnectionID: r.connA}}})
		if err != nil || updated.Version != 2 || updated.CreatedBy != r.member.UserID {
			t.Errorf("admin editing the member's agent: %+v, %v", updated, err)
		}
		if _, err := r.svc.Delete(ctx, r.member, mine.ID); err != nil {
			t.Errorf("the creator deleting its agent: %v", err)
		}
	})
}
