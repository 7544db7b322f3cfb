package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

type connectionBody struct {
	ID           string   `json:"id"`
	Provider     string   `json:"provider"`
	AuthKind     string   `json:"auth_kind"`
	AccountID    string   `json:"account_id"`
	AccountLabel string   `json:"account_label"`
	Scopes       []string `json:"scopes"`
	Shared       bool     `json:"shared"`
	OwnerUserID  string   `json:"owner_user_id"`
	Status       string   `json:"status"`
}

func TestConnectionsLifecycle(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)

		var created connectionBody
		raw := w.want(w.admin, http.MethodPost, "/api/connections", `{"provider":"github","token":"`+goodToken+`","shared":true,"label":"work"}`, http.StatusCreated, &created)
		want := connectionBody{ID: created.ID, Provider: "github", AuthKind: "api_key", AccountID: "583231", AccountLabel: "work",
			Scopes: []string{"repo", "read:org"}, Shared: true, OwnerUserID: w.admin.userID, Status: "active"}
		if diff := cmp.Diff(want, created); diff != "" {
			t.Errorf("created (-want +got):\n%s", diff)
		}
		for _, secret := range []string{"sealed", "key_id", "access_token", "tenant_id"} {
			if strings.Contains(string(raw), secret) {
				t.Errorf("connection answer has %q: %s", secret, raw)
			}
		}
		// The token went to GitHub, as GitHub expects it.
		if diff := cmp.Diff([]string{"GET /user Bearer " + goodToken}, w.github.requests()); diff != "" {
			t.Errorf("requests to GitHub (-want +got):\n%s", diff)
		}

		var got connectionBody
		w.want(w.admin, http.MethodGet, "/api/connections/"+created.ID, "", http.StatusOK, &got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("get (-want +got):\n%s", diff)
		}
		var list struct {
			Connections []connectionBody `json:"connections"`
		}
		w.want(w.member, http.MethodGet, "/api/connections", "", http.StatusOK, &list)
		if diff := cmp.Diff([]connectionBody{want}, list.Connections); diff != "" {
			t.Errorf("member's list of the shared connection (-want +got):\n%s", diff)
		}

		// A member may see a shared connection, not delete another's.
		status, b := w.do(w.member, http.MethodDelete, "/api/connections/"+created.ID, "")
		if status != http.StatusForbidden {
			t.Errorf("member deletes admin's shared connection: status %d, want 403; body %s", status, b)
		}
		if b := w.want(w.admin, http.MethodDelete, "/api/connections/"+created.ID, "", http.StatusNoContent, nil); len(b) != 0 {
			t.Errorf("204 with a body: %s", b)
		}
		w.want(w.admin, http.MethodGet, "/api/connections/"+created.ID, "", http.StatusNotFound, nil)
		w.want(w.admin, http.MethodGet, "/api/connections", "", http.StatusOK, &list)
		if len(list.Connections) != 0 {
			t.Errorf("after delete: %v", list.Connections)
		}
	})
}

func TestConnectionValidation(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		tests := []struct {
			name       string
			body       string
			wantStatus int
			wantField  string
		}{
			{name: "token refused by GitHub", body: `{"provider":"github","token":"` + revokedToken + `"}`, wantStatus: http.StatusBadRequest, wantField: "token"},
			{name: "no token", body: `{"provider":"github"}`, wantStatus: http.StatusBadRequest, wantField: "token"},
			{name: "blank token", body: `{"provider":"github","token":"  "}`, wantStatus: http.StatusBadRequest, wantField: "token"},
			{name: "no provider", body: `{"token":"` + goodToken + `"}`, wantStatus: http.StatusBadRequest, wantField: "provider"},
			{name: "unknown provider", body: `{"provider":"no_such_provider","token":"` + goodToken + `"}`, wantStatus: http.StatusBadRequest, wantField: "provider"},
			{name: "unknown field", body: `{"provider":"github","token":"` + goodToken + `","scope":"repo"}`, wantStatus: http.StatusBadRequest, wantField: "scope"},
			{name: "wrong type", body: `{"provider":"github","token":"` + goodToken + `","shared":"yes"}`, wantStatus: http.StatusBadRequest, wantField: "shared"},
			{name: "empty label", body: `{"provider":"github","token":"` + goodToken + `","label":""}`, wantStatus: http.StatusBadRequest, wantField: "label"},
			{name: "not JSON", body: `provider=github`, wantStatus: http.StatusBadRequest, wantField: "body"},
			{name: "empty body", body: ``, wantStatus: http.StatusBadRequest, wantField: "body"},
			{name: "two objects", body: `{"provider":"github","token":"x"}{}`, wantStatus: http.StatusBadRequest, wantField: "body"},
			{name: "array", body: `[]`, wantStatus: http.StatusBadRequest, wantField: "body"},
			{name: "too large", body: `{"provider":"github","token":"` + strings.Repeat("a", 1<<20) + `"}`, wantStatus: http.StatusBadRequest, wantField: "body"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				status, b := w.do(w.admin, http.MethodPost, "/api/connections", tc.body)
				if status != tc.wantStatus {
					t.Fatalf("status %d, want %d; body %s", status, tc.wantStatus, b)
				}
				e := decodeError(t, b)
				if e.Error.Field != tc.wantField || e.Error.Code != "invalid" || e.Error.Message == "" {
					t.Errorf("error %+v, want invalid on field %q with a message", e.Error, tc.wantField)
				}
			})
		}
		var list struct {
			Connections []connectionBody `json:"connections"`
		}
		w.want(w.admin, http.MethodGet, "/api/connections", "", http.StatusOK, &list)
		if len(list.Connections) != 0 {
			t.Errorf("refused connects stored connections: %v", list.Connections)
		}
	})
}

// TestCrossTenant checks that tenant B learns nothing about tenant A: A's connection ids
// answer exactly like ids that do not exist, and no listing shows A's objects.
func TestCrossTenant(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		aConn := w.connect(w.admin, goodToken, true)
		bConn := w.connect(w.ownerB, otherToken, false)
		w.want(w.admin, http.MethodPost, "/api/keys", `{"name":"ci"}`, http.StatusCreated, nil)
		w.flushAudit()

		for _, method := range []string{http.MethodGet, http.MethodDelete} {
			t.Run(method+" another tenant's connection", func(t *testing.T) {
				s1, other := w.do(w.ownerB, method, "/api/connections/"+aConn, "")
				s2, missing := w.do(w.ownerB, method, "/api/connections/con_doesnotexist0000000000000", "")
				if s1 != http.StatusNotFound || s2 != http.StatusNotFound {
					t.Fatalf("statuses %d and %d, want 404 both", s1, s2)
				}
				if diff := cmp.Diff(string(missing), string(other)); diff != "" {
					t.Errorf("another tenant's connection answers differently from a missing one (-missing +other):\n%s", diff)
				}
			})
		}
		// A's connection survived B's DELETE.
		w.want(w.admin, http.MethodGet, "/api/connections/"+aConn, "", http.StatusOK, nil)

		t.Run("B's listings hold only B", func(t *testing.T) {
			var conns struct {
				Connections []connectionBody `json:"connections"`
			}
			w.want(w.ownerB, http.MethodGet, "/api/connections", "", http.StatusOK, &conns)
			if len(conns.Connections) != 1 || conns.Connections[0].ID != bConn {
				t.Errorf("B's connections: %+v, want only %s", conns.Connections, bConn)
			}
			var keys struct {
				Keys []struct {
					UserID string `json:"user_id"`
				} `json:"keys"`
			}
			w.want(w.ownerB, http.MethodGet, "/api/keys", "", http.StatusOK, &keys)
			for _, k := range keys.Keys {
				if k.UserID != w.ownerB.userID {
					t.Errorf("B sees a key of user %s", k.UserID)
				}
			}
			var users struct {
				Users []struct {
					Email string `json:"email"`
				} `json:"users"`
			}
			w.want(w.ownerB, http.MethodGet, "/api/users", "", http.StatusOK, &users)
			if len(users.Users) != 1 || users.Users[0].Email != "owner@b.test" {
				t.Errorf("B's users: %+v", users.Users)
			}
			var events struct {
				Events []struct {
					Principal    string `json:"principal"`
					ConnectionID string `json:"connection_id"`
				} `json:"events"`
			}
			w.want(w.ownerB, http.MethodGet, "/api/audit", "", http.StatusOK, &events)
			if len(events.Events) == 0 {
				t.Fatal("B has no audit events; it connected GitHub")
			}
			for _, e := range events.Events {
				if e.Principal != "user:"+w.ownerB.userID || e.ConnectionID == aConn {
					t.Errorf("B sees event %+v", e)
				}
			}
		})

		t.Run("B cannot revoke A's key", func(t *testing.T) {
			var keys struct {
				Keys []struct {
					ID string `json:"id"`
				} `json:"keys"`
			}
			w.want(w.admin, http.MethodGet, "/api/keys", "", http.StatusOK, &keys)
			for _, k := range keys.Keys {
				w.want(w.ownerB, http.MethodDelete, "/api/keys/"+k.ID, "", http.StatusNotFound, nil)
			}
			w.want(w.admin, http.MethodGet, "/api/tenant", "", http.StatusOK, nil)
		})

		t.Run("B's tenant is B's", func(t *testing.T) {
			var ten struct {
				Slug   string `json:"slug"`
				MCPURL string `json:"mcp_url"`
			}
			w.want(w.ownerB, http.MethodGet, "/api/tenant", "", http.StatusOK, &ten)
			if diff := cmp.Diff("https://hub.example.com/mcp/tenant-b", ten.MCPURL); diff != "" || ten.Slug != "tenant-b" {
				t.Errorf("tenant %+v (-want +got mcp_url):\n%s", ten, diff)
			}
			w.want(w.ownerB, http.MethodGet, "/api/tenants", "", http.StatusForbidden, nil)
		})
	})
}

// TestConnectBlamesTheTokenOnlyWhenRefused: GitHub's 401 is the token's fault (400 on
// field token); its 404 for GET /user (a wrong SWITCHBOARD_GITHUB_BASE_URL) is not:
// 502, saying what GitHub answered and which base URL to check.
func TestConnectBlamesTheTokenOnlyWhenRefused(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		tests := []struct {
			name        string
			token       string
			wantStatus  int
			wantCode    string
			wantField   string
			wantSays    []string
			wantNotSays string
		}{
			{name: "401", token: revokedToken, wantStatus: http.StatusBadRequest, wantCode: "invalid", wantField: "token", wantSays: []string{"GitHub refused this token: Bad credentials"}, wantNotSays: "reconnect"},
			{name: "404", token: notAPIToken, wantStatus: http.StatusBadGateway, wantCode: "upstream",
				wantSays:    []string{"github answered HTTP 404 Not Found when Switchboard asked whose token this is, so the token was not checked", "check that " + w.github.URL + " is GitHub's API (SWITCHBOARD_GITHUB_BASE_URL; for GitHub Enterprise Server it is https://HOST/api/v3)"},
				wantNotSays: "refused this token"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				status, b := w.do(w.admin, http.MethodPost, "/api/connections", `{"provider":"github","token":"`+tc.token+`"}`)
				e := decodeError(t, b)
				if status != tc.wantStatus || e.Error.Code != tc.wantCode || e.Error.Field != tc.wantField {
					t.Fatalf("%d %s, want %d %s on field %q", status, b, tc.wantStatus, tc.wantCode, tc.wantField)
				}
				for _, s := range tc.wantSays {
					if !strings.Contains(e.Error.Message, s) {
						t.Errorf("message %q does not say %q", e.Error.Message, s)
					}
				}
				if tc.wantNotSays != "" && strings.Contains(e.Error.Message, tc.wantNotSays) || strings.Contains(e.Error.Message, "check owner") {
					t.Errorf("message %q blames the wrong thing", e.Error.Message)
				}
			})
		}
	})
}
