package api_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/internal/database"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

func TestProbes(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		tests := []struct {
			name string
			path string
			want string
		}{
			{name: "healthz", path: "/healthz", want: `{"status":"ok"}`},
			{name: "readyz", path: "/readyz", want: `{"status":"ok"}`},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				b := w.want(actor{}, http.MethodGet, tc.path, "", http.StatusOK, nil)
				if diff := cmp.Diff(tc.want, string(b)); diff != "" {
					t.Errorf("body (-want +got):\n%s", diff)
				}
			})
		}
	})
}

func TestReadyzWhenTheDatabaseIsDown(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	if err := database.Close(db); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Options{Logger: slog.New(slog.DiscardHandler), Ready: func(ctx context.Context) error { return database.Ping(ctx, db) }}))
	t.Cleanup(srv.Close)
	tests := []struct {
		name       string
		path       string
		wantStatus int
		wantBody   string
	}{
		{name: "healthz stays up", path: "/healthz", wantStatus: http.StatusOK, wantBody: `{"status":"ok"}`},
		{name: "readyz says why", path: "/readyz", wantStatus: http.StatusServiceUnavailable, wantBody: `{"reason":"the database does not answer","status":"unavailable"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := http.Get(srv.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b := new(bytes.Buffer)
			_, _ = b.ReadFrom(res.Body)
			if res.StatusCode != tc.wantStatus {
				t.Errorf("status %d, want %d", res.StatusCode, tc.wantStatus)
			}
			if diff := cmp.Diff(tc.wantBody, b.String()); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}
