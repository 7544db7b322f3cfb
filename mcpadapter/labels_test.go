package mcpadapter

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestConnectionLabelSquatting: a colleague's shared
// connection labelled like the caller's own private one took the caller's
// {"connection": "Work Slack"} calls. The caller's own connection wins its label; a
// label several others' connections share is refused with their ids; ids always work,
// and win over a label that spells one.
func TestConnectionLabelSquatting(t *testing.T) {
	t.Parallel()
	shared := func(id, owner string) connections.Connection {
		return connections.Connection{ID: id, TenantID: "ten_a", OwnerUserID: owner, Provider: "notes", AccountLabel: "Work Slack", Shared: true, Status: connections.StatusActive}
	}
	labelled := func(c connections.Connection, label string) connections.Connection {
		c.AccountLabel = label
		return c
	}
	mine := connections.Connection{ID: "con_mine", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "notes", AccountLabel: "Work Slack", Status: connections.StatusActive}
	tests := []struct {
		name  string
		conns []connections.Connection
		arg   string
		runs  string // the connection the call must run on; "" for a refusal
		says  []string
	}{
		{name: "the caller's own wins over an older shared one", conns: []connections.Connection{shared("con_squat", "usr_carol"), mine}, arg: "Work Slack", runs: "con_mine"},
		{name: "the shared one by its label with its id", conns: []connections.Connection{shared("con_squat", "usr_carol"), mine}, arg: "Work Slack (con_squat)", runs: "con_squat"},
		{name: "the shared one by id", conns: []connections.Connection{shared("con_squat", "usr_carol"), mine}, arg: "con_squat", runs: "con_squat"},
		{name: "the caller's own by id", conns: []connections.Connection{shared("con_squat", "usr_carol"), mine}, arg: "con_mine", runs: "con_mine"},
		{name: "an id wins over a shared connection labelled with it", conns: []connections.Connection{labelled(shared("con_squat", "usr_carol"), "con_mine"), mine}, arg: "con_mine", runs: "con_mine"},
		{name: "a label two others share is refused with both ids", conns: []connections.Connection{shared("con_x", "usr_carol"), shared("con_y", "usr_dave")}, arg: "Work Slack",
			says: []string{"con_x", "con_y", "connection"}},
		{name: "ids work where the label does not", conns: []connections.Connection{shared("con_x", "usr_carol"), shared("con_y", "usr_dave")}, arg: "con_y", runs: "con_y"},
		{name: "an unknown label lists the labels", conns: []connections.Connection{shared("con_x", "usr_carol"), mine}, arg: "Home", says: []string{`"Work Slack"`, `"Work Slack (con_x)"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.conns.set(tt.conns...)
			c, err := e.client(t, "acme", "key-alice")
			if err != nil {
				t.Fatal(err)
			}
			res := call(t, c, "notes_create_note", map[string]any{"connection": tt.arg, "text": "standup notes"})
			if tt.runs == "" {
				for _, s := range tt.says {
					if !res.IsError || !strings.Contains(text(res), s) {
						t.Errorf("call = %q (error %t), want a refusal naming %s", text(res), res.IsError, s)
					}
				}
				select {
				case r := <-e.seen:
					t.Errorf("a refused call reached the upstream as %q", r.Header.Get("Authorization"))
				default:
				}
				return
			}
			if res.IsError {
				t.Fatalf("call = %q", text(res))
			}
			r := testwait.Recv(t, e.seen, "the upstream to receive the call")
			if diff := cmp.Diff(http.MethodPost+" /notes Bearer tok-"+tt.runs, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")); diff != "" {
				t.Errorf("upstream request (-want +got):\n%s", diff)
			}
		})
	}
}
