package agents_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers/hub"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/workflows"
)

// TestSelection: an agent's key may call its agent's tools, each on its connection
// (a workflow on none); a user's principal has no selection, and an agent of another
// tenant or one deleted selects nothing.
func TestSelection(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		flows := &fakeWorkflows{}
		r := newRig(t, db, flows.spec())
		flows.saved = map[string][]string{"triage": {r.a.UserID}}
		r.svc.SetWorkflows(flows)
		a, err := r.svc.Create(ctx, r.a, agents.Input{Name: "Scribe", Tools: []agents.ToolInput{
			{Tool: "github_get_issue", ConnectionID: r.connA}, {Tool: "github_create_gist", ConnectionID: r.private}, {Tool: "run_flow__triage"}}})
		if err != nil {
			t.Fatal(err)
		}
		key := switchboard.Principal{TenantID: r.a.TenantID, Kind: switchboard.PrincipalAgent, UserID: r.a.UserID, AgentID: a.ID, Role: switchboard.RoleOwner, KeyID: "key_s"}
		got, err := r.svc.Selection(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		want := []router.Selected{{Tool: "github_get_issue", ConnectionID: r.connA}, {Tool: "github_create_gist", ConnectionID: r.private}, {Tool: "run_flow__triage"}}
		byTool := cmpopts.SortSlices(func(a, b router.Selected) bool { return a.Tool < b.Tool })
		if diff := cmp.Diff(want, got, byTool); diff != "" {
			t.Errorf("the agent's selection (-want +got):\n%s", diff)
		}
		for name, p := range map[string]switchboard.Principal{
			"its creator":                 r.a,
			"the agent in another tenant": {TenantID: r.b.TenantID, Kind: switchboard.PrincipalAgent, AgentID: a.ID, KeyID: "key_x"},
		} {
			if got, err := r.svc.Selection(ctx, p); err != nil || len(got) != 0 {
				t.Errorf("%s: %v, %v; want nothing", name, got, err)
			}
		}
		if _, err := r.svc.Delete(ctx, r.a, a.ID); err != nil {
			t.Fatal(err)
		}
		if got, err := r.svc.Selection(ctx, key); err != nil || len(got) != 0 {
			t.Errorf("the deleted agent's key: %v, %v; want nothing", got, err)
		}
	})
}

// TestSelectHubTools: an agent may be given one of the hub's own tools (the workflows'
// management, which runs on no connection) by picking it, bound to no connection; one
// bound to a connection is refused, naming the field.
func TestSelectHubTools(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		r := newRig(t, db, (&hub.Tools{Workflows: &workflows.Service{}}).WorkflowsSpec())
		a, err := r.svc.Create(ctx, r.a, agents.Input{Name: "Planner", Tools: []agents.ToolInput{
			{Tool: "github_get_issue", ConnectionID: r.connA}, {Tool: hub.ListWorkflows}}})
		if err != nil {
			t.Fatal(err)
		}
		key := switchboard.Principal{TenantID: r.a.TenantID, Kind: switchboard.PrincipalAgent, UserID: r.a.UserID, AgentID: a.ID, Role: switchboard.RoleOwner, KeyID: "key_p"}
		got, err := r.svc.Selection(ctx, key)
		want := []router.Selected{{Tool: "github_get_issue", ConnectionID: r.connA}, {Tool: hub.ListWorkflows}}
		if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b router.Selected) bool { return a.Tool < b.Tool })); err != nil || diff != "" {
			t.Errorf("the agent's selection (-want +got), %v:\n%s", err, diff)
		}
		_, err = r.svc.Create(ctx, r.a, agents.Input{Name: "Bound", Tools: []agents.ToolInput{{Tool: hub.ListWorkflows, ConnectionID: r.connA}}})
		if e := switchboard.AsError(err); e.Code != switchboard.CodeInvalid || e.Field != "tools[0].connection_id" {
			t.Errorf("list_workflows bound to a connection: %v; want invalid tools[0].connection_id", err)
		}
	})
}

// TestPrivateUserOAuthGrant: an OAuth client a person allowed to act as an agent runs
// on the agent creator's private connections as a key the creator made for it does:
// when the creator allowed it, for that agent, until the grant is revoked. A grant the
// admin gave a member's agent, or one for another agent, does not.
func TestPrivateUserOAuthGrant(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		r := newRig(t, db)
		mine, err := r.svc.Create(ctx, r.a, agents.Input{Name: "Scribe", Tools: []agents.ToolInput{{Tool: "github_create_gist", ConnectionID: r.private}}})
		if err != nil {
			t.Fatal(err)
		}
		other, err := r.svc.Create(ctx, r.a, agents.Input{Name: "Other", Tools: []agents.ToolInput{{Tool: "github_get_issue", ConnectionID: r.connA}}})
		if err != nil {
			t.Fatal(err)
		}
		grant := func(id, agentID, consentedBy string, revoked bool) {
			t.Helper()
			row := map[string]any{"id": id, "tenant_id": string(r.a.TenantID), "client_id": "c", "client_name": "Chat app", "resource": "https://hub.test/mcp/alpha/agents/" + agentID,
				"scope": "mcp", "user_id": r.a.UserID, "agent_id": agentID, "consented_by": consentedBy, "created_at": time.Now().UTC()}
			if revoked {
				row["revoked_at"] = time.Now().UTC()
			}
			if err := db.Table("oauth_grants").Create(row).Error; err != nil {
				t.Fatal(err)
			}
		}
		grant("grt_creator", mine.ID, r.a.UserID, false)
		grant("grt_member", mine.ID, r.member.UserID, false)
		grant("grt_revoked", mine.ID, r.a.UserID, true)
		grant("grt_other", other.ID, r.a.UserID, false)
		for keyID, want := range map[string]string{"grt_creator": r.a.UserID, "grt_member": "", "grt_revoked": "", "grt_other": "", "grt_none": ""} {
			p := switchboard.Principal{TenantID: r.a.TenantID, Kind: switchboard.PrincipalAgent, UserID: r.a.UserID, AgentID: mine.ID, KeyID: keyID}
			if got, err := r.svc.PrivateUser(ctx, p); err != nil || got != want {
				t.Errorf("the grant %s: private user %q, %v; want %q", keyID, got, err, want)
			}
		}
	})
}
