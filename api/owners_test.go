package api_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestSharedConnectionsShowTheirOwner: where connections are listed and picked (the
// connections list, the tools' connections), a connection someone else shared
// carries its owner's email, so two labels that read alike can be told apart; the
// caller's own carries none.
func TestSharedConnectionsShowTheirOwner(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		ann := w.newUser(w.a.ID, "ann@a.test", switchboard.RoleMember)
		bob := w.newUser(w.a.ID, "bob@a.test", switchboard.RoleMember)
		shared := w.connect(ann, goodToken, true)
		own := w.connect(bob, otherToken, false)

		var list struct {
			Connections []struct {
				ID    string `json:"id"`
				Owner string `json:"owner"`
			} `json:"connections"`
		}
		w.want(bob, http.MethodGet, "/api/connections", "", http.StatusOK, &list)
		owners := map[string]string{}
		for _, c := range list.Connections {
			owners[c.ID] = c.Owner
		}
		if diff := cmp.Diff(map[string]string{shared: "ann@a.test", own: ""}, owners); diff != "" {
			t.Errorf("owners in the connections list (-want +got):\n%s", diff)
		}

		var tools struct {
			Tools []struct {
				Tool        string `json:"tool"`
				Connections []struct {
					ID    string `json:"id"`
					Owner string `json:"owner"`
				} `json:"connections"`
			} `json:"tools"`
		}
		w.want(bob, http.MethodGet, "/api/tools", "", http.StatusOK, &tools)
		owners = map[string]string{}
		for _, tl := range tools.Tools {
			if tl.Tool != "github_get_issue" {
				continue
			}
			for _, c := range tl.Connections {
				owners[c.ID] = c.Owner
			}
		}
		if diff := cmp.Diff(map[string]string{shared: "ann@a.test", own: ""}, owners); diff != "" {
			t.Errorf("owners in github_get_issue's connections (-want +got):\n%s", diff)
		}
	})
}
