package router

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestAuditDetailAndRef checks that a caller that asks for it gets the id of the
// call's audit row, and that the detail it gives (a workflow run's step) is on the row.
func TestAuditDetailAndRef(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var ref AuditRef
	ctx := WithAuditDetail(WithAuditRef(context.Background(), &ref), "workflow triage run run_1 step fetch")
	if _, err := f.router.Execute(ctx, alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"ada"}`)}); err != nil {
		t.Fatal(err)
	}
	testwait.Recv(t, f.tokens, "the upstream to receive the call")
	e := f.audit.last(t)
	if e.ID == "" || e.ID != ref.ID || e.Detail != "workflow triage run run_1 step fetch" {
		t.Fatalf("audit row %+v, ref %q", e, ref.ID)
	}
	// Without a detail the row has none.
	if _, err := f.router.Execute(context.Background(), alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"bo"}`)}); err != nil {
		t.Fatal(err)
	}
	testwait.Recv(t, f.tokens, "the upstream to receive the call")
	if e := f.audit.last(t); e.Detail != "" {
		t.Fatalf("detail %q on a plain call", e.Detail)
	}
}
