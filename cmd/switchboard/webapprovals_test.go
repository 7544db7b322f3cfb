package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/tenants"
)

// TestApprovalsNameWhoAsked: an approval page names who asked as the tenant knows
// them (a person's email, an agent's name), not by principal id; one gone since, or of
// another tenant, is named by its id.
func TestApprovalsNameWhoAsked(t *testing.T) {
	ctx := context.Background()
	db := testdb.SQLite(t)
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	ten, owner, _, _, err := ts.CreateTenantWithOwner(ctx, "acme", "Acme", "owner@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	reg := providers.NewRegistry()
	svc := agents.NewService(agents.NewStore(db), reg, connections.NewService(connections.NewStore(db, kr), reg, &providers.Transports{}, nil))
	p := switchboard.Principal{TenantID: ten.ID, Kind: switchboard.PrincipalUser, UserID: owner.ID, Role: switchboard.RoleOwner}
	a, err := svc.Create(ctx, p, agents.Input{Name: "Triage"})
	if err != nil {
		t.Fatal(err)
	}
	w := webApprovals{users: ts, agents: svc}
	for who, want := range map[string]string{
		"user:" + owner.ID:  "owner@acme.test",
		"agent:" + a.ID:     "the agent Triage",
		"user:usr_gone":     "user:usr_gone",
		"agent:agt_nowhere": "agent:agt_nowhere",
	} {
		if got := w.requester(ctx, p, who); got != want {
			t.Errorf("requester(%q) = %q, want %q", who, got, want)
		}
	}
}
