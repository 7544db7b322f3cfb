package mcpadapter

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/router"
)

// TestTwoNodesAskOneSessionUnderDifferentIDs runs two confirmed deletes of one session,
// the first on node A and the second on node B, with every answer posted to B. Each
// node's server numbered its requests from 1, so both confirmations went out as id 1,
// and B's answer for its own call could settle A's too (and, pending at once, one
// "accept" confirmed both deletes).
func TestTwoNodesAskOneSessionUnderDifferentIDs(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		e.policy.set(e.ann, router.ConfirmDestructive)
		a, b, _ := twoNodes(t, e, db)
		first, second := e.up.Put("first"), e.up.Put("second")
		lb := newBalancer(t, func(body string) int {
			switch {
			case isAnswer(body), strings.Contains(body, `"`+second+`"`):
				return 1
			default:
				return 0
			}
		}, a.URL, b.URL)
		el := &elicitor{action: mcp.ElicitationResponseActionAccept, content: map[string]any{"confirm": true}}
		c := balancedClient(t, lb, "/mcp/"+e.ann.TenantSlug, keyAnn, el, nil)
		for _, id := range []string{first, second} {
			if res := callWithin(t, c, "notes_delete_note", map[string]any{"id": id}); res.IsError || e.up.Has(id) {
				t.Fatalf("confirmed delete of %s: isError %v %q", id, res.IsError, text(res))
			}
		}
		answers := lb.got(1, `"action":"accept"`)
		ids := map[string]bool{}
		for _, body := range answers {
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal([]byte(body), &m); err != nil {
				t.Fatalf("answer %s: %v", body, err)
			}
			ids[string(m.ID)] = true
		}
		if len(answers) != 2 || len(ids) != 2 {
			t.Errorf("the two nodes' confirmations were answered under ids %v (%d answers), want two different ids", ids, len(answers))
		}
	})
}
