package api_test

import (
	"net/http"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestOAuthLabelsChecked: starting an OAuth connect with a label that reads like an id
// or like a shared connection's label spelled with look-alike letters, or a reconnect
// that renames to an id, is refused naming label, before anyone is sent to the provider.
func TestOAuthLabelsChecked(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		h := newOAuthHub(t, db, githubApp())
		b := h.browser()
		resp, page, _ := h.consent(b, h.authorize(b, h.member, `{"shared":true}`), "allow", "octocat")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("connect: %d %s", resp.StatusCode, page)
		}
		shared := h.connections(h.member)[0]["id"].(string)
		other := h.newUser(h.admin.tenant, "other@a.test", switchboard.RoleMember)
		for _, tt := range []struct {
			name string
			who  actor
			body string
		}{
			{name: "a shared label with a Cyrillic о and с", who: other, body: `{"label":"осtocat"}`},
			{name: "a connection's id", who: other, body: `{"label":"` + shared + `"}`},
			{name: "a rename to its own id", who: h.member, body: `{"connection_id":"` + shared + `","label":"` + shared + `"}`},
		} {
			resp, body := h.send(h.browser(), tt.who, http.MethodPost, h.srv.URL+"/api/connections/github/authorize", tt.body, nil)
			if e := decodeError(t, body); resp.StatusCode != http.StatusBadRequest || e.Error.Field != "label" {
				t.Errorf("%s: authorize %d %s, want 400 naming label", tt.name, resp.StatusCode, body)
			}
		}
	})
}

// TestOAuthSameAccountAgainKeepsItsName: connecting through OAuth an account its owner
// has connected already renews that connection in place without renaming it, and the
// page the browser lands on says so and takes it back into the app, naming the
// connection; the first connect's page takes it back too.
func TestOAuthSameAccountAgainKeepsItsName(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		h := newOAuthHub(t, db, githubApp())
		b := h.browser()
		resp, page, _ := h.consent(b, h.authorize(b, h.member, `{"label":"Work GitHub"}`), "allow", "octocat")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("connect: %d %s", resp.StatusCode, page)
		}
		first := h.connections(h.member)
		id := first[0]["id"].(string)
		if !strings.Contains(string(page), `content="2;url=`+h.srv.URL+`/?connected=`+id+`#connections"`) || strings.Contains(string(page), "close this window") {
			t.Errorf("the first connect's page does not take the browser back to the app: %s", page)
		}
		resp, page, _ = h.consent(b, h.authorize(b, h.member, `{}`), "allow", "octocat")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("connect again: %d %s", resp.StatusCode, page)
		}
		again := h.connections(h.member)
		if len(again) != 1 || again[0]["id"] != id || again[0]["account_label"] != "Work GitHub" {
			t.Errorf("after connecting the same account again: %v, want %s still named Work GitHub", again, id)
		}
		if !strings.Contains(string(page), "already connected, as Work GitHub") || !strings.Contains(string(page), `url=`+h.srv.URL+`/?connected=`+id+`&amp;renewed=1#connections`) {
			t.Errorf("the second connect's page does not say it renewed Work GitHub, or does not go back to the app: %s", page)
		}
	})
}
