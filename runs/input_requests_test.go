package runs

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestInputRequestsAreRecordedForEveryProcess records the input requests of a run
// executing in one process: another process reads them with the run (sealed in the
// row), only the run's principal and the process executing it may record them, and
// they are cleared when answered and when the run ends.
func TestInputRequestsAreRecordedForEveryProcess(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, func(o *Options) { o.Node = "node_a" })
		other := r.newExecutor(t, func(o *Options) { o.Node = "node_b" })
		ctx := context.Background()
		v, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_wait", ConnectionID: r.connA})
		if err != nil {
			t.Fatal(err)
		}
		received(t, r, 1)
		asked := json.RawMessage(`{"input_1":{"method":"elicitation/create","params":{"mode":"form","message":"your name?"}}}`)
		if err := r.exec.RecordInputRequests(ctx, r.ann, v.ID, asked); err != nil {
			t.Fatal(err)
		}
		got, err := other.Get(ctx, r.ann, v.ID)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.InputRequests) != string(asked) {
			t.Errorf("input requests read by another process = %s, want %s", got.InputRequests, asked)
		}
		if row := r.row(t, v.ID); row.InputRequestsKeyID == "" || strings.Contains(string(row.InputRequestsSealed), "your name") {
			t.Errorf("input requests stored as %q under key %q, want sealed", row.InputRequestsSealed, row.InputRequestsKeyID)
		}
		if list, _, err := r.exec.List(ctx, r.ann, ListOptions{}); err != nil || len(list) != 1 || list[0].InputRequests != nil {
			t.Errorf("List = %+v, %v; want the run without its input requests", list, err)
		}

		// Another principal, and a process that does not execute the run, record nothing.
		if err := r.exec.RecordInputRequests(ctx, r.bob, v.ID, json.RawMessage(`{"input_9":{"method":"roots/list"}}`)); err != nil {
			t.Fatal(err)
		}
		if err := other.RecordInputRequests(ctx, r.ann, v.ID, json.RawMessage(`{"input_9":{"method":"roots/list"}}`)); err != nil {
			t.Fatal(err)
		}
		if got, _ := r.exec.Get(ctx, r.ann, v.ID); string(got.InputRequests) != string(asked) {
			t.Errorf("input requests after others recorded theirs = %s, want %s", got.InputRequests, asked)
		}
		err = r.exec.RecordInputRequests(ctx, r.ann, v.ID, json.RawMessage(`{"input_1":`))
		wantCode(t, err, switchboard.CodeInvalid, "requests")

		// Answered: cleared.
		if err := r.exec.RecordInputRequests(ctx, r.ann, v.ID, nil); err != nil {
			t.Fatal(err)
		}
		if got, _ := other.Get(ctx, r.ann, v.ID); got.InputRequests != nil {
			t.Errorf("input requests once answered = %s, want none", got.InputRequests)
		}
		// The run's end clears them too.
		if err := r.exec.RecordInputRequests(ctx, r.ann, v.ID, asked); err != nil {
			t.Fatal(err)
		}
		r.up.Release()
		if got := r.wait(t, other, r.ann, v.ID); got.State != StateCompleted || got.InputRequests != nil {
			t.Errorf("ended run = %s with input requests %s, want completed without", got.State, got.InputRequests)
		}
		if row := r.row(t, v.ID); row.InputRequestsSealed != nil || row.InputRequestsKeyID != "" {
			t.Errorf("ended run's row keeps input requests %q under key %q", row.InputRequestsSealed, row.InputRequestsKeyID)
		}
	})
}
