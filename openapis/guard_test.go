package openapis

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestGuardAtCallTime: a tenant's API is called through the SSRF guard, whatever its
// base URL was when it was added (a name may resolve elsewhere later): with the guard
// refusing loopback, a call to an API at 127.0.0.1 never reaches it; with 127.0.0.1
// allowed, the same call does, the key in the query where the description puts it.
func TestGuardAtCallTime(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	var hits atomic.Int64
	reached := func() int64 { return hits.Load() }
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Query().Get("key") != "k-1" || r.Header.Get("Authorization") != "" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[1,2]`))
	}))
	t.Cleanup(func() { testwait.CloseServer(t, up) })
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		cidrs   []string
		refused bool
	}{
		{name: "loopback refused", refused: true},
		{name: "loopback allowed", cidrs: []string{"127.0.0.1/32"}},
	} {
		r := newRig(t, db, tt.cidrs)
		// Stored as Add would store it for a host that resolved to a public address then.
		doc, err := compress([]byte(describedAPI))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.svc.store.create(ctx, r.admin.TenantID, &API{Name: "items", BaseURL: up.URL, Document: doc, CreatedBy: "usr_admin"}); err != nil {
			t.Fatal(err)
		}
		before := reached()
		out, err := r.call(t, "items", "items_list_items", "k-1", `{}`)
		switch {
		case tt.refused && (err == nil || reached() != before || !strings.Contains(err.Error(), "127.0.0.1")):
			t.Errorf("%s: %v, %v (the API reached %d times), want a refusal naming 127.0.0.1", tt.name, out, err, reached()-before)
		case !tt.refused && (err != nil || reached() != before+1):
			t.Errorf("%s: %v, %v, want the answer", tt.name, out, err)
		}
		if e := switchboard.AsError(err); tt.refused && (e.Code != switchboard.CodeForbidden || !strings.Contains(e.Message, "private, loopback") || !strings.Contains(e.Message, "SWITCHBOARD_REMOTE_MCP_ALLOW_CIDRS")) {
			t.Errorf("%s: %v (code %s), want forbidden saying the address is private and how an operator allows it", tt.name, err, e.Code)
		}
	}
}

// TestKeyStaysAtTheAPIsOrigin: a tenant's API that redirects a call to another origin
// (another loopback port, allowed by the operator here) gets its key; the other origin
// gets the redirected request without it, in the query or anywhere else.
func TestKeyStaysAtTheAPIsOrigin(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	var leaked, otherHits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		if strings.Contains(r.URL.RawQuery, "k-1") || strings.Contains(strings.Join(r.Header.Values("Authorization"), ""), "k-1") {
			leaked.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[3]`))
	}))
	t.Cleanup(func() { testwait.CloseServer(t, other) })
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("key") != "k-1" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		http.Redirect(w, r, other.URL+"/items?page=2", http.StatusFound)
	}))
	t.Cleanup(func() { testwait.CloseServer(t, up) })
	ctx := context.Background()
	r := newRig(t, db, []string{"127.0.0.1/32"})
	doc, err := compress([]byte(describedAPI))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.svc.store.create(ctx, r.admin.TenantID, &API{Name: "items", BaseURL: up.URL, Document: doc, CreatedBy: "usr_admin"}); err != nil {
		t.Fatal(err)
	}
	if out, err := r.call(t, "items", "items_list_items", "k-1", `{}`); err != nil {
		t.Fatalf("call = %v, %v; want the other origin's answer", out, err)
	}
	if otherHits.Load() != 1 {
		t.Fatalf("the other origin got %d requests, want the redirect followed once", otherHits.Load())
	}
	if leaked.Load() != 0 {
		t.Fatal("the other origin got the API's key")
	}
}
