package api_test

import (
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestRESTReferenceEndpoints checks that the table of docs/reference/rest.md lists exactly the
// routes the API serves: a route added without a row, or a row for a route that is
// gone, fails.
func TestRESTReferenceEndpoints(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../docs/reference/rest.md")
	if err != nil {
		t.Fatalf("read docs/reference/rest.md: %v", err)
	}
	params := regexp.MustCompile(`\{[^}]*\}|:[a-z_]+`)
	norm := func(method, path string) string { return method + " " + params.ReplaceAllString(path, "{}") }

	row := regexp.MustCompile("(?m)^\\| `(GET|POST|PUT|PATCH|DELETE) (/[^` ?]*)")
	var documented []string
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		documented = append(documented, norm(m[1], m[2]))
	}
	var served []string
	for _, r := range api.New(api.Options{Logger: slog.New(slog.DiscardHandler)}).Routes() {
		if r.Method == http.MethodHead {
			continue // the probes answer HEAD as well as GET
		}
		served = append(served, norm(r.Method, r.Path))
	}
	for _, list := range [][]string{documented, served} {
		slices.Sort(list)
	}
	if diff := cmp.Diff(served, documented); diff != "" {
		t.Errorf("docs/reference/rest.md's endpoint table (-served by the API +documented):\n%s", diff)
	}
}

// TestRESTReferenceWhoMayCall checks the "Who" column of docs/reference/rest.md's table against
// an agent's key: an endpoint the reference opens to "any key" answers an agent, and one it
// keeps for users, admins, owners or the operator refuses an agent as such.
func TestRESTReferenceWhoMayCall(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../docs/reference/rest.md")
	if err != nil {
		t.Fatalf("read docs/reference/rest.md: %v", err)
	}
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		conn := w.connect(w.admin, goodToken, true)
		var agent struct {
			ID string `json:"id"`
		}
		w.want(w.admin, http.MethodPost, "/api/agents", `{"name":"reader","tools":[{"tool":"github_get_issue","connection_id":"`+conn+`"}]}`, http.StatusCreated, &agent)
		var key struct {
			Key string `json:"key"`
		}
		w.want(w.admin, http.MethodPost, "/api/agents/"+agent.ID+"/keys", `{"name":"k"}`, http.StatusCreated, &key)
		agentKey := actor{key: key.Key}

		row := regexp.MustCompile("(?m)^\\| `(GET|POST|PUT|PATCH|DELETE) (/api/[^` ?]*)[^`]*` \\| ([^|]+) \\|")
		params := regexp.MustCompile(`\{[^}]*\}`)
		rows := row.FindAllStringSubmatch(string(readme), -1)
		if len(rows) < 30 {
			t.Fatalf("docs/reference/rest.md's endpoint table has %d /api rows", len(rows))
		}
		for _, m := range rows {
			method, path, who := m[1], params.ReplaceAllString(m[2], "nothere"), strings.TrimSpace(m[3])
			body := ""
			if method != http.MethodGet && method != http.MethodDelete {
				body = "{}"
			}
			status, b := w.do(agentKey, method, path, body)
			refused := status == http.StatusForbidden && strings.Contains(string(b), "an agent's API key cannot")
			if open := who == "any key"; open == refused {
				t.Errorf("%s %s (docs/reference/rest.md: %s): an agent's key gets %d %s", m[1], m[2], who, status, b)
			}
		}
	})
}
