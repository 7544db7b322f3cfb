package api_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

func TestTenants(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)

		var ten struct {
			ID     string `json:"id"`
			Slug   string `json:"slug"`
			Name   string `json:"name"`
			MCPURL string `json:"mcp_url"`
		}
		w.want(w.member, http.MethodGet, "/api/tenant", "", http.StatusOK, &ten)
		if diff := cmp.Diff("default|Default|https://hub.example.com/mcp/default|"+string(w.a.ID), ten.Slug+"|"+ten.Name+"|"+ten.MCPURL+"|"+ten.ID); diff != "" {
			t.Errorf("GET /api/tenant (-want +got):\n%s", diff)
		}

		var created struct {
			Tenant struct {
				ID     string `json:"id"`
				Slug   string `json:"slug"`
				MCPURL string `json:"mcp_url"`
			} `json:"tenant"`
			Owner struct {
				Email string `json:"email"`
				Role  string `json:"role"`
			} `json:"owner"`
			APIKey struct {
				ID  string `json:"id"`
				Key string `json:"key"`
			} `json:"api_key"`
		}
		w.want(w.admin, http.MethodPost, "/api/tenants", `{"slug":"acme","name":"Acme","owner_email":"ada@acme.test"}`, http.StatusCreated, &created)
		if created.Tenant.Slug != "acme" || created.Tenant.MCPURL != "https://hub.example.com/mcp/acme" || created.Owner.Email != "ada@acme.test" || created.Owner.Role != "owner" || created.APIKey.Key == "" {
			t.Fatalf("created %+v", created)
		}
		// The owner key works, for the new tenant only.
		owner := actor{key: created.APIKey.Key}
		var mine struct {
			Slug string `json:"slug"`
		}
		w.want(owner, http.MethodGet, "/api/tenant", "", http.StatusOK, &mine)
		if mine.Slug != "acme" {
			t.Errorf("new owner key's tenant is %q", mine.Slug)
		}
		// The key is shown once: listings show its prefix only.
		keys := w.want(owner, http.MethodGet, "/api/keys", "", http.StatusOK, nil)
		if containsBytes(keys, created.APIKey.Key) {
			t.Errorf("GET /api/keys shows the key: %s", keys)
		}

		var list struct {
			Tenants []struct {
				Slug string `json:"slug"`
			} `json:"tenants"`
		}
		w.want(w.admin, http.MethodGet, "/api/tenants", "", http.StatusOK, &list)
		var slugs []string
		for _, t := range list.Tenants {
			slugs = append(slugs, t.Slug)
		}
		if diff := cmp.Diff([]string{"default", "tenant-b", "acme"}, slugs); diff != "" {
			t.Errorf("tenants (-want +got):\n%s", diff)
		}

		w.flushAudit()
		var events struct {
			Events []struct {
				Kind   string `json:"kind"`
				Detail string `json:"detail"`
			} `json:"events"`
		}
		w.want(w.admin, http.MethodGet, "/api/audit?kind=tenant_created", "", http.StatusOK, &events)
		if len(events.Events) != 1 || events.Events[0].Detail != "created tenant acme ("+created.Tenant.ID+")" {
			t.Errorf("operator's tenant_created events: %+v", events.Events)
		}
		w.want(owner, http.MethodGet, "/api/audit?kind=tenant_created", "", http.StatusOK, &events)
		if len(events.Events) != 1 {
			t.Errorf("new tenant's tenant_created events: %+v", events.Events)
		}
	})
}

func TestTenantRefusals(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		tests := []struct {
			name       string
			who        func() actor
			method     string
			body       string
			wantStatus int
			wantCode   string
			wantField  string
		}{
			{name: "member creates a tenant", who: func() actor { return w.member }, method: http.MethodPost, body: `{"slug":"x-co","name":"X","owner_email":"a@x.test"}`, wantStatus: http.StatusForbidden, wantCode: "forbidden"},
			{name: "tenant owner without operator key creates a tenant", who: func() actor { return w.ownerB }, method: http.MethodPost, body: `{"slug":"x-co","name":"X","owner_email":"a@x.test"}`, wantStatus: http.StatusForbidden, wantCode: "forbidden"},
			{name: "member lists tenants", who: func() actor { return w.member }, method: http.MethodGet, wantStatus: http.StatusForbidden, wantCode: "forbidden"},
			{name: "taken slug", who: func() actor { return w.admin }, method: http.MethodPost, body: `{"slug":"tenant-b","name":"X","owner_email":"a@x.test"}`, wantStatus: http.StatusConflict, wantCode: "conflict", wantField: "slug"},
			{name: "bad slug", who: func() actor { return w.admin }, method: http.MethodPost, body: `{"slug":"Bad Slug","name":"X","owner_email":"a@x.test"}`, wantStatus: http.StatusBadRequest, wantCode: "invalid", wantField: "slug"},
			{name: "no name", who: func() actor { return w.admin }, method: http.MethodPost, body: `{"slug":"x-co","owner_email":"a@x.test"}`, wantStatus: http.StatusBadRequest, wantCode: "invalid", wantField: "name"},
			{name: "no owner email", who: func() actor { return w.admin }, method: http.MethodPost, body: `{"slug":"x-co","name":"X"}`, wantStatus: http.StatusBadRequest, wantCode: "invalid", wantField: "owner_email"},
			{name: "bad owner email", who: func() actor { return w.admin }, method: http.MethodPost, body: `{"slug":"x-co","name":"X","owner_email":"Ada <a@x.test>"}`, wantStatus: http.StatusBadRequest, wantCode: "invalid", wantField: "owner_email"},
			{name: "unknown field", who: func() actor { return w.admin }, method: http.MethodPost, body: `{"slug":"x-co","name":"X","owner_email":"a@x.test","plan":"gold"}`, wantStatus: http.StatusBadRequest, wantCode: "invalid", wantField: "plan"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				status, b := w.do(tc.who(), tc.method, "/api/tenants", tc.body)
				if status != tc.wantStatus {
					t.Fatalf("status %d, want %d; body %s", status, tc.wantStatus, b)
				}
				e := decodeError(t, b)
				if e.Error.Code != tc.wantCode || e.Error.Field != tc.wantField {
					t.Errorf("error %+v, want code %q field %q", e.Error, tc.wantCode, tc.wantField)
				}
			})
		}
		// None of the refusals left a tenant behind.
		var list struct {
			Tenants []struct {
				Slug string `json:"slug"`
			} `json:"tenants"`
		}
		w.want(w.admin, http.MethodGet, "/api/tenants", "", http.StatusOK, &list)
		if len(list.Tenants) != 2 {
			t.Errorf("tenants after refusals: %+v", list.Tenants)
		}
	})
}

func containsBytes(b []byte, s string) bool { return strings.Contains(string(b), s) }

// TestCreateTenantLeavesNothingOnFailure makes the owner's key fail to insert, as a lost
// connection would: the tenant must not be left behind, ownerless, with its slug taken.
func TestCreateTenantLeavesNothingOnFailure(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		var failKeys atomic.Bool
		err := db.Callback().Create().Before("gorm:create").Register("test:fail_key_inserts", func(tx *gorm.DB) {
			if failKeys.Load() && tx.Statement.Table == "api_keys" {
				_ = tx.AddError(errors.New("forced failure inserting an API key"))
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		body := `{"slug":"acme","name":"Acme","owner_email":"ada@acme.test"}`
		failKeys.Store(true)
		status, b := w.do(w.admin, http.MethodPost, "/api/tenants", body)
		failKeys.Store(false)
		if status != http.StatusInternalServerError || decodeError(t, b).Error.Code != "internal" {
			t.Fatalf("status %d body %s, want 500 internal", status, b)
		}
		if _, err := w.tenants.TenantBySlug(context.Background(), "acme"); switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Errorf("tenant acme after the failure: err = %v, want not found", err)
		}
		var users int64
		if err := db.Table("users").Where("email = ?", "ada@acme.test").Count(&users).Error; err != nil {
			t.Fatal(err)
		}
		if users != 0 {
			t.Errorf("%d owner users left behind", users)
		}
		// The slug is still free.
		var created struct {
			Tenant struct {
				Slug string `json:"slug"`
			} `json:"tenant"`
		}
		w.want(w.admin, http.MethodPost, "/api/tenants", body, http.StatusCreated, &created)
		if created.Tenant.Slug != "acme" {
			t.Errorf("retry created %+v", created)
		}
	})
}
