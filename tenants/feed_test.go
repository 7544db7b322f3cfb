package tenants_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/internal/feedtest"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/tenants"
)

// TestFeedInvalidatesKeys: keys this node has cached stop working, or answer with the
// new role, as soon as the feed says another node revoked them, removed or demoted
// their user, or that events may have been missed (a gap); the other node's
// revocations reach this node's OnKeysRevoked hooks.
func TestFeedInvalidatesKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// change makes the change through the other node's store and returns the
		// event its feed delivers here.
		change   func(t *testing.T, other *tenants.Store, w feedWorld) events.Event
		wantRole switchboard.Role // "" when the admin's key must be refused
		wantHook []string
	}{
		{name: "key revoked", change: func(t *testing.T, other *tenants.Store, w feedWorld) events.Event {
			if _, err := other.RevokeKey(context.Background(), w.tenant, w.adminKeyID); err != nil {
				t.Fatal(err)
			}
			return events.Event{Kind: events.KeyRevoked, Tenant: w.tenant, ID: w.adminKeyID}
		}, wantHook: []string{"key"}},
		{name: "user removed", change: func(t *testing.T, other *tenants.Store, w feedWorld) events.Event {
			if _, err := other.RemoveUser(context.Background(), w.tenant, w.adminID, false); err != nil {
				t.Fatal(err)
			}
			return events.Event{Kind: events.UserRemoved, Tenant: w.tenant, ID: w.adminID}
		}},
		{name: "role changed", change: func(t *testing.T, other *tenants.Store, w feedWorld) events.Event {
			if _, _, err := other.SetUserRole(context.Background(), w.tenant, w.adminID, switchboard.RoleMember); err != nil {
				t.Fatal(err)
			}
			return events.Event{Kind: events.UserRoleChanged, Tenant: w.tenant, ID: w.adminID}
		}, wantRole: switchboard.RoleMember},
		{name: "gap", change: func(t *testing.T, other *tenants.Store, w feedWorld) events.Event {
			if _, err := other.RevokeKey(context.Background(), w.tenant, w.adminKeyID); err != nil {
				t.Fatal(err)
			}
			return events.Event{Kind: events.Gap}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testdb.Each(t, func(t *testing.T, db *gorm.DB) {
				t.Parallel()
				ctx := context.Background()
				w := newFeedWorld(t, db)
				if p, err := w.store.Authenticate(ctx, w.adminKey); err != nil || p.Role != switchboard.RoleAdmin {
					t.Fatalf("before the change: %+v, %v", p, err)
				}
				other := tenants.NewStore(testdb.Reopen(t, db)) // another node, without a feed here
				t.Cleanup(other.Close)
				w.bus.Deliver(tt.change(t, other, w))
				p, err := w.store.Authenticate(ctx, w.adminKey)
				switch {
				case tt.wantRole == "" && switchboard.CodeOf(err) != switchboard.CodeUnauthorized:
					t.Errorf("after the change: %+v, %v; want the key refused", p, err)
				case tt.wantRole != "" && (err != nil || p.Role != tt.wantRole):
					t.Errorf("after the change: %+v, %v; want role %s", p, err, tt.wantRole)
				}
				var hooked []string
				for _, ids := range w.hooked() {
					for _, id := range ids {
						if id == w.adminKeyID {
							hooked = append(hooked, "key")
						}
					}
				}
				if diff := cmp.Diff(tt.wantHook, hooked); diff != "" {
					t.Errorf("OnKeysRevoked calls for the admin's key (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestFeedPublishesChanges: revocations, removals and role changes made through this
// node are published, with the tenant and the ids, after they are committed.
func TestFeedPublishesChanges(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		w := newFeedWorld(t, db)
		_, _, second, err := w.store.CreateUserWithKey(ctx, w.tenant, "grace@acme.test", switchboard.RoleMember, "laptop")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.store.RevokeKey(ctx, w.tenant, second.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := w.store.RevokeKey(ctx, w.tenant, second.ID); err != nil { // already revoked: nothing new
			t.Fatal(err)
		}
		if _, _, err := w.store.SetUserRole(ctx, w.tenant, w.adminID, switchboard.RoleMember); err != nil {
			t.Fatal(err)
		}
		if _, err := w.store.RemoveUser(ctx, w.tenant, w.adminID, false); err != nil {
			t.Fatal(err)
		}
		var got []events.Event
		for _, e := range w.bus.Published() {
			switch e.Kind {
			case events.KeyRevoked, events.UserRoleChanged, events.UserRemoved:
				e.Origin = ""
				got = append(got, e)
			}
		}
		want := []events.Event{
			{Kind: events.KeyRevoked, Tenant: w.tenant, ID: second.ID},
			{Kind: events.UserRoleChanged, Tenant: w.tenant, ID: w.adminID},
			{Kind: events.KeyRevoked, Tenant: w.tenant, ID: w.adminKeyID},
			{Kind: events.UserRemoved, Tenant: w.tenant, ID: w.adminID},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("published (-want +got):\n%s", diff)
		}
	})
}

// feedWorld is a tenant with an admin whose key this node's store has on a feed.
type feedWorld struct {
	store      *tenants.Store
	bus        *feedtest.Bus
	tenant     switchboard.TenantID
	adminID    string
	adminKey   string
	adminKeyID string

	mu    *sync.Mutex
	hooks *[][]string
}

func newFeedWorld(t *testing.T, db *gorm.DB) feedWorld {
	t.Helper()
	ctx := context.Background()
	w := feedWorld{store: tenants.NewStore(db), bus: feedtest.New(), mu: &sync.Mutex{}, hooks: &[][]string{}}
	t.Cleanup(w.store.Close)
	w.store.SetFeed(w.bus)
	w.store.OnKeysRevoked(func(_ switchboard.TenantID, ids []string) {
		w.mu.Lock()
		*w.hooks = append(*w.hooks, slices.Clone(ids))
		w.mu.Unlock()
	})
	ten, _, _, _, err := w.store.CreateTenantWithOwner(ctx, "acme", "Acme", "ada@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	admin, key, k, err := w.store.CreateUserWithKey(ctx, ten.ID, "alan@acme.test", switchboard.RoleAdmin, "cli")
	if err != nil {
		t.Fatal(err)
	}
	w.tenant, w.adminID, w.adminKey, w.adminKeyID = ten.ID, admin.ID, key, k.ID
	return w
}

func (w feedWorld) hooked() [][]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(*w.hooks)
}
