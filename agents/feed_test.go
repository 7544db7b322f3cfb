package agents_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/internal/feedtest"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestFeedDropsPolicies: a confirm policy this node has cached gives way to the one
// another node saved as soon as the feed says so (the agent changed, the tenant's
// settings changed, or a gap), and the subscribers hear of it.
func TestFeedDropsPolicies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// change changes the agent "own" or the tenant's settings in the database, as
		// another node does, and returns the event its feed delivers here.
		change     func(t *testing.T, r *rig, own agents.Agent) events.Event
		wantAgent  string
		wantUser   string
		wantNotice func(r *rig, own agents.Agent) string // tenant/agent the subscribers hear
	}{
		{name: "agent changed", change: func(t *testing.T, r *rig, own agents.Agent) events.Event {
			own.Confirm = agents.ConfirmNever
			if err := r.store.Update(context.Background(), r.a.TenantID, &own, own.Version); err != nil {
				t.Fatal(err)
			}
			return events.Event{Kind: events.AgentChanged, Tenant: r.a.TenantID, ID: own.ID}
		}, wantAgent: "never", wantUser: "never", wantNotice: func(r *rig, own agents.Agent) string { return string(r.a.TenantID) + "/" + own.ID }},
		{name: "settings changed", change: func(t *testing.T, r *rig, own agents.Agent) events.Event {
			if err := r.store.PutSettings(context.Background(), r.a.TenantID, &agents.Settings{Confirm: agents.ConfirmDestructive, ToolMode: agents.ToolModeAll}); err != nil {
				t.Fatal(err)
			}
			return events.Event{Kind: events.TenantMCPSettings, Tenant: r.a.TenantID}
		}, wantAgent: "always", wantUser: "destructive", wantNotice: func(r *rig, _ agents.Agent) string { return string(r.a.TenantID) + "/" }},
		{name: "gap", change: func(t *testing.T, r *rig, own agents.Agent) events.Event {
			own.Confirm = agents.ConfirmNever
			if err := r.store.Update(context.Background(), r.a.TenantID, &own, own.Version); err != nil {
				t.Fatal(err)
			}
			return events.Event{Kind: events.Gap}
		}, wantAgent: "never", wantUser: "never", wantNotice: func(*rig, agents.Agent) string { return "/" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testdb.Each(t, func(t *testing.T, db *gorm.DB) {
				t.Parallel()
				ctx := context.Background()
				r := newRig(t, db)
				bus := feedtest.New()
				r.svc.SetFeed(bus)
				own, err := r.svc.Create(ctx, r.a, agents.Input{Name: "Own", Confirm: agents.ConfirmAlways})
				if err != nil {
					t.Fatal(err)
				}
				agent := switchboard.Principal{TenantID: r.a.TenantID, Kind: switchboard.PrincipalAgent, UserID: r.a.UserID, AgentID: own.ID}
				policies := func() []string {
					t.Helper()
					var out []string
					for _, p := range []switchboard.Principal{agent, r.member} {
						pol, err := r.svc.Policy(ctx, p)
						if err != nil {
							t.Fatal(err)
						}
						out = append(out, pol.Confirm)
					}
					return out
				}
				if diff := cmp.Diff([]string{"always", "never"}, policies()); diff != "" {
					t.Fatalf("before the change (-want +got):\n%s", diff)
				}
				bus.Deliver(tt.change(t, r, own))
				if diff := cmp.Diff([]string{tt.wantAgent, tt.wantUser}, policies()); diff != "" {
					t.Errorf("policies after the other node's change (-want +got):\n%s", diff)
				}
				notice := tt.wantNotice(r, own)
				if got := r.notified(); !slices.Contains(got, notice) {
					t.Errorf("subscribers heard %v, want %s among them", got, notice)
				}
			})
		})
	}
}

// TestFeedPublishesAgentChanges: creating, updating and deleting an agent and changing
// the tenant's settings are published with the tenant and the agent's id.
func TestFeedPublishesAgentChanges(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		r := newRig(t, db)
		bus := feedtest.New()
		r.svc.SetFeed(bus)
		a, err := r.svc.Create(ctx, r.a, agents.Input{Name: "Triage"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.svc.Update(ctx, r.a, a.ID, a.Version, agents.Input{Name: "Triage 2"}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.svc.PutSettings(ctx, r.a, agents.Settings{Confirm: agents.ConfirmDestructive, ToolMode: agents.ToolModeAll}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.svc.Delete(ctx, r.a, a.ID); err != nil {
			t.Fatal(err)
		}
		var got []events.Event
		for _, e := range bus.Published() {
			e.Origin = ""
			got = append(got, e)
		}
		want := []events.Event{
			{Kind: events.AgentChanged, Tenant: r.a.TenantID, ID: a.ID},
			{Kind: events.AgentChanged, Tenant: r.a.TenantID, ID: a.ID},
			{Kind: events.TenantMCPSettings, Tenant: r.a.TenantID},
			{Kind: events.AgentDeleted, Tenant: r.a.TenantID, ID: a.ID},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("published (-want +got):\n%s", diff)
		}
	})
}
