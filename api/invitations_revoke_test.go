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

// invite creates an invitation as who and returns its id and its link's token.
func (w *world) invite(who actor, email string, role switchboard.Role) (id, token string) {
	w.t.Helper()
	var created struct {
		ID  string `json:"id"`
		URL string `json:"url"`
	}
	w.want(who, http.MethodPost, "/api/invitations", `{"email":"`+email+`","role":"`+string(role)+`"}`, http.StatusCreated, &created)
	return created.ID, created.URL[strings.LastIndex(created.URL, "/")+1:]
}

// linkWorks reports whether a link still creates its user (it uses the link).
func (w *world) linkWorks(token string) bool {
	w.t.Helper()
	_, _, _, err := w.tenants.UseLink(context.Background(), token, "a long enough password")
	if err != nil && switchboard.CodeOf(err) != switchboard.CodeNotFound {
		w.t.Fatalf("UseLink: %v", err)
	}
	return err == nil
}

// TestRevokeInvitation: DELETE /api/invitations/{id} is for the tenant's admins, stops
// the link, and answers another tenant's, a used or an unknown invitation as not found.
func TestRevokeInvitation(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		id, token := w.invite(w.admin, "revoked@a.test", switchboard.RoleAdmin)
		usedID, usedToken := w.invite(w.admin, "used@a.test", switchboard.RoleMember)
		if !w.linkWorks(usedToken) {
			t.Fatal("a fresh invitation's link did not work")
		}
		refused := []struct {
			name   string
			who    actor
			id     string
			status int
		}{
			{name: "no key", id: id, status: http.StatusUnauthorized},
			{name: "member", who: w.member, id: id, status: http.StatusForbidden},
			{name: "other tenant's owner", who: w.ownerB, id: id, status: http.StatusNotFound},
			{name: "used invitation", who: w.admin, id: usedID, status: http.StatusNotFound},
			{name: "unknown", who: w.admin, id: "inv_nope", status: http.StatusNotFound},
		}
		for _, tc := range refused {
			if got, b := w.do(tc.who, http.MethodDelete, "/api/invitations/"+tc.id, ""); got != tc.status {
				t.Errorf("%s: status %d, want %d; body %s", tc.name, got, tc.status, b)
			}
		}
		w.want(w.admin, http.MethodDelete, "/api/invitations/"+id, "", http.StatusNoContent, nil)
		w.want(w.admin, http.MethodDelete, "/api/invitations/"+id, "", http.StatusNotFound, nil)
		var list struct {
			Invitations []struct{ ID string } `json:"invitations"`
		}
		w.want(w.admin, http.MethodGet, "/api/invitations", "", http.StatusOK, &list)
		if len(list.Invitations) != 0 {
			t.Errorf("invitations after the revocation: %+v", list.Invitations)
		}
		if w.linkWorks(token) {
			t.Error("a revoked invitation's link still created a user")
		}
		w.flushAudit()
		var events struct {
			Events []struct{ Detail string } `json:"events"`
		}
		w.want(w.admin, http.MethodGet, "/api/audit?kind=invitation_revoked", "", http.StatusOK, &events)
		if len(events.Events) != 1 || !strings.Contains(events.Events[0].Detail, id) {
			t.Errorf("audit of the revocation: %+v", events.Events)
		}
	})
}

// TestInvitationsFollowTheirInviter: an invitation stops working when its inviter is
// removed, or demoted below the role it grants; one the inviter may still grant keeps
// working.
func TestInvitationsFollowTheirInviter(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		cases := []struct {
			name      string
			inviter   switchboard.Role
			grants    switchboard.Role
			change    string // "remove" or a new role
			wantWorks bool
		}{
			{name: "removed admin's admin invitation", inviter: switchboard.RoleAdmin, grants: switchboard.RoleAdmin, change: "remove"},
			{name: "removed admin's member invitation", inviter: switchboard.RoleAdmin, grants: switchboard.RoleMember, change: "remove"},
			{name: "admin demoted to member", inviter: switchboard.RoleAdmin, grants: switchboard.RoleMember, change: "member"},
			{name: "owner demoted to admin, owner invitation", inviter: switchboard.RoleOwner, grants: switchboard.RoleOwner, change: "admin"},
			{name: "owner demoted to admin, admin invitation", inviter: switchboard.RoleOwner, grants: switchboard.RoleAdmin, change: "admin", wantWorks: true},
			{name: "admin promoted to owner", inviter: switchboard.RoleAdmin, grants: switchboard.RoleAdmin, change: "owner", wantWorks: true},
		}
		for i, tc := range cases {
			inviter := w.newUser(w.a.ID, "inviter"+string(rune('a'+i))+"@a.test", tc.inviter)
			id, token := w.invite(inviter, "invited"+string(rune('a'+i))+"@a.test", tc.grants)
			if tc.change == "remove" {
				w.want(w.admin, http.MethodDelete, "/api/users/"+inviter.userID, "", http.StatusNoContent, nil)
			} else {
				w.want(w.admin, http.MethodPatch, "/api/users/"+inviter.userID, `{"role":"`+tc.change+`","from":"`+string(tc.inviter)+`"}`, http.StatusOK, nil)
			}
			var list struct {
				Invitations []struct{ ID string } `json:"invitations"`
			}
			w.want(w.admin, http.MethodGet, "/api/invitations", "", http.StatusOK, &list)
			listed := false
			for _, inv := range list.Invitations {
				listed = listed || inv.ID == id
			}
			if listed != tc.wantWorks {
				t.Errorf("%s: listed %t, want %t", tc.name, listed, tc.wantWorks)
			}
			if got := w.linkWorks(token); got != tc.wantWorks {
				t.Errorf("%s: the link works %t, want %t", tc.name, got, tc.wantWorks)
			}
		}
	})
}

// TestLinkCheckedAgainstItsCreator: a link made by a user who may no longer grant its
// role (here changed behind the store's back, as a demotion committing while the link
// was made would) does not work.
func TestLinkCheckedAgainstItsCreator(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		inviter := w.newUser(w.a.ID, "racer@a.test", switchboard.RoleAdmin)
		_, token := w.invite(inviter, "raced@a.test", switchboard.RoleAdmin)
		if err := db.Exec("UPDATE users SET role = ? WHERE id = ?", switchboard.RoleMember, inviter.userID).Error; err != nil {
			t.Fatal(err)
		}
		if _, err := w.tenants.Link(context.Background(), token); switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Errorf("the link's page: %v, want the link refused as not found", err)
		}
		if w.linkWorks(token) {
			t.Error("a link of an inviter who may no longer grant its role created an admin")
		}
	})
}

// TestNewPasswordLinkReplacesOlder: only a user's newest password link works.
func TestNewPasswordLinkReplacesOlder(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		ctx := context.Background()
		older, _, err := w.tenants.PasswordLink(ctx, w.a.ID, w.member.userID, "operator")
		if err != nil {
			t.Fatal(err)
		}
		newer, _, err := w.tenants.PasswordLink(ctx, w.a.ID, w.member.userID, "operator")
		if err != nil {
			t.Fatal(err)
		}
		other, _, err := w.tenants.PasswordLink(ctx, w.b.ID, w.ownerB.userID, "operator")
		if err != nil {
			t.Fatal(err)
		}
		if w.linkWorks(older) {
			t.Error("an older password link still works after a newer one was made")
		}
		if !w.linkWorks(newer) {
			t.Error("the newest password link does not work")
		}
		if !w.linkWorks(other) {
			t.Error("another user's password link stopped working")
		}
	})
}
