package securitytest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestNoLabelSquatting: a member cannot label a connection with another member's
// connection id (an MCP call naming that id would otherwise land on the squatter's
// connection), nor with a label that only looks like another shared label of the same
// provider (a Cyrillic о for a Latin o), when connecting or when renaming; each is a
// 400 naming label, and no connection is made or renamed.
func TestNoLabelSquatting(t *testing.T) {
	t.Parallel()
	h := newHub(t, testdb.SQLite(t))
	at := h.agentTenant("m2-co")
	private := h.connect(at.member, "ghp_MemberToken0123456789abcdefghijklmno", false)
	shared := func(label string) (int, []byte) {
		body, _ := json.Marshal(map[string]any{"provider": "github", "token": "ghp_AdminToken0123456789abcdefghijklmnop", "shared": true, "label": label})
		status, _, b := h.do(at.admin, http.MethodPost, "/api/connections", string(body), nil)
		return status, b
	}
	if status, b := shared("octocat-work"); status != http.StatusCreated {
		t.Fatalf("a plain shared label: %d %s", status, b)
	}
	count := func() int {
		var out struct {
			Connections []json.RawMessage `json:"connections"`
		}
		h.want(at.admin, http.MethodGet, "/api/connections", "", http.StatusOK, &out)
		return len(out.Connections)
	}
	before := count()
	for name, label := range map[string]string{
		"another member's connection id": private,
		"an id's shape":                  "con_01J9ZZZZZZZZZZZZZZZZZZZZZZ",
		"a look-alike of a shared label": "\u043Ectocat-work", // Cyrillic о
	} {
		status, b := shared(label)
		if status != http.StatusBadRequest || !strings.Contains(string(b), `"label"`) {
			t.Errorf("%s as a label: %d %s; want 400 naming label", name, status, b)
		}
	}
	if got := count(); got != before {
		t.Errorf("connections after the refused labels: %d, want %d", got, before)
	}
}
