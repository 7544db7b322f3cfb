package api_test

import (
	"net/http"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/identity"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestConnectedApps checks /api/connected-apps: an admin lists the tenant's grants, a
// member their own; a member cannot revoke another's (404) nor can anyone another
// tenant's; a revocation answers 204, is audited, and the grant leaves the list.
func TestConnectedApps(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		grant := func(id, tenant, by string) {
			g := identity.Grant{ID: id, TenantID: w.a.ID, ClientID: "cli_" + id, ClientName: "Client " + id, Resource: "https://hub.example.com/mcp/" + tenant,
				Scope: "mcp", UserID: by, ConsentedBy: by, CreatedAt: time.Now()}
			if tenant != w.a.Slug {
				g.TenantID = w.b.ID
			}
			if err := db.Create(&g).Error; err != nil {
				t.Fatal(err)
			}
		}
		grant("grt_admin", w.a.Slug, w.admin.userID)
		grant("grt_member", w.a.Slug, w.member.userID)
		grant("grt_b", w.b.Slug, w.ownerB.userID)
		list := func(who actor) []string {
			var got struct {
				Apps []identity.Grant `json:"connected_apps"`
			}
			w.want(who, http.MethodGet, "/api/connected-apps", "", http.StatusOK, &got)
			var ids []string
			for _, g := range got.Apps {
				ids = append(ids, g.ID)
			}
			return ids
		}
		if got := list(w.admin); len(got) != 2 {
			t.Errorf("admin lists %v, want grt_admin and grt_member", got)
		}
		if got := list(w.member); len(got) != 1 || got[0] != "grt_member" {
			t.Errorf("member lists %v, want grt_member", got)
		}
		w.want(w.member, http.MethodDelete, "/api/connected-apps/grt_admin", "", http.StatusNotFound, nil)
		w.want(w.admin, http.MethodDelete, "/api/connected-apps/grt_b", "", http.StatusNotFound, nil)
		w.want(w.admin, http.MethodDelete, "/api/connected-apps/grt_member", "", http.StatusNoContent, nil)
		if got := list(w.member); len(got) != 0 {
			t.Errorf("member lists %v after the revocation, want nothing", got)
		}
		w.flushAudit()
		var evs []audit.Event
		db.Where("kind = ?", audit.KindGrantRevoked).Find(&evs)
		if len(evs) != 1 || evs[0].TenantID != w.a.ID || evs[0].Principal != "user:"+w.admin.userID || evs[0].Detail != "revoked connected app grt_member (Client grt_member)" {
			t.Errorf("audit events %+v", evs)
		}
	})
}
