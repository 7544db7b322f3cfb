package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// Targets of a membersCase that are not one of the case's own users.
const (
	targetOtherTenant = -1 // a user of another tenant
	targetMissing     = -2 // an id nobody has
)

// membersTenant is a fresh tenant with one user (and one API key) per role given.
type membersTenant struct {
	slug  string
	id    switchboard.TenantID
	users []actor
}

var tenantSeq atomic.Int64

// newMembersTenant creates a tenant whose users have the roles given; the user at
// operatorKey (if not -1) also holds an operator key.
func (w *world) newMembersTenant(roles []switchboard.Role, operatorKey int) membersTenant {
	w.t.Helper()
	ctx := context.Background()
	slug := fmt.Sprintf("members-%d", tenantSeq.Add(1))
	ten, err := w.tenants.CreateTenant(ctx, slug, "Members")
	if err != nil {
		w.t.Fatal(err)
	}
	mt := membersTenant{slug: slug, id: ten.ID}
	for i, r := range roles {
		a := w.newUser(ten.ID, fmt.Sprintf("u%d@%s.test", i, slug), r)
		if i == operatorKey {
			if _, _, err := w.tenants.CreateKey(ctx, ten.ID, a.userID, "operator", true); err != nil {
				w.t.Fatal(err)
			}
		}
		mt.users = append(mt.users, a)
	}
	return mt
}

// roles returns the role of each of the tenant's original users, "" for one removed.
func (w *world) roles(mt membersTenant) []string {
	w.t.Helper()
	list, err := w.tenants.ListUsers(context.Background(), mt.id)
	if err != nil {
		w.t.Fatal(err)
	}
	out := make([]string, len(mt.users))
	for i, a := range mt.users {
		for _, u := range list {
			if u.ID == a.userID {
				out[i] = string(u.Role)
			}
		}
	}
	return out
}

func TestMembersRolesAndRemoval(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		const (
			owner  = switchboard.RoleOwner
			admin  = switchboard.RoleAdmin
			member = switchboard.RoleMember
		)
		tests := []struct {
			name        string
			roles       []switchboard.Role
			operatorKey bool // the target holds an operator key
			who         int
			target      int
			method      string
			body        string
			wantStatus  int
			wantField   string
			wantRoles   []string
		}{
			{name: "owner makes a member admin", roles: []switchboard.Role{owner, member}, who: 0, target: 1, method: http.MethodPatch, body: `{"role":"admin"}`, wantStatus: http.StatusOK, wantRoles: []string{"owner", "admin"}},
			{name: "admin makes a member admin", roles: []switchboard.Role{owner, admin, member}, who: 1, target: 2, method: http.MethodPatch, body: `{"role":"admin"}`, wantStatus: http.StatusOK, wantRoles: []string{"owner", "admin", "admin"}},
			{name: "admin demotes an admin", roles: []switchboard.Role{owner, admin, admin}, who: 1, target: 2, method: http.MethodPatch, body: `{"role":"member"}`, wantStatus: http.StatusOK, wantRoles: []string{"owner", "admin", "member"}},
			{name: "same role changes nothing", roles: []switchboard.Role{owner, member}, who: 0, target: 1, method: http.MethodPatch, body: `{"role":"member"}`, wantStatus: http.StatusOK, wantRoles: []string{"owner", "member"}},
			{name: "owner grants owner", roles: []switchboard.Role{owner, admin}, who: 0, target: 1, method: http.MethodPatch, body: `{"role":"owner","from":"admin"}`, wantStatus: http.StatusOK, wantRoles: []string{"owner", "owner"}},
			{name: "owner demotes another owner", roles: []switchboard.Role{owner, owner}, who: 0, target: 1, method: http.MethodPatch, body: `{"role":"admin","from":"owner"}`, wantStatus: http.StatusOK, wantRoles: []string{"owner", "admin"}},
			{name: "owner steps down while another owner stays", roles: []switchboard.Role{owner, owner}, who: 0, target: 0, method: http.MethodPatch, body: `{"role":"admin","from":"owner"}`, wantStatus: http.StatusOK, wantRoles: []string{"admin", "owner"}},
			{name: "member changes a role", roles: []switchboard.Role{owner, member, member}, who: 1, target: 2, method: http.MethodPatch, body: `{"role":"admin"}`, wantStatus: http.StatusForbidden, wantRoles: []string{"owner", "member", "member"}},
			{name: "member promotes themselves", roles: []switchboard.Role{owner, member}, who: 1, target: 1, method: http.MethodPatch, body: `{"role":"owner"}`, wantStatus: http.StatusForbidden, wantRoles: []string{"owner", "member"}},
			{name: "admin grants owner", roles: []switchboard.Role{owner, admin, member}, who: 1, target: 2, method: http.MethodPatch, body: `{"role":"owner"}`, wantStatus: http.StatusForbidden, wantRoles: []string{"owner", "admin", "member"}},
			{name: "admin promotes themselves to owner", roles: []switchboard.Role{owner, admin}, who: 1, target: 1, method: http.MethodPatch, body: `{"role":"owner"}`, wantStatus: http.StatusForbidden, wantRoles: []string{"owner", "admin"}},
			{name: "admin demotes an owner", roles: []switchboard.Role{owner, owner, admin}, who: 2, target: 0, method: http.MethodPatch, body: `{"role":"member"}`, wantStatus: http.StatusForbidden, wantRoles: []string{"owner", "owner", "admin"}},
			{name: "last owner demotes themselves", roles: []switchboard.Role{owner, admin}, who: 0, target: 0, method: http.MethodPatch, body: `{"role":"admin","from":"owner"}`, wantStatus: http.StatusConflict, wantField: "role", wantRoles: []string{"owner", "admin"}},
			// The confirmation a role change carries (from): required where the change
			// decides who controls the workspace, and checked against the role now.
			{name: "member made admin, confirmed", roles: []switchboard.Role{owner, member}, who: 0, target: 1, method: http.MethodPatch, body: `{"role":"admin","from":"member"}`, wantStatus: http.StatusOK, wantRoles: []string{"owner", "admin"}},
			{name: "confirmed from a stale role", roles: []switchboard.Role{owner, member}, who: 0, target: 1, method: http.MethodPatch, body: `{"role":"member","from":"admin"}`, wantStatus: http.StatusConflict, wantField: "from", wantRoles: []string{"owner", "member"}},
			{name: "stale confirmation of a promotion", roles: []switchboard.Role{owner, admin}, who: 0, target: 1, method: http.MethodPatch, body: `{"role":"owner","from":"member"}`, wantStatus: http.StatusConflict, wantField: "from", wantRoles: []string{"owner", "admin"}},
			{name: "owner grants owner unconfirmed", roles: []switchboard.Role{owner, admin}, who: 0, target: 1, method: http.MethodPatch, body: `{"role":"owner"}`, wantStatus: http.StatusBadRequest, wantField: "from", wantRoles: []string{"owner", "admin"}},
			{name: "owner demotes an owner unconfirmed", roles: []switchboard.Role{owner, owner}, who: 0, target: 1, method: http.MethodPatch, body: `{"role":"member"}`, wantStatus: http.StatusBadRequest, wantField: "from", wantRoles: []string{"owner", "owner"}},
			{name: "owner steps down unconfirmed", roles: []switchboard.Role{owner, owner}, who: 0, target: 0, method: http.MethodPatch, body: `{"role":"admin"}`, wantStatus: http.StatusBadRequest, wantField: "from", wantRoles: []string{"owner", "owner"}},
			{name: "admin steps down unconfirmed", roles: []switchboard.Role{owner, admin}, who: 1, target: 1, method: http.MethodPatch, body: `{"role":"member"}`, wantStatus: http.StatusBadRequest, wantField: "from", wantRoles: []string{"owner", "admin"}},
			{name: "admin steps down, confirmed", roles: []switchboard.Role{owner, admin}, who: 1, target: 1, method: http.MethodPatch, body: `{"role":"member","from":"admin"}`, wantStatus: http.StatusOK, wantRoles: []string{"owner", "member"}},
			{name: "bad from", roles: []switchboard.Role{owner, member}, who: 0, target: 1, method: http.MethodPatch, body: `{"role":"admin","from":"boss"}`, wantStatus: http.StatusBadRequest, wantField: "from", wantRoles: []string{"owner", "member"}},
			{name: "bad role", roles: []switchboard.Role{owner, member}, who: 0, target: 1, method: http.MethodPatch, body: `{"role":"root"}`, wantStatus: http.StatusBadRequest, wantField: "role", wantRoles: []string{"owner", "member"}},
			{name: "no role", roles: []switchboard.Role{owner, member}, who: 0, target: 1, method: http.MethodPatch, body: `{}`, wantStatus: http.StatusBadRequest, wantField: "role", wantRoles: []string{"owner", "member"}},
			{name: "unknown field", roles: []switchboard.Role{owner, member}, who: 0, target: 1, method: http.MethodPatch, body: `{"role":"admin","email":"x@y.test"}`, wantStatus: http.StatusBadRequest, wantField: "email", wantRoles: []string{"owner", "member"}},
			{name: "another tenant's user's role", roles: []switchboard.Role{owner}, who: 0, target: targetOtherTenant, method: http.MethodPatch, body: `{"role":"admin"}`, wantStatus: http.StatusNotFound, wantRoles: []string{"owner"}},
			{name: "a missing user's role", roles: []switchboard.Role{owner}, who: 0, target: targetMissing, method: http.MethodPatch, body: `{"role":"admin"}`, wantStatus: http.StatusNotFound, wantRoles: []string{"owner"}},

			{name: "owner removes a member", roles: []switchboard.Role{owner, member}, who: 0, target: 1, method: http.MethodDelete, wantStatus: http.StatusNoContent, wantRoles: []string{"owner", ""}},
			{name: "admin removes a member", roles: []switchboard.Role{owner, admin, member}, who: 1, target: 2, method: http.MethodDelete, wantStatus: http.StatusNoContent, wantRoles: []string{"owner", "admin", ""}},
			{name: "admin removes an admin", roles: []switchboard.Role{owner, admin, admin}, who: 1, target: 2, method: http.MethodDelete, wantStatus: http.StatusNoContent, wantRoles: []string{"owner", "admin", ""}},
			{name: "owner removes another owner", roles: []switchboard.Role{owner, owner}, who: 0, target: 1, method: http.MethodDelete, wantStatus: http.StatusNoContent, wantRoles: []string{"owner", ""}},
			{name: "admin removes an owner", roles: []switchboard.Role{owner, owner, admin}, who: 2, target: 1, method: http.MethodDelete, wantStatus: http.StatusForbidden, wantRoles: []string{"owner", "owner", "admin"}},
			{name: "member removes a member", roles: []switchboard.Role{owner, member, member}, who: 1, target: 2, method: http.MethodDelete, wantStatus: http.StatusForbidden, wantRoles: []string{"owner", "member", "member"}},
			{name: "admin removes themselves", roles: []switchboard.Role{owner, admin}, who: 1, target: 1, method: http.MethodDelete, wantStatus: http.StatusForbidden, wantRoles: []string{"owner", "admin"}},
			{name: "owner removes themselves", roles: []switchboard.Role{owner, owner}, who: 0, target: 0, method: http.MethodDelete, wantStatus: http.StatusForbidden, wantRoles: []string{"owner", "owner"}},
			{name: "owner removes the operator key's holder", roles: []switchboard.Role{owner, owner}, operatorKey: true, who: 0, target: 1, method: http.MethodDelete, wantStatus: http.StatusForbidden, wantRoles: []string{"owner", "owner"}},
			{name: "remove another tenant's user", roles: []switchboard.Role{owner}, who: 0, target: targetOtherTenant, method: http.MethodDelete, wantStatus: http.StatusNotFound, wantRoles: []string{"owner"}},
			{name: "remove a missing user", roles: []switchboard.Role{owner}, who: 0, target: targetMissing, method: http.MethodDelete, wantStatus: http.StatusNotFound, wantRoles: []string{"owner"}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				op := -1
				if tc.operatorKey {
					op = tc.target
				}
				mt := w.newMembersTenant(tc.roles, op)
				var target string
				switch tc.target {
				case targetOtherTenant:
					target = w.member.userID
				case targetMissing:
					target = "usr_missing"
				default:
					target = mt.users[tc.target].userID
				}
				status, b := w.do(mt.users[tc.who], tc.method, "/api/users/"+target, tc.body)
				if status != tc.wantStatus {
					t.Fatalf("status %d, want %d; body %s", status, tc.wantStatus, b)
				}
				if status >= 400 {
					if e := decodeError(t, b); e.Error.Field != tc.wantField {
						t.Errorf("field %q, want %q (%s)", e.Error.Field, tc.wantField, b)
					}
				}
				if diff := cmp.Diff(tc.wantRoles, w.roles(mt)); diff != "" {
					t.Errorf("roles afterwards (-want +got):\n%s", diff)
				}
				if tc.target == targetOtherTenant {
					if got, _ := w.tenants.User(context.Background(), w.a.ID, w.member.userID); got.Role != switchboard.RoleMember {
						t.Errorf("the other tenant's user is now %+v", got)
					}
				}
			})
		}

		// Another tenant's user answers exactly like a missing one.
		mt := w.newMembersTenant([]switchboard.Role{owner}, -1)
		for _, method := range []string{http.MethodPatch, http.MethodDelete} {
			body := ""
			if method == http.MethodPatch {
				body = `{"role":"admin"}`
			}
			_, other := w.do(mt.users[0], method, "/api/users/"+w.member.userID, body)
			_, missing := w.do(mt.users[0], method, "/api/users/usr_missing", body)
			if diff := cmp.Diff(string(missing), string(other)); diff != "" {
				t.Errorf("%s: another tenant's user vs a missing one (-missing +other):\n%s", method, diff)
			}
		}
	})
}

// TestLastOwnerStoreGuard checks the store itself keeps a tenant's last owner, whatever
// the caller checked before (a stale role, a race).
func TestLastOwnerStoreGuard(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		ctx := context.Background()
		mt := w.newMembersTenant([]switchboard.Role{switchboard.RoleOwner, switchboard.RoleAdmin}, -1)
		owner := mt.users[0].userID
		tests := []struct {
			name string
			do   func() error
		}{
			{name: "demote", do: func() error {
				_, _, err := w.tenants.SetUserRole(ctx, mt.id, owner, switchboard.RoleMember)
				return err
			}},
			{name: "remove", do: func() error {
				_, err := w.tenants.RemoveUser(ctx, mt.id, owner, true)
				return err
			}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				err := tc.do()
				e := switchboard.AsError(err)
				if err == nil || e.Code != switchboard.CodeConflict || e.Field != "role" {
					t.Fatalf("err %v, want a conflict on role", err)
				}
				if diff := cmp.Diff([]string{"owner", "admin"}, w.roles(mt)); diff != "" {
					t.Errorf("roles afterwards (-want +got):\n%s", diff)
				}
			})
		}
		if _, err := w.tenants.RemoveUser(ctx, w.b.ID, owner, true); switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Errorf("removing a user through another tenant: %v, want not_found", err)
		}
		if _, _, err := w.tenants.SetUserRole(ctx, w.b.ID, owner, switchboard.RoleAdmin); switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Errorf("changing a role through another tenant: %v, want not_found", err)
		}
	})
}

// TestMemberChangesTakeEffect checks that a role change reaches the user's keys at once
// and that a removal revokes every key, ends every session and leaves audit events.
func TestMemberChangesTakeEffect(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		ctx := context.Background()
		mt := w.newMembersTenant([]switchboard.Role{switchboard.RoleOwner, switchboard.RoleAdmin, switchboard.RoleMember}, -1)
		owner, adm, mem := mt.users[0], mt.users[1], mt.users[2]

		// The admin's key works as an admin (and is cached so), then is demoted: the
		// same key is refused admin work at once.
		w.want(adm, http.MethodPost, "/api/users", `{"email":"new@x.test"}`, http.StatusCreated, nil)
		var changed struct {
			ID   string `json:"id"`
			Role string `json:"role"`
		}
		w.want(owner, http.MethodPatch, "/api/users/"+adm.userID, `{"role":"member"}`, http.StatusOK, &changed)
		if changed.ID != adm.userID || changed.Role != "member" {
			t.Errorf("PATCH answered %+v", changed)
		}
		w.want(adm, http.MethodPost, "/api/users", `{"email":"new2@x.test"}`, http.StatusForbidden, nil)

		// The member has a second key, an agent's key and two browser sessions.
		second, _, err := w.tenants.CreateKey(ctx, mt.id, mem.userID, "second", false)
		if err != nil {
			t.Fatal(err)
		}
		agentKey, _, err := w.tenants.CreateAgentKey(ctx, mt.id, mem.userID, "agt_x", "agent", mem.userID)
		if err != nil {
			t.Fatal(err)
		}
		s1 := w.signIn(mt.slug, mem, "u2@"+mt.slug+".test")
		token2, _, err := w.tenants.SignIn(ctx, mt.slug, "u2@"+mt.slug+".test", "a long enough password")
		if err != nil {
			t.Fatal(err)
		}
		keys := []string{mem.key, second, agentKey}
		for _, k := range keys {
			w.want(actor{key: k}, http.MethodGet, "/api/tenant", "", http.StatusOK, nil)
		}
		if status, b := w.doBrowser(s1, "", http.MethodGet, "/api/tenant", ""); status != http.StatusOK {
			t.Fatalf("session before removal: %d %s", status, b)
		}
		memKeys, err := w.tenants.ListKeys(ctx, mt.id)
		if err != nil {
			t.Fatal(err)
		}
		var memKeyIDs []string
		for _, k := range memKeys {
			if k.UserID == mem.userID {
				memKeyIDs = append(memKeyIDs, k.ID)
			}
		}

		// An owner's browser session removes the member, as the Settings page does.
		ob := w.signIn(mt.slug, owner, "u0@"+mt.slug+".test")
		if status, b := w.doBrowser(ob, ob.csrf, http.MethodDelete, "/api/users/"+mem.userID, ""); status != http.StatusNoContent {
			t.Fatalf("remove: %d %s", status, b)
		}
		for _, k := range keys {
			status, b := w.do(actor{key: k}, http.MethodGet, "/api/tenant", "")
			if status != http.StatusUnauthorized {
				t.Errorf("a removed user's key answers %d %s, want 401", status, b)
			}
		}
		for _, tok := range []string{s1.cookie, token2} {
			if status, b := w.doBrowser(browser{cookie: tok}, "", http.MethodGet, "/api/tenant", ""); status != http.StatusUnauthorized {
				t.Errorf("a removed user's session answers %d %s, want 401", status, b)
			}
			if _, err := w.tenants.AuthenticateSession(ctx, tok); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
				t.Errorf("a removed user's session authenticates: %v", err)
			}
		}
		var sessions int64
		if err := db.Table("web_sessions").Where("user_id = ?", mem.userID).Count(&sessions).Error; err != nil || sessions != 0 {
			t.Errorf("%d sessions of the removed user are left (%v)", sessions, err)
		}
		if _, err := w.tenants.User(ctx, mt.id, mem.userID); switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Errorf("the removed user is still there: %v", err)
		}
		// A second removal finds nobody.
		w.want(owner, http.MethodDelete, "/api/users/"+mem.userID, "", http.StatusNotFound, nil)

		w.flushAudit()
		type event struct {
			Principal string `json:"principal"`
			Detail    string `json:"detail"`
		}
		var events struct {
			Events []event `json:"events"`
		}
		w.want(owner, http.MethodGet, "/api/audit?kind=user_role_changed", "", http.StatusOK, &events)
		want := []event{{Principal: "user:" + owner.userID, Detail: "changed the role of user " + adm.userID + " from admin to member"}}
		if diff := cmp.Diff(want, events.Events); diff != "" {
			t.Errorf("user_role_changed events (-want +got):\n%s", diff)
		}
		w.want(owner, http.MethodGet, "/api/audit?kind=user_removed", "", http.StatusOK, &events)
		if len(events.Events) != 1 || events.Events[0].Principal != "user:"+owner.userID || !strings.Contains(events.Events[0].Detail, "removed user "+mem.userID+" (member)") ||
			!strings.Contains(events.Events[0].Detail, "ended 2 sessions") {
			t.Fatalf("user_removed events: %+v", events.Events)
		}
		for _, id := range memKeyIDs {
			if !strings.Contains(events.Events[0].Detail, id) {
				t.Errorf("the user_removed event does not name revoked key %s: %s", id, events.Events[0].Detail)
			}
		}
		for _, secret := range append(keys, s1.cookie, token2) {
			if strings.Contains(events.Events[0].Detail, secret) {
				t.Errorf("the audit detail holds a secret")
			}
		}
	})
}
