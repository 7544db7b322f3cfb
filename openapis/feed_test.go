package openapis

import (
	"context"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/feedtest"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestFeed: adding or deleting a tenant's API is published on the change feed, and a
// node that built the API's tools drops them when it hears another node changed it, so
// its catalog shows the API as it now is (deleted, then added again with other
// operations).
func TestFeed(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	ctx := context.Background()
	a, b := newRig(t, db, nil), newRig(t, db, nil)
	b.admin = a.admin // one tenant, two nodes
	busA, busB := feedtest.New(), feedtest.New()
	a.svc.SetFeed(busA)
	b.svc.SetFeed(busB)
	add := func(ops []string) {
		t.Helper()
		if _, err := a.svc.Add(ctx, a.admin, AddInput{Name: "items", Description: []byte(describedAPI), BaseURL: "https://192.0.3.10", Operations: ops}); err != nil {
			t.Fatal(err)
		}
	}
	tools := func() []string {
		t.Helper()
		list, err := b.svc.Tools(ctx, b.admin, "items")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range list {
			names = append(names, tl.Name)
		}
		return names
	}
	add([]string{"listItems"})
	if got := tools(); len(got) != 1 || got[0] != "items_list_items" {
		t.Fatalf("node B's tools = %v", got)
	}
	if err := a.svc.Delete(ctx, a.admin, "items"); err != nil {
		t.Fatal(err)
	}
	add([]string{"listItems", "deleteItem"})
	published := busA.Published()
	if len(published) != 3 {
		t.Fatalf("node A published %v, want added, deleted, added", published)
	}
	for _, e := range published {
		if e.Kind != Changed || e.Tenant != a.admin.TenantID || e.ID != "items" {
			t.Errorf("published %+v, want %s of items in the tenant", e, Changed)
		}
		busB.Deliver(e)
	}
	if got := tools(); len(got) != 2 {
		t.Errorf("node B's tools after the feed = %v, want the API as added again", got)
	}
}
