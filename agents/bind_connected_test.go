package agents_test

import (
	"context"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestBindConnected: a tool of a provider connected with OAuth may be selected on no
// connection; BindConnected then binds it to the connection made since, bumping the
// agent's version, and leaves a tool bound already as it is.
func TestBindConnected(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		r := newRig(t, db)
		a, err := r.svc.Create(ctx, r.a, agents.Input{Name: "Later", Tools: []agents.ToolInput{
			{Tool: "github_get_issue"}, {Tool: "github_create_gist", ConnectionID: r.connA}}})
		if err != nil {
			t.Fatalf("select a tool on no connection: %v", err)
		}
		if err := r.svc.BindConnected(ctx, r.a.TenantID, a.ID, map[string]string{"github_get_issue": r.connA, "github_create_gist": r.private}); err != nil {
			t.Fatal(err)
		}
		got, err := r.svc.Get(ctx, r.a, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		bound := map[string]string{}
		for _, tool := range got.Tools {
			bound[tool.Tool] = tool.ConnectionID
		}
		if bound["github_get_issue"] != r.connA || bound["github_create_gist"] != r.connA || got.Version != a.Version+1 {
			t.Errorf("after BindConnected: %v at version %d (was %d)", bound, got.Version, a.Version)
		}
		// Nothing left to bind: the version stays.
		if err := r.svc.BindConnected(ctx, r.a.TenantID, a.ID, map[string]string{"github_get_issue": r.private}); err != nil {
			t.Fatal(err)
		}
		if again, err := r.svc.Get(ctx, r.a, a.ID); err != nil || again.Version != got.Version || again.Tools[0].ConnectionID != r.connA {
			t.Errorf("a second BindConnected changed the agent: %+v %v", again, err)
		}
	})
}
