package github_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// TestMinimalAnswersMatchOutputSchemas calls every operation (each case of
// specCheckedCases) against a fake GitHub that gives, for each request, the least
// answer GitHub's description allows for it (MinimalResponse: required fields only,
// null where they are nullable), and validates the structuredContent the hub would
// send against the operation's output schema, full and as tools/list serves it: MCP
// clients refuse a result that does not match (the TypeScript SDK throws -32602).
func TestMinimalAnswersMatchOutputSchemas(t *testing.T) {
	t.Parallel()
	desc := providertest.GitHubDescription(t)
	seen := map[string]bool{}
	for _, tc := range specCheckedCases() {
		xs := slices.Clone(tc.exchanges())
		if seen[tc.tool] || !succeeds(xs) {
			continue
		}
		seen[tc.tool] = true
		t.Run(tc.tool, func(t *testing.T) {
			t.Parallel()
			bodies := make([][]byte, len(xs))
			for i, x := range xs {
				if x.status == 0 {
					xs[i].status = http.StatusOK
				}
				if x.fixture != "" {
					bodies[i] = desc.MinimalResponse(t, x.opID, xs[i].status)
				}
			}
			var mu sync.Mutex
			n := 0
			up := providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				i := n
				n++
				mu.Unlock()
				if i >= len(xs) {
					t.Errorf("unexpected request %d: %s %s", i+1, r.Method, r.URL.Path)
					http.Error(w, `{"message": "unexpected request"}`, http.StatusInternalServerError)
					return
				}
				answer(xs[i].status, xs[i].header, bodies[i])(w, r)
			})
			tool := tools(t)[tc.tool]
			if err := tool.Validate(json.RawMessage(tc.args)); err != nil {
				t.Fatal(err)
			}
			out, err := tool.Op.Invoke(context.Background(), newCall(t, up.URL), json.RawMessage(tc.args))
			if err != nil {
				t.Fatalf("%s on GitHub's least answers %s: %v", tc.tool, bodies, err)
			}
			providertest.CheckListedOutput(t, tool, out)
		})
	}
	for _, name := range []string{"github_get_issue", "github_get_pull_request", "github_list_workflow_runs"} {
		if !seen[name] {
			t.Errorf("no successful case of %s was run", name)
		}
	}
}

// succeeds reports whether every answer of the exchanges is a success (2xx).
func succeeds(xs []exchange) bool {
	for _, x := range xs {
		if x.status != 0 && (x.status < 200 || x.status > 299) {
			return false
		}
	}
	return true
}
