package api_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestRemovedUsersConnections: removing a user revokes and deletes their private
// connections and hands their shared ones to the admin (the default), or hands every
// one to an owner or admin (connections=transfer); a bad choice removes nobody.
func TestRemovedUsersConnections(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		secondAdmin := w.newUser(w.a.ID, "admin2@a.test", switchboard.RoleAdmin)
		tests := []struct {
			name  string
			query func(leaver actor) string
			// want maps "private" and "shared" to the owner afterwards ("" for deleted).
			want map[string]string
		}{
			{name: "default", query: func(actor) string { return "" },
				want: map[string]string{"private": "", "shared": w.admin.userID}},
			{name: "revoke", query: func(actor) string { return "?connections=revoke" },
				want: map[string]string{"private": "", "shared": w.admin.userID}},
			{name: "transfer to the remover", query: func(actor) string { return "?connections=transfer" },
				want: map[string]string{"private": w.admin.userID, "shared": w.admin.userID}},
			{name: "transfer to another admin", query: func(actor) string { return "?connections=transfer&to=" + secondAdmin.userID },
				want: map[string]string{"private": secondAdmin.userID, "shared": secondAdmin.userID}},
		}
		for i, tc := range tests {
			leaver := w.newUser(w.a.ID, "leaver"+string(rune('a'+i))+"@a.test", switchboard.RoleMember)
			ids := map[string]string{"private": w.connect(leaver, goodToken, false), "shared": w.connect(leaver, otherToken, true)}
			w.want(w.admin, http.MethodDelete, "/api/users/"+leaver.userID+tc.query(leaver), "", http.StatusNoContent, nil)
			got := map[string]string{}
			for kind, id := range ids {
				var c struct {
					OwnerUserID string `json:"owner_user_id"`
				}
				status, b := w.do(w.admin, http.MethodGet, "/api/connections/"+id, "")
				switch status {
				case http.StatusNotFound:
					got[kind] = ""
				case http.StatusOK:
					w.want(w.admin, http.MethodGet, "/api/connections/"+id, "", http.StatusOK, &c)
					got[kind] = c.OwnerUserID
				default:
					t.Fatalf("%s: read %s connection: %d %s", tc.name, kind, status, b)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: owners after the removal (-want +got):\n%s", tc.name, diff)
			}
		}

		leaver := w.newUser(w.a.ID, "stays@a.test", switchboard.RoleMember)
		refused := []struct{ query, field string }{
			{query: "?connections=keep", field: "connections"},
			{query: "?to=" + secondAdmin.userID, field: "to"},
			{query: "?connections=transfer&to=" + w.member.userID, field: "to"},
			{query: "?connections=transfer&to=" + leaver.userID, field: "to"},
			{query: "?connections=transfer&to=" + w.ownerB.userID, field: "to"},
		}
		for _, tc := range refused {
			status, b := w.do(w.admin, http.MethodDelete, "/api/users/"+leaver.userID+tc.query, "")
			if status != http.StatusBadRequest || decodeError(t, b).Error.Field != tc.field {
				t.Errorf("%s: %d %s, want 400 naming %s", tc.query, status, b, tc.field)
			}
		}
		if _, err := w.tenants.User(t.Context(), w.a.ID, leaver.userID); err != nil {
			t.Errorf("a refused removal removed the user: %v", err)
		}
	})
}

// TestRemovedUsersOAuthConnectionRevoked: the default removal revokes the private
// OAuth connection's grant at the provider before deleting it.
func TestRemovedUsersOAuthConnectionRevoked(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		h := newOAuthHub(t, db, githubApp())
		b := h.browser()
		authURL := h.authorize(b, h.member, "")
		if resp, body, _ := h.consent(b, authURL, "allow", "octocat"); resp.StatusCode != http.StatusOK {
			t.Fatalf("connect as the member: %d %s", resp.StatusCode, body)
		}
		if n := h.countConnections(); n != 1 {
			t.Fatalf("%d connections before the removal", n)
		}
		h.api(h.admin, http.MethodDelete, "/api/users/"+h.member.userID, "", http.StatusNoContent, nil)
		if got := h.as.Revocations(); got != 1 {
			t.Errorf("revocations at the provider = %d, want 1", got)
		}
		if n := h.countConnections(); n != 0 {
			t.Errorf("%d connections after the removal, want 0", n)
		}
	})
}
