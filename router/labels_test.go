package router

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/connections"
)

// TestLabelConnections: labels are unique per provider; where connections share an
// account label, the user's own keeps it only when it is the only one the user owns,
// whichever is older, so another user's shared connection cannot take calls meant for
// the user's own.
func TestLabelConnections(t *testing.T) {
	t.Parallel()
	conn := func(id, provider, label, owner string) connections.Connection {
		return connections.Connection{ID: id, Provider: provider, AccountLabel: label, OwnerUserID: owner, Shared: owner != "usr_me"}
	}
	tests := []struct {
		name  string
		conns []connections.Connection
		want  []string
	}{
		{
			name:  "distinct labels, and one label across providers, stay as they are",
			conns: []connections.Connection{conn("con_1", "slack", "Work Slack", "usr_me"), conn("con_2", "slack", "Home", "usr_x"), conn("con_3", "github", "Work Slack", "usr_x")},
			want:  []string{"Work Slack", "Home", "Work Slack"},
		},
		{
			name:  "the user's own wins over an older shared one",
			conns: []connections.Connection{conn("con_squat", "slack", "Work Slack", "usr_x"), conn("con_mine", "slack", "Work Slack", "usr_me")},
			want:  []string{"Work Slack (con_squat)", "Work Slack"},
		},
		{
			name:  "two others' shared ones: neither keeps the label",
			conns: []connections.Connection{conn("con_x", "slack", "Work Slack", "usr_x"), conn("con_y", "slack", "Work Slack", "usr_y")},
			want:  []string{"Work Slack (con_x)", "Work Slack (con_y)"},
		},
		{
			name:  "two of the user's own: neither keeps the label",
			conns: []connections.Connection{conn("con_1", "slack", "Work Slack", "usr_me"), conn("con_2", "slack", "Work Slack", "usr_me"), conn("con_x", "slack", "Work Slack", "usr_x")},
			want:  []string{"Work Slack (con_1)", "Work Slack (con_2)", "Work Slack (con_x)"},
		},
		{
			name: "a label made to look like another's with its id",
			conns: []connections.Connection{conn("con_1", "slack", "Work Slack", "usr_me"), conn("con_2", "slack", "Work Slack", "usr_me"),
				conn("con_x", "slack", "Work Slack (con_1)", "usr_x")},
			want: []string{"Work Slack (con_1)", "Work Slack (con_2)", "Work Slack (con_1) (con_x)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, labelConnections(tt.conns, "usr_me")); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}
