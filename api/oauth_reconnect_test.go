package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestOAuthReconnectKeepsTheConnection checks that an OAuth flow started to reconnect
// a connection renews that connection in place (same id and owner, so agents bound to
// it keep their tools), even when someone other than its owner (an admin) reconnects
// it; that signing in as another account is refused and changes nothing; and that a
// connection the caller may not reconnect is refused before the flow starts.
func TestOAuthReconnectKeepsTheConnection(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		h := newOAuthHub(t, db, githubApp())
		b := h.browser()
		resp, page, _ := h.consent(b, h.authorize(b, h.member, `{"shared":true}`), "allow", "octocat")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("connect: %d %s", resp.StatusCode, page)
		}
		conns := h.connections(h.member)
		if len(conns) != 1 {
			t.Fatalf("connections %v, want one", conns)
		}
		id := conns[0]["id"].(string)
		ctx := context.Background()
		before, err := h.svc.Get(ctx, h.principal(h.member), id)
		if err != nil {
			t.Fatal(err)
		}

		other := h.newUser(h.admin.tenant, "other@a.test", switchboard.RoleMember)
		refused := []struct {
			name   string
			who    actor
			body   string
			status int
		}{
			{name: "another tenant's owner", who: h.ownerB, body: `{"connection_id":"` + id + `"}`, status: http.StatusNotFound},
			{name: "a member who does not own it", who: other, body: `{"connection_id":"` + id + `"}`, status: http.StatusForbidden},
			{name: "an unknown connection", who: h.admin, body: `{"connection_id":"con_00000000000000000000000000"}`, status: http.StatusNotFound},
		}
		for _, tt := range refused {
			resp, body := h.send(h.browser(), tt.who, http.MethodPost, h.srv.URL+"/api/connections/github/authorize", tt.body, nil)
			if resp.StatusCode != tt.status {
				t.Errorf("%s: authorize status %d %s, want %d", tt.name, resp.StatusCode, body, tt.status)
			}
		}

		// Signing in as another GitHub account is refused, and changes nothing.
		b = h.browser()
		resp, page, _ = h.consent(b, h.authorize(b, h.admin, `{"connection_id":"`+id+`"}`), "allow", "hubot")
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(page), "belongs to the GitHub account hubot, but this connection is for octocat") {
			t.Errorf("another account: status %d %s", resp.StatusCode, page)
		}
		if got, err := h.svc.Get(ctx, h.principal(h.member), id); err != nil || got.Version != before.Version || h.countConnections() != 1 {
			t.Errorf("after a refused reconnect: version %d (was %d), %d connections, %v", got.Version, before.Version, h.countConnections(), err)
		}

		// The admin reconnects the member's connection as its account: same id and owner.
		b = h.browser()
		resp, page, _ = h.consent(b, h.authorize(b, h.admin, `{"connection_id":"`+id+`"}`), "allow", "octocat")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("reconnect: %d %s", resp.StatusCode, page)
		}
		if n := h.countConnections(); n != 1 {
			t.Errorf("%d connections after the reconnect, want the same one", n)
		}
		after, err := h.svc.Get(ctx, h.principal(h.member), id)
		if err != nil {
			t.Fatalf("the reconnected connection: %v", err)
		}
		if after.Version != before.Version+1 || after.OwnerUserID != h.member.userID || !after.Shared || after.Status != "active" {
			t.Errorf("after the reconnect: version %d (was %d), owner %s (want %s), shared %v, status %s",
				after.Version, before.Version, after.OwnerUserID, h.member.userID, after.Shared, after.Status)
		}
		if err := getIssue(h, h.node, h.principal(h.member), id); err != nil {
			t.Errorf("a call on the reconnected connection: %v", err)
		}
	})
}
