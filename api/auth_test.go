package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		revoked := w.newUser(w.a.ID, "gone@a.test", "member")
		keys, err := w.tenants.ListKeys(context.Background(), w.a.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if k.UserID == revoked.userID {
				if _, err := w.tenants.RevokeKey(context.Background(), w.a.ID, k.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
		tests := []struct {
			name       string
			header     string
			path       string
			wantStatus int
			wantCode   string
		}{
			{name: "no key", path: "/api/tenant", wantStatus: http.StatusUnauthorized, wantCode: "unauthorized"},
			{name: "not bearer", header: "Basic dXNlcjpwYXNz", path: "/api/tenant", wantStatus: http.StatusUnauthorized, wantCode: "unauthorized"},
			{name: "unknown key", header: "Bearer sbk_nothere_000000000000000000000000", path: "/api/tenant", wantStatus: http.StatusUnauthorized, wantCode: "unauthorized"},
			{name: "revoked key", header: "Bearer " + revoked.key, path: "/api/tenant", wantStatus: http.StatusUnauthorized, wantCode: "unauthorized"},
			{name: "unknown endpoint", header: "Bearer " + w.admin.key, path: "/api/nothing", wantStatus: http.StatusNotFound, wantCode: "not_found"},
			{name: "catalog needs a key", path: "/api/providers", wantStatus: http.StatusUnauthorized, wantCode: "unauthorized"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				req, err := http.NewRequest(http.MethodGet, w.srv.URL+tc.path, nil)
				if err != nil {
					t.Fatal(err)
				}
				if tc.header != "" {
					req.Header.Set("Authorization", tc.header)
				}
				res, err := w.srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				var e apiError
				if err := jsonDecode(res.Body, &e); err != nil {
					t.Fatal(err)
				}
				if res.StatusCode != tc.wantStatus || e.Error.Code != tc.wantCode {
					t.Errorf("status %d code %q, want %d %q", res.StatusCode, e.Error.Code, tc.wantStatus, tc.wantCode)
				}
				if tc.wantStatus == http.StatusUnauthorized && res.Header.Get("WWW-Authenticate") == "" {
					t.Error("401 without WWW-Authenticate")
				}
			})
		}
	})
}

func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		status, b := w.do(w.admin, http.MethodPut, "/api/tenant", `{}`)
		if status != http.StatusMethodNotAllowed {
			t.Fatalf("status %d, want 405; body %s", status, b)
		}
		if diff := cmp.Diff("method_not_allowed", decodeError(t, b).Error.Code); diff != "" {
			t.Errorf("code (-want +got):\n%s", diff)
		}
	})
}
