package agents_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestAgentExists checks the lookup behind an agent URL's public metadata: true only
// for the agent under its own tenant's slug; another tenant's slug, a slug nobody has
// and an unknown agent are all false, and a deleted agent stops existing.
func TestAgentExists(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		r := newRig(t, db)
		a, err := r.svc.Create(ctx, r.a, agents.Input{Name: "Triage", Instructions: "Sort.", Tools: []agents.ToolInput{{Tool: "github_get_issue", ConnectionID: r.connA}}})
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name, slug, id string
			want           bool
		}{
			{name: "its own tenant", slug: "alpha", id: a.ID, want: true},
			{name: "another tenant", slug: "beta", id: a.ID},
			{name: "a tenant nobody has", slug: "gamma", id: a.ID},
			{name: "unknown agent", slug: "alpha", id: "agt_nosuch"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := r.svc.AgentExists(ctx, tt.slug, tt.id)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("exists (-want +got):\n%s", diff)
				}
			})
		}
		if _, err := r.svc.Delete(ctx, r.a, a.ID); err != nil {
			t.Fatal(err)
		}
		if got, err := r.svc.AgentExists(ctx, "alpha", a.ID); err != nil || got {
			t.Errorf("after delete: %v, %v; want false", got, err)
		}
	})
}
