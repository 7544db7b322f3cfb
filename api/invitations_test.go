package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

func TestInvitations(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		refused := []struct {
			name       string
			who        actor
			body       string
			wantStatus int
			wantField  string
		}{
			{name: "member", who: w.member, body: `{"email":"x@a.test"}`, wantStatus: http.StatusForbidden},
			{name: "no key", body: `{"email":"x@a.test"}`, wantStatus: http.StatusUnauthorized},
			{name: "missing email", who: w.admin, body: `{}`, wantStatus: http.StatusBadRequest, wantField: "email"},
			{name: "bad email", who: w.admin, body: `{"email":"not mail"}`, wantStatus: http.StatusBadRequest, wantField: "email"},
			{name: "bad role", who: w.admin, body: `{"email":"x@a.test","role":"king"}`, wantStatus: http.StatusBadRequest, wantField: "role"},
			{name: "unknown field", who: w.admin, body: `{"email":"x@a.test","tenant":"tenant-b"}`, wantStatus: http.StatusBadRequest, wantField: "tenant"},
			{name: "existing user", who: w.admin, body: `{"email":"member@a.test"}`, wantStatus: http.StatusConflict, wantField: "email"},
		}
		for _, tc := range refused {
			t.Run(tc.name, func(t *testing.T) {
				got, b := w.do(tc.who, http.MethodPost, "/api/invitations", tc.body)
				if got != tc.wantStatus {
					t.Fatalf("status %d, want %d; body %s", got, tc.wantStatus, b)
				}
				e := decodeError(t, b)
				if e.Error.Field != tc.wantField {
					t.Errorf("field %q, want %q", e.Error.Field, tc.wantField)
				}
			})
		}
		var created struct {
			ID    string `json:"id"`
			Email string `json:"email"`
			Role  string `json:"role"`
			URL   string `json:"url"`
		}
		w.want(w.admin, http.MethodPost, "/api/invitations", `{"email":"Ada@A.test","role":"admin"}`, http.StatusCreated, &created)
		if created.Email != "ada@a.test" || created.Role != "admin" || !strings.HasPrefix(created.URL, "https://hub.example.com/invite/sbi_") {
			t.Fatalf("created invitation %+v", created)
		}
		token := strings.TrimPrefix(created.URL, "https://hub.example.com/invite/")
		var list struct {
			Invitations []struct {
				ID    string `json:"id"`
				Email string `json:"email"`
			} `json:"invitations"`
		}
		b := w.want(w.admin, http.MethodGet, "/api/invitations", "", http.StatusOK, &list)
		if len(list.Invitations) != 1 || list.Invitations[0].ID != created.ID || strings.Contains(string(b), token) {
			t.Fatalf("listing %s: want the one invitation, without its link", b)
		}
		w.want(w.ownerB, http.MethodGet, "/api/invitations", "", http.StatusOK, &list)
		if len(list.Invitations) != 0 {
			t.Fatalf("tenant B sees tenant A's invitations: %+v", list)
		}
		// The link works once and makes the invited user.
		if _, _, u, err := w.tenants.UseLink(context.Background(), token, "a long enough password"); err != nil || u.Email != "ada@a.test" {
			t.Fatalf("UseLink: %+v %v", u, err)
		}
		w.flushAudit()
		var events struct {
			Events []struct {
				Kind   string `json:"kind"`
				Detail string `json:"detail"`
			} `json:"events"`
		}
		w.want(w.admin, http.MethodGet, "/api/audit?kind=user_invited", "", http.StatusOK, &events)
		if len(events.Events) != 1 || strings.Contains(events.Events[0].Detail, token) {
			t.Fatalf("audit of the invitation: %+v", events)
		}
		if diff := cmp.Diff("user_invited", events.Events[0].Kind); diff != "" {
			t.Error(diff)
		}
	})
}
