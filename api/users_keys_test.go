package api_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

type keyBody struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Prefix string `json:"prefix"`
	UserID string `json:"user_id"`
	Key    string `json:"key"`
}

func TestUsers(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		type createdUser struct {
			ID     string  `json:"id"`
			Email  string  `json:"email"`
			Role   string  `json:"role"`
			APIKey keyBody `json:"api_key"`
		}
		var u createdUser
		w.want(w.admin, http.MethodPost, "/api/users", `{"email":"Grace@A.test","role":"admin"}`, http.StatusCreated, &u)
		if u.ID == "" || u.Email != "grace@a.test" || u.Role != "admin" {
			t.Errorf("created user %+v", u)
		}
		grace := u
		w.want(w.admin, http.MethodPost, "/api/users", `{"email":"linus@a.test"}`, http.StatusCreated, &u)
		if u.Role != "member" {
			t.Errorf("role defaults to %q, want member", u.Role)
		}
		linus := u

		// A new user gets their first API key in the answer, once: nobody else can mint
		// one for them. It authenticates as the new user.
		for _, nu := range []createdUser{grace, linus} {
			k := nu.APIKey
			if k.Key == "" || k.ID == "" || k.UserID != nu.ID || k.Prefix == "" || !strings.Contains(k.Key, k.Prefix) {
				t.Errorf("%s's first key: %+v", nu.Email, k)
			}
		}
		var ten struct {
			Slug string `json:"slug"`
		}
		w.want(actor{key: linus.APIKey.Key}, http.MethodGet, "/api/tenant", "", http.StatusOK, &ten)
		if ten.Slug != "default" {
			t.Errorf("the new user's key sees tenant %q, want default", ten.Slug)
		}
		var self struct {
			Users []struct {
				ID string `json:"id"`
			} `json:"users"`
		}
		w.want(actor{key: linus.APIKey.Key}, http.MethodGet, "/api/users", "", http.StatusOK, &self)
		if len(self.Users) != 1 || self.Users[0].ID != linus.ID {
			t.Errorf("the new member's key acts as %+v, want only %s", self.Users, linus.ID)
		}
		var graceKeys struct {
			Keys []keyBody `json:"keys"`
		}
		w.want(actor{key: grace.APIKey.Key}, http.MethodPost, "/api/keys", `{"name":"second"}`, http.StatusCreated, nil)
		w.want(actor{key: grace.APIKey.Key}, http.MethodGet, "/api/keys", "", http.StatusOK, &graceKeys)
		for _, k := range graceKeys.Keys {
			if k.Name == "second" && k.UserID != grace.ID {
				t.Errorf("a key minted with the new admin's key belongs to %s, want %s", k.UserID, grace.ID)
			}
		}
		w.flushAudit()
		var events struct {
			Events []struct {
				Principal string `json:"principal"`
				Detail    string `json:"detail"`
			} `json:"events"`
		}
		w.want(w.admin, http.MethodGet, "/api/audit?kind=user_created", "", http.StatusOK, &events)
		for _, nu := range []createdUser{grace, linus} {
			found := false
			for _, e := range events.Events {
				found = found || (e.Principal == "user:"+w.admin.userID && strings.Contains(e.Detail, nu.APIKey.ID) && strings.Contains(e.Detail, nu.ID))
			}
			if !found {
				t.Errorf("no user_created event by the admin for %s with first key %s: %+v", nu.Email, nu.APIKey.ID, events.Events)
			}
		}

		tests := []struct {
			name       string
			who        actor
			body       string
			wantStatus int
			wantField  string
		}{
			{name: "member adds a user", who: w.member, body: `{"email":"x@a.test","role":"member"}`, wantStatus: http.StatusForbidden},
			{name: "same email", who: w.admin, body: `{"email":"grace@a.test","role":"member"}`, wantStatus: http.StatusConflict, wantField: "email"},
			{name: "bad email", who: w.admin, body: `{"email":"grace","role":"member"}`, wantStatus: http.StatusBadRequest, wantField: "email"},
			{name: "no email", who: w.admin, body: `{"role":"member"}`, wantStatus: http.StatusBadRequest, wantField: "email"},
			{name: "bad role", who: w.admin, body: `{"email":"y@a.test","role":"root"}`, wantStatus: http.StatusBadRequest, wantField: "role"},
			{name: "unknown field", who: w.admin, body: `{"email":"y@a.test","password":"x"}`, wantStatus: http.StatusBadRequest, wantField: "password"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				status, b := w.do(tc.who, http.MethodPost, "/api/users", tc.body)
				if status != tc.wantStatus {
					t.Fatalf("status %d, want %d; body %s", status, tc.wantStatus, b)
				}
				if e := decodeError(t, b); e.Error.Field != tc.wantField {
					t.Errorf("field %q, want %q", e.Error.Field, tc.wantField)
				}
			})
		}

		var list struct {
			Users []struct {
				Email string `json:"email"`
			} `json:"users"`
		}
		emails := func(who actor) []string {
			w.want(who, http.MethodGet, "/api/users", "", http.StatusOK, &list)
			var out []string
			for _, u := range list.Users {
				out = append(out, u.Email)
			}
			slices.Sort(out)
			return out
		}
		if diff := cmp.Diff([]string{"admin@localhost", "grace@a.test", "linus@a.test", "member@a.test"}, emails(w.admin)); diff != "" {
			t.Errorf("admin's list (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"member@a.test"}, emails(w.member)); diff != "" {
			t.Errorf("member's list (-want +got):\n%s", diff)
		}
	})
}

func TestKeys(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		adminA := w.newUser(w.a.ID, "admin@a.test", switchboard.RoleAdmin)
		keysOf := func(userID string) []string {
			t.Helper()
			list, err := w.tenants.ListKeys(context.Background(), w.a.ID)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, k := range list {
				if k.UserID == userID {
					out = append(out, k.Name)
				}
			}
			slices.Sort(out)
			return out
		}

		var own keyBody
		w.want(w.member, http.MethodPost, "/api/keys", `{"name":"laptop"}`, http.StatusCreated, &own)
		if own.Key == "" || own.UserID != w.member.userID || own.Name != "laptop" || own.Prefix == "" {
			t.Fatalf("member's own key: %+v", own)
		}
		var forMember keyBody
		w.want(w.member, http.MethodPost, "/api/keys", `{"name":"ci"}`, http.StatusCreated, &forMember)
		if forMember.UserID != w.member.userID || forMember.Key == "" {
			t.Fatalf("member's second key: %+v", forMember)
		}
		var adminKey keyBody
		w.want(w.admin, http.MethodPost, "/api/keys", `{"name":"admin-2"}`, http.StatusCreated, &adminKey)

		refusals := []struct {
			name       string
			who        actor
			method     string
			path       string
			body       string
			wantStatus int
			wantField  string
		}{
			// Every user mints keys only for themselves: an admin minting one for the owner
			// or a member could act as them, with their private connections.
			{name: "member creates a key for another user", who: w.member, method: http.MethodPost, path: "/api/keys", body: `{"name":"x","user_id":"` + w.admin.userID + `"}`, wantStatus: http.StatusBadRequest, wantField: "user_id"},
			{name: "admin creates a key for the owner", who: adminA, method: http.MethodPost, path: "/api/keys", body: `{"name":"x","user_id":"` + w.admin.userID + `"}`, wantStatus: http.StatusBadRequest, wantField: "user_id"},
			{name: "admin creates a key for a member", who: adminA, method: http.MethodPost, path: "/api/keys", body: `{"name":"x","user_id":"` + w.member.userID + `"}`, wantStatus: http.StatusBadRequest, wantField: "user_id"},
			{name: "admin names their own user", who: adminA, method: http.MethodPost, path: "/api/keys", body: `{"name":"x","user_id":"` + adminA.userID + `"}`, wantStatus: http.StatusBadRequest, wantField: "user_id"},
			{name: "admin creates a key for a user of another tenant", who: w.admin, method: http.MethodPost, path: "/api/keys", body: `{"name":"x","user_id":"` + w.ownerB.userID + `"}`, wantStatus: http.StatusBadRequest, wantField: "user_id"},
			{name: "no name", who: w.member, method: http.MethodPost, path: "/api/keys", body: `{}`, wantStatus: http.StatusBadRequest, wantField: "name"},
			{name: "operator flag is not a field", who: w.admin, method: http.MethodPost, path: "/api/keys", body: `{"name":"x","operator":true}`, wantStatus: http.StatusBadRequest, wantField: "operator"},
			{name: "member revokes the admin's key", who: w.member, method: http.MethodDelete, path: "/api/keys/" + adminKey.ID, wantStatus: http.StatusNotFound},
			{name: "unknown key", who: w.admin, method: http.MethodDelete, path: "/api/keys/key_nothere", wantStatus: http.StatusNotFound},
		}
		for _, tc := range refusals {
			t.Run(tc.name, func(t *testing.T) {
				status, b := w.do(tc.who, tc.method, tc.path, tc.body)
				if status != tc.wantStatus {
					t.Fatalf("status %d, want %d; body %s", status, tc.wantStatus, b)
				}
				e := decodeError(t, b)
				if e.Error.Field != tc.wantField {
					t.Errorf("field %q, want %q", e.Error.Field, tc.wantField)
				}
				if tc.wantField == "user_id" && e.Error.Message != "is not a known field" {
					t.Errorf("message %q, want the field refused as unknown", e.Error.Message)
				}
			})
		}
		// None of the refused requests left a key behind.
		if diff := cmp.Diff([]string{"admin-2", "bootstrap"}, keysOf(w.admin.userID)); diff != "" {
			t.Errorf("the owner's keys (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"ci", "laptop", "test"}, keysOf(w.member.userID)); diff != "" {
			t.Errorf("the member's keys (-want +got):\n%s", diff)
		}

		ids := func(who actor) []string {
			var list struct {
				Keys []keyBody `json:"keys"`
			}
			w.want(who, http.MethodGet, "/api/keys", "", http.StatusOK, &list)
			var out []string
			for _, k := range list.Keys {
				if k.Key != "" {
					t.Errorf("a listing shows a key in the clear: %+v", k)
				}
				out = append(out, k.ID)
			}
			slices.Sort(out)
			return out
		}
		memberKeys := ids(w.member)
		for _, id := range []string{own.ID, forMember.ID} {
			if !slices.Contains(memberKeys, id) {
				t.Errorf("member's list lacks %s: %v", id, memberKeys)
			}
		}
		if slices.Contains(memberKeys, adminKey.ID) {
			t.Errorf("member's list shows the admin's key")
		}
		if all := ids(w.admin); !slices.Contains(all, adminKey.ID) || !slices.Contains(all, own.ID) {
			t.Errorf("admin's list %v lacks keys", all)
		}

		// New keys authenticate; revoked ones stop at once.
		fresh := actor{key: own.Key}
		w.want(fresh, http.MethodGet, "/api/tenant", "", http.StatusOK, nil)
		w.want(w.member, http.MethodDelete, "/api/keys/"+own.ID, "", http.StatusNoContent, nil)
		w.want(fresh, http.MethodGet, "/api/tenant", "", http.StatusUnauthorized, nil)
		// Revoking it again changes nothing and records nothing.
		w.want(w.member, http.MethodDelete, "/api/keys/"+own.ID, "", http.StatusNoContent, nil)
		w.want(w.admin, http.MethodDelete, "/api/keys/"+forMember.ID, "", http.StatusNoContent, nil)
		w.want(actor{key: forMember.Key}, http.MethodGet, "/api/tenant", "", http.StatusUnauthorized, nil)

		w.flushAudit()
		var events struct {
			Events []struct {
				Kind      string `json:"kind"`
				Principal string `json:"principal"`
			} `json:"events"`
		}
		w.want(w.member, http.MethodGet, "/api/audit", "", http.StatusOK, &events)
		var kinds []string
		for _, e := range events.Events {
			if e.Principal != "user:"+w.member.userID {
				t.Errorf("member sees another principal's event: %+v", e)
			}
			kinds = append(kinds, e.Kind)
		}
		if diff := cmp.Diff([]string{"key_revoked", "key_created", "key_created"}, kinds); diff != "" {
			t.Errorf("member's events, newest first (-want +got):\n%s", diff)
		}
	})
}

func TestAudit(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		conn := w.connect(w.admin, goodToken, false)
		w.want(w.admin, http.MethodDelete, "/api/connections/"+conn, "", http.StatusNoContent, nil)
		w.want(w.admin, http.MethodPost, "/api/keys", `{"name":"ci"}`, http.StatusCreated, nil)
		w.flushAudit()

		type event struct {
			ID           string `json:"id"`
			Kind         string `json:"kind"`
			Principal    string `json:"principal"`
			ConnectionID string `json:"connection_id"`
			Outcome      string `json:"outcome"`
		}
		var page struct {
			Events     []event `json:"events"`
			NextCursor string  `json:"next_cursor"`
		}
		w.want(w.admin, http.MethodGet, "/api/audit", "", http.StatusOK, &page)
		var kinds []string
		for _, e := range page.Events {
			kinds = append(kinds, e.Kind)
		}
		if diff := cmp.Diff([]string{"key_created", "connection_deleted", "connection_created"}, kinds); diff != "" {
			t.Errorf("events, newest first (-want +got):\n%s", diff)
		}
		if page.NextCursor != "" {
			t.Errorf("one page has a next cursor %q", page.NextCursor)
		}

		// Paging one at a time walks the same events.
		var walked []string
		cursor := ""
		for range 5 {
			w.want(w.admin, http.MethodGet, "/api/audit?limit=1&cursor="+cursor, "", http.StatusOK, &page)
			for _, e := range page.Events {
				walked = append(walked, e.Kind)
			}
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
		if diff := cmp.Diff(kinds, walked); diff != "" {
			t.Errorf("paged walk (-want +got):\n%s", diff)
		}

		w.want(w.admin, http.MethodGet, "/api/audit?outcome=internal", "", http.StatusOK, &page)
		if len(page.Events) != 0 {
			t.Errorf("outcome=internal lists %+v", page.Events)
		}
		w.want(w.admin, http.MethodGet, "/api/audit?kind=connection_created", "", http.StatusOK, &page)
		if len(page.Events) != 1 || page.Events[0].ConnectionID != conn || page.Events[0].Outcome != "ok" {
			t.Errorf("kind filter: %+v", page.Events)
		}
		// The member did nothing, and sees nothing of the admin's.
		w.want(w.member, http.MethodGet, "/api/audit", "", http.StatusOK, &page)
		if len(page.Events) != 0 {
			t.Errorf("member sees %+v", page.Events)
		}

		for _, tc := range []struct {
			name, query, field string
		}{
			{name: "limit not a number", query: "limit=ten", field: "limit"},
			{name: "limit zero", query: "limit=0", field: "limit"},
			{name: "limit too large", query: "limit=100000", field: "limit"},
			{name: "bad cursor", query: "cursor=not-a-cursor!", field: "cursor"},
			{name: "unknown outcome", query: "outcome=bogus", field: "outcome"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, b := w.do(w.admin, http.MethodGet, "/api/audit?"+tc.query, "")
				if status != http.StatusBadRequest || decodeError(t, b).Error.Field != tc.field {
					t.Errorf("status %d body %s, want 400 naming %s", status, b, tc.field)
				}
			})
		}
	})
}

// TestOperatorKeysRevokedOnlyByOperators checks that a tenant's admins and owners, who
// may revoke any other key of the tenant, cannot revoke the deployment operator's keys:
// such a key answers them exactly like a missing one.
func TestOperatorKeysRevokedOnlyByOperators(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		ctx := context.Background()
		adminA := w.newUser(w.a.ID, "admin@a.test", switchboard.RoleAdmin)
		ownerA := w.newUser(w.a.ID, "owner2@a.test", switchboard.RoleOwner)
		_, spare, err := w.tenants.CreateKey(ctx, w.a.ID, w.admin.userID, "ops-2", true)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := w.tenants.ListKeys(ctx, w.a.ID)
		if err != nil {
			t.Fatal(err)
		}
		var bootstrap string
		for _, k := range keys {
			if k.Name == "bootstrap" && k.Operator {
				bootstrap = k.ID
			}
		}
		if bootstrap == "" {
			t.Fatalf("no bootstrap operator key among %+v", keys)
		}
		_, missing := w.do(adminA, http.MethodDelete, "/api/keys/key_nothere", "")

		for _, tc := range []struct {
			name string
			who  actor
		}{
			{name: "admin", who: adminA},
			{name: "owner without an operator key", who: ownerA},
			{name: "member", who: w.member},
		} {
			t.Run(tc.name, func(t *testing.T) {
				for _, id := range []string{bootstrap, spare.ID} {
					status, b := w.do(tc.who, http.MethodDelete, "/api/keys/"+id, "")
					if status != http.StatusNotFound || string(b) != string(missing) {
						t.Errorf("revoke operator key %s: status %d body %s, want 404 %s", id, status, b, missing)
					}
				}
			})
		}
		// The operator's keys still work, and the operator may revoke one.
		w.want(w.admin, http.MethodGet, "/api/tenants", "", http.StatusOK, nil)
		w.want(w.admin, http.MethodDelete, "/api/keys/"+spare.ID, "", http.StatusNoContent, nil)
		k, err := w.tenants.Key(ctx, w.a.ID, spare.ID)
		if err != nil || !k.Revoked() {
			t.Errorf("the operator's revocation: key %+v, err %v", k, err)
		}
		if k, err := w.tenants.Key(ctx, w.a.ID, bootstrap); err != nil || k.Revoked() {
			t.Errorf("bootstrap key after the refusals: %+v, err %v", k, err)
		}
	})
}
