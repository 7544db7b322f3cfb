package api_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
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

// TestReadyzWhenTheDatabaseIsDown: the database is shared by every node, so its outage
// keeps a node in the balancer (readyz 200, saying the database is unavailable) where
// each request is answered unavailable with Retry-After; a node's own reason (it is
// shutting down) takes it out (503).
func TestReadyzWhenTheDatabaseIsDown(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	if err := database.Close(db); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Options{Logger: slog.New(slog.DiscardHandler), Database: func(ctx context.Context) error { return database.Ping(ctx, db) }}))
	t.Cleanup(srv.Close)
	leaving := httptest.NewServer(api.New(api.Options{Logger: slog.New(slog.DiscardHandler), Database: func(ctx context.Context) error { return database.Ping(ctx, db) },
		Ready: func(context.Context) error {
			return &switchboard.Error{Code: switchboard.CodeUnavailable, Message: "this node is shutting down"}
		}}))
	t.Cleanup(leaving.Close)
	t.Cleanup(srv.Close)
	tests := []struct {
		name       string
		url        string
		wantStatus int
		wantBody   string
	}{
		{name: "healthz stays up", url: srv.URL + "/healthz", wantStatus: http.StatusOK, wantBody: `{"status":"ok"}`},
		{name: "readyz stays up and says why", url: srv.URL + "/readyz", wantStatus: http.StatusOK, wantBody: `{"database":"unavailable","status":"ok"}`},
		{name: "readyz of a node shutting down", url: leaving.URL + "/readyz", wantStatus: http.StatusServiceUnavailable, wantBody: `{"reason":"this node is shutting down","status":"unavailable"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := http.Get(tc.url)
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

// TestReadyzListsSettingsDrift: a node whose settings differ from its peers' stays
// ready (200) and lists them by name; a failure to compare is only logged; a node
// whose change feed listener is reconnecting says so.
func TestReadyzListsSettingsDrift(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		drift []api.SettingsDrift
		err   error
		deaf  bool // the change feed's listener is reconnecting
		want  string
	}{
		{name: "feed reconnecting", deaf: true, want: `{"change_feed":"reconnecting","status":"ok"}`},
		{name: "same settings", want: `{"status":"ok"}`},
		{name: "a peer differs", drift: []api.SettingsDrift{{Node: "node_b", Version: "v2", Settings: []string{"keyring.key_ids", "oauth.github.client_id"}}},
			want: `{"settings_differ":[{"node":"node_b","version":"v2","settings":["keyring.key_ids","oauth.github.client_id"]}],"status":"ok"}`},
		{name: "peers unreadable", err: errors.New("read the peers' settings: database is locked"), want: `{"status":"ok"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(api.New(api.Options{Logger: slog.New(slog.DiscardHandler),
				SettingsDrift: func(context.Context) ([]api.SettingsDrift, error) { return tc.drift, tc.err },
				FeedListening: func() bool { return !tc.deaf }}))
			t.Cleanup(srv.Close)
			res, err := http.Get(srv.URL + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var body bytes.Buffer
			_, _ = body.ReadFrom(res.Body)
			if res.StatusCode != http.StatusOK {
				t.Errorf("status %d, want 200", res.StatusCode)
			}
			if diff := cmp.Diff(tc.want, body.String()); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}
