package api_test

import (
	"net/http"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestInvitingTwiceIsRefused: a second invitation for someone whose invitation is
// pending is a conflict on email that names the pending one and says to resend it;
// nothing new is made, and the first link still works.
func TestInvitingTwiceIsRefused(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		id, token := w.invite(w.admin, "twice@a.test", switchboard.RoleMember)
		status, b := w.do(w.admin, http.MethodPost, "/api/invitations", `{"email":"Twice@A.test","role":"admin"}`)
		e := decodeError(t, b)
		if status != http.StatusConflict || e.Error.Field != "email" || !strings.Contains(e.Error.Message, id) || !strings.Contains(e.Error.Message, "resend") {
			t.Errorf("a second invitation answered %d %+v, want 409 on email naming %s and resend", status, e, id)
		}
		var list struct {
			Invitations []struct{ ID string } `json:"invitations"`
		}
		w.want(w.admin, http.MethodGet, "/api/invitations", "", http.StatusOK, &list)
		if len(list.Invitations) != 1 || list.Invitations[0].ID != id {
			t.Errorf("invitations after the refused duplicate: %+v", list.Invitations)
		}
		if !w.linkWorks(token) {
			t.Error("the first invitation's link stopped working")
		}
	})
}

// TestResendInvitation: a resend gives the same invitation a new link and the old one
// stops working; members, other tenants and used invitations are refused, and only an
// owner resends an owner's invitation.
func TestResendInvitation(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		id, oldToken := w.invite(w.admin, "again@a.test", switchboard.RoleMember)
		ownerInv, _ := w.invite(w.admin, "boss@a.test", switchboard.RoleOwner) // the bootstrap admin is the owner
		for _, tc := range []struct {
			name   string
			who    actor
			id     string
			status int
		}{
			{name: "member", who: w.member, id: id, status: http.StatusForbidden},
			{name: "other tenant's owner", who: w.ownerB, id: id, status: http.StatusNotFound},
			{name: "unknown", who: w.admin, id: "inv_nope", status: http.StatusNotFound},
		} {
			if status, b := w.do(tc.who, http.MethodPost, "/api/invitations/"+tc.id+"/resend", ""); status != tc.status {
				t.Errorf("%s: resend answered %d %s, want %d", tc.name, status, b, tc.status)
			}
		}
		admin := w.newUser(w.a.ID, "second-admin@a.test", switchboard.RoleAdmin)
		if status, b := w.do(admin, http.MethodPost, "/api/invitations/"+ownerInv+"/resend", ""); status != http.StatusForbidden {
			t.Errorf("an admin resending an owner's invitation answered %d %s, want 403", status, b)
		}
		var resent struct {
			ID    string `json:"id"`
			Email string `json:"email"`
			URL   string `json:"url"`
		}
		w.want(w.admin, http.MethodPost, "/api/invitations/"+id+"/resend", "", http.StatusOK, &resent)
		newToken := resent.URL[strings.LastIndex(resent.URL, "/")+1:]
		if resent.ID != id || resent.Email != "again@a.test" || newToken == oldToken || !strings.HasPrefix(resent.URL, "https://hub.example.com/invite/") {
			t.Fatalf("resent %+v", resent)
		}
		if w.linkWorks(oldToken) {
			t.Error("the old link still works after the resend")
		}
		if !w.linkWorks(newToken) {
			t.Error("the new link does not work")
		}
		if status, _ := w.do(w.admin, http.MethodPost, "/api/invitations/"+id+"/resend", ""); status != http.StatusNotFound {
			t.Errorf("resending a used invitation answered %d, want 404", status)
		}
	})
}
