package runs

import (
	"context"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/keyring"
)

// TestRotateReseals: key rotation re-seals runs' inputs, outputs and input requests,
// and they open after it as before.
func TestRotateReseals(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		r := newRig(t, db, nil)
		kr, ok := r.kr.(keyring.Rotator)
		if !ok {
			t.Fatalf("the rig's keyring %T cannot rotate", r.kr)
		}
		newRun := func(p switchboard.Principal, conn, input string) string {
			run := &Run{ID: switchboard.NewID("run"), TenantID: p.TenantID, Principal: p.ID(), PrincipalKind: p.Kind, UserID: p.UserID, Role: p.Role,
				Tool: "notes_list", ConnectionID: conn, Origin: OriginTask, State: StateWorking, LeaseOwner: "test"}
			if err := r.store.create(ctx, run, []byte(input)); err != nil {
				t.Fatal(err)
			}
			return run.ID
		}
		working := newRun(r.ann, r.connA, `{"q":"working"}`)
		asked := `{"input_1":{"method":"roots/list"}}`
		if ok, err := r.store.setInputRequests(ctx, r.ann, working, "test", []byte(asked)); err != nil || !ok {
			t.Fatalf("record input requests: %v %v", ok, err)
		}
		done := newRun(r.bea, r.connB, `{"q":"done"}`)
		if ok, err := r.store.complete(ctx, r.bea.TenantID, done, "test", []byte(`{"notes":["n1"]}`)); err != nil || !ok {
			t.Fatalf("complete: %v %v", ok, err)
		}

		res, err := keyring.Rotate(ctx, db, kr, []keyring.SealedRecords{r.store.SealedRecords()}, keyring.RotateOptions{BatchSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Done || res.Resealed != 2 {
			t.Fatalf("result %+v, want done with 2 runs re-sealed", res)
		}
		tests := []struct {
			name       string
			id         string
			wantInput  string
			wantOutput string
			wantAsked  string
		}{
			{name: "working run", id: working, wantInput: `{"q":"working"}`, wantAsked: asked},
			{name: "completed run", id: done, wantInput: `{"q":"done"}`, wantOutput: `{"notes":["n1"]}`},
		}
		for _, tt := range tests {
			row := r.row(t, tt.id)
			if row.InputKeyID != res.KeyID || (tt.wantOutput != "" && row.OutputKeyID != res.KeyID) || (tt.wantOutput == "" && row.OutputKeyID != "") {
				t.Errorf("%s: input key %q output key %q; want %q", tt.name, row.InputKeyID, row.OutputKeyID, res.KeyID)
			}
			in, err := r.store.input(ctx, &row)
			if err != nil || string(in) != tt.wantInput {
				t.Errorf("%s: input %s, %v", tt.name, in, err)
			}
			out, err := r.store.Output(ctx, &row)
			if err != nil || string(out) != tt.wantOutput {
				t.Errorf("%s: output %s, %v", tt.name, out, err)
			}
			if tt.wantAsked != "" && row.InputRequestsKeyID != res.KeyID {
				t.Errorf("%s: input requests key %q; want %q", tt.name, row.InputRequestsKeyID, res.KeyID)
			}
			reqs, err := r.store.inputRequests(ctx, &row)
			if err != nil || string(reqs) != tt.wantAsked {
				t.Errorf("%s: input requests %s, %v", tt.name, reqs, err)
			}
		}
	})
}
