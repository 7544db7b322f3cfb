package api_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

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
		var u struct {
			ID    string `json:"id"`
			Email string `json:"email"`
			Role  string `json:"role"`
		}
		w.want(w.admin, http.MethodPost, "/api/users", `{"email":"Grace@A.test","role":"admin"}`, http.StatusCreated, &u)
		if u.ID == "" || u.Email != "grace@a.test" || u.Role != "admin" {
			t.Errorf("created user %+v", u)
		}
		w.want(w.admin, http.MethodPost, "/api/users", `{"email":"linus@a.test"}`, http.StatusCreated, &u)
		if u.Role != "member" {
			t.Errorf("role defaults to %q, want member", u.Role)
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

		var own keyBody
		w.want(w.member, http.MethodPost, "/api/keys", `{"name":"laptop"}`, http.StatusCreated, &own)
		if own.Key == "" || own.UserID != w.member.userID || own.Name != "laptop" || own.Prefix == "" {
			t.Fatalf("member's own key: %+v", own)
		}
		var forMember keyBody
		w.want(w.admin, http.MethodPost, "/api/keys", `{"name":"ci","user_id":"`+w.member.userID+`"}`, http.StatusCreated, &forMember)
		if forMember.UserID != w.member.userID || forMember.Key == "" {
			t.Fatalf("admin's key for the member: %+v", forMember)
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
			{name: "member creates a key for another user", who: w.member, method: http.MethodPost, path: "/api/keys", body: `{"name":"x","user_id":"` + w.admin.userID + `"}`, wantStatus: http.StatusForbidden},
			{name: "admin creates a key for a user of another tenant", who: w.admin, method: http.MethodPost, path: "/api/keys", body: `{"name":"x","user_id":"` + w.ownerB.userID + `"}`, wantStatus: http.StatusNotFound, wantField: "user_id"},
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
				if e := decodeError(t, b); e.Error.Field != tc.wantField {
					t.Errorf("field %q, want %q", e.Error.Field, tc.wantField)
				}
			})
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
		if diff := cmp.Diff([]string{"key_revoked", "key_created"}, kinds); diff != "" {
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
