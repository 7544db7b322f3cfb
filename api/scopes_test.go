package api_test

import (
	"net/http"
	"slices"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestConnectionNamesMissingScopes checks the comparison shown after connecting: the
// fake GitHub grants goodToken "repo, read:org", so the gist tools are named as
// failing for want of gist, and the repository tools are not; renewedToken's
// connection (repo only) also lacks read:org.
func TestConnectionNamesMissingScopes(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		var conn struct {
			ID            string   `json:"id"`
			Scopes        []string `json:"scopes"`
			MissingScopes []string `json:"missing_scopes"`
			FailingTools  []string `json:"failing_tools"`
		}
		w.want(w.admin, http.MethodPost, "/api/connections", `{"provider":"github","token":"`+goodToken+`"}`, http.StatusCreated, &conn)
		if !slices.Contains(conn.MissingScopes, "gist") || slices.Contains(conn.MissingScopes, "repo") || slices.Contains(conn.MissingScopes, "read:org") {
			t.Errorf("granted %v: missing %v, want gist and neither repo nor read:org", conn.Scopes, conn.MissingScopes)
		}
		if !slices.Contains(conn.FailingTools, "github_create_gist") || slices.Contains(conn.FailingTools, "github_get_issue") {
			t.Errorf("failing tools %v, want github_create_gist and not github_get_issue", conn.FailingTools)
		}
		var listed struct {
			Connections []struct {
				ID           string   `json:"id"`
				FailingTools []string `json:"failing_tools"`
			} `json:"connections"`
		}
		w.want(w.admin, http.MethodGet, "/api/connections", "", http.StatusOK, &listed)
		if len(listed.Connections) != 1 || !slices.Equal(listed.Connections[0].FailingTools, conn.FailingTools) {
			t.Errorf("the list says %+v, the answer to the connect said %v", listed.Connections, conn.FailingTools)
		}
		var catalog struct {
			Providers []struct {
				Name   string   `json:"name"`
				Scopes []string `json:"scopes"`
			} `json:"providers"`
		}
		w.want(w.member, http.MethodGet, "/api/providers", "", http.StatusOK, &catalog)
		for _, p := range catalog.Providers {
			if p.Name == "github" && (!slices.Contains(p.Scopes, "gist") || !slices.Contains(p.Scopes, "repo") || !slices.IsSorted(p.Scopes)) {
				t.Errorf("GitHub's one scope list is %v", p.Scopes)
			}
		}
	})
}
