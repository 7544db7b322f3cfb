package connections_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/tenants"
)

// world is two tenants, each with an admin and two members, over one database.
type world struct {
	db    *gorm.DB
	store *connections.Store
	a, b  tenantUsers
}

type tenantUsers struct {
	id                switchboard.TenantID
	admin, ann, bob   switchboard.Principal
	annPrivate, share connections.Connection
}

func newWorld(t *testing.T, db *gorm.DB) *world {
	t.Helper()
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	return newWorldWith(t, db, kr)
}

// newWorldWith is newWorld on the keyring kr.
func newWorldWith(t *testing.T, db *gorm.DB, kr keyring.Keyring) *world {
	t.Helper()
	w := &world{db: db, store: connections.NewStore(db, kr)}
	w.a = newTenantUsers(t, db, w.store, "tenant-a")
	w.b = newTenantUsers(t, db, w.store, "tenant-b")
	return w
}

func newTenantUsers(t *testing.T, db *gorm.DB, store *connections.Store, slug string) tenantUsers {
	t.Helper()
	ctx := context.Background()
	ts := tenants.NewStore(db)
	slug += "-" + switchboard.RandomToken(4) // tests share a database between rigs
	ten, err := ts.CreateTenant(ctx, slug, slug)
	if err != nil {
		t.Fatal(err)
	}
	principal := func(email string, role switchboard.Role) switchboard.Principal {
		u, err := ts.CreateUser(ctx, ten.ID, email, role)
		if err != nil {
			t.Fatal(err)
		}
		return switchboard.Principal{TenantID: ten.ID, TenantSlug: slug, Kind: switchboard.PrincipalUser, UserID: u.ID, Role: role}
	}
	tu := tenantUsers{id: ten.ID, admin: principal("admin@"+slug+".test", switchboard.RoleAdmin), ann: principal("ann@"+slug+".test", switchboard.RoleMember), bob: principal("bob@"+slug+".test", switchboard.RoleMember)}
	tu.annPrivate = create(t, store, tu.ann, false, "ann-"+slug, "ghp_private_"+string(ten.ID))
	tu.share = create(t, store, tu.ann, true, "team-"+slug, "ghp_shared_"+string(ten.ID))
	return tu
}

func create(t *testing.T, store *connections.Store, owner switchboard.Principal, shared bool, label, token string) connections.Connection {
	t.Helper()
	c := connections.Connection{OwnerUserID: owner.UserID, Provider: "github", AuthKind: providers.AuthAPIKey, AccountID: label, AccountLabel: label, Scopes: "repo", Shared: shared}
	if err := store.Create(context.Background(), owner.TenantID, &c, connections.Credentials{AccessToken: token}); err != nil {
		t.Fatal(err)
	}
	return c
}

func ids(cs []connections.Connection) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func TestStoreTenancy(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		ctx := context.Background()
		aConn := w.a.annPrivate
		refusals := []struct {
			name string
			run  func() error
		}{
			{name: "B gets A's connection", run: func() error { _, err := w.store.Get(ctx, w.b.id, aConn.ID); return err }},
			{name: "B opens A's connection", run: func() error { _, _, err := w.store.Open(ctx, w.b.id, aConn.ID); return err }},
			{name: "B deletes A's connection", run: func() error { return w.store.Delete(ctx, w.b.id, aConn.ID) }},
			{name: "B updates A's credentials", run: func() error {
				_, err := w.store.UpdateCredentials(ctx, w.b.id, aConn.ID, 1, connections.Credentials{AccessToken: "x"}, connections.StatusActive)
				return err
			}},
			{name: "missing id", run: func() error { _, err := w.store.Get(ctx, w.a.id, "con_missing"); return err }},
		}
		for _, tt := range refusals {
			t.Run(tt.name, func(t *testing.T) {
				err := tt.run()
				if e := switchboard.AsError(err); err == nil || e.Code != switchboard.CodeNotFound || e.Message != "connection not found" {
					t.Fatalf("err = %v, want the same not_found as a missing connection", err)
				}
			})
		}
		if _, creds, err := w.store.Open(ctx, w.a.id, aConn.ID); err != nil || creds.AccessToken != "ghp_private_"+string(w.a.id) {
			t.Fatalf("A's connection after B's attempts: %q, %v", creds.AccessToken, err)
		}
		t.Run("List is tenant-scoped", func(t *testing.T) {
			got, err := w.store.List(ctx, w.b.id)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{w.b.annPrivate.ID, w.b.share.ID}, ids(got)); diff != "" {
				t.Errorf("B's list (-want +got):\n%s", diff)
			}
		})
		usable := []struct {
			name string
			p    switchboard.Principal
			want []string
		}{
			{name: "owner sees private and shared", p: w.a.ann, want: []string{w.a.annPrivate.ID, w.a.share.ID}},
			{name: "another member sees only shared", p: w.a.bob, want: []string{w.a.share.ID}},
			{name: "admin may use only shared and own", p: w.a.admin, want: []string{w.a.share.ID}},
			{name: "B's member sees only B's", p: w.b.bob, want: []string{w.b.share.ID}},
			{name: "principal of B claiming A's user id", p: switchboard.Principal{TenantID: w.b.id, Kind: switchboard.PrincipalUser, UserID: w.a.ann.UserID}, want: []string{w.b.share.ID}},
		}
		for _, tt := range usable {
			t.Run("Usable: "+tt.name, func(t *testing.T) {
				got, err := w.store.Usable(ctx, tt.p)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, ids(got)); diff != "" {
					t.Errorf("usable (-want +got):\n%s", diff)
				}
			})
		}
		t.Run("Usable keeps connections that need reconnecting, and skips revoked ones", func(t *testing.T) {
			c := create(t, w.store, w.b.ann, false, "stale", "ghp_stale")
			if _, err := w.store.SetStatus(ctx, w.b.id, c.ID, c.Version, connections.StatusNeedsReconnect); err != nil {
				t.Fatal(err)
			}
			revoked := create(t, w.store, w.b.ann, false, "gone", "ghp_gone")
			if _, err := w.store.SetStatus(ctx, w.b.id, revoked.ID, revoked.Version, connections.StatusRevoked); err != nil {
				t.Fatal(err)
			}
			got, err := w.store.Usable(ctx, w.b.ann)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{w.b.annPrivate.ID, w.b.share.ID, c.ID}, ids(got)); diff != "" {
				t.Errorf("usable (-want +got):\n%s", diff)
			}
		})
	})
}

func TestSealedBlobMovedToAnotherRowDoesNotOpen(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		ctx := context.Background()
		src := w.a.annPrivate
		tests := []struct {
			name   string
			tenant switchboard.TenantID
			target string
		}{
			{name: "same tenant, another row", tenant: w.a.id, target: w.a.share.ID},
			{name: "another tenant's row", tenant: w.b.id, target: w.b.share.ID},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := db.Exec("UPDATE connections SET sealed = ?, key_id = ? WHERE id = ?", src.Sealed, src.KeyID, tt.target).Error; err != nil {
					t.Fatal(err)
				}
				_, creds, err := w.store.Open(ctx, tt.tenant, tt.target)
				e := switchboard.AsError(err)
				if err == nil || e.Code != switchboard.CodeInternal || e.Message != "credentials do not open" {
					t.Fatalf("open = %q, %v; want internal \"credentials do not open\"", creds.AccessToken, err)
				}
			})
		}
		if _, creds, err := w.store.Open(ctx, w.a.id, src.ID); err != nil || creds.AccessToken != "ghp_private_"+string(w.a.id) {
			t.Fatalf("the source row: %q, %v", creds.AccessToken, err)
		}
	})
}

func TestUpdateCredentialsOptimisticLock(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		ctx := context.Background()
		c := w.a.annPrivate
		got, err := w.store.UpdateCredentials(ctx, w.a.id, c.ID, c.Version, connections.Credentials{AccessToken: "ghp_new"}, connections.StatusActive)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != c.Version+1 || got.RefreshedAt == nil {
			t.Errorf("after update: version %d refreshed %v, want %d and a time", got.Version, got.RefreshedAt, c.Version+1)
		}
		_, err = w.store.UpdateCredentials(ctx, w.a.id, c.ID, c.Version, connections.Credentials{AccessToken: "ghp_stale_writer"}, connections.StatusActive)
		if switchboard.CodeOf(err) != switchboard.CodeConflict {
			t.Fatalf("stale update: %v, want conflict", err)
		}
		if _, creds, err := w.store.Open(ctx, w.a.id, c.ID); err != nil || creds.AccessToken != "ghp_new" {
			t.Fatalf("credentials after updates: %q, %v", creds.AccessToken, err)
		}
	})
}

// TestTokenNeverStoredInTheClear scans the bytes of the SQLite files for the token. The
// account label, written in the same row, must be found: the scan can see the row.
func TestTokenNeverStoredInTheClear(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	w := newWorld(t, db)
	const token = "ghp_PLAINTEXT_CANARY_7f3a9c"
	const label = "octo-canary-label"
	create(t, w.store, w.a.ann, false, label, token)
	if err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)").Error; err != nil {
		t.Fatal(err)
	}
	path := testdb.SQLitePath(t, db)
	var all []byte
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if !bytes.Contains(all, []byte(label)) {
		t.Fatal("the account label is not in the database files: the scan does not see the data")
	}
	if bytes.Contains(all, []byte(token)) || bytes.Contains(all, []byte("PLAINTEXT_CANARY")) {
		t.Fatal("the token is in the database files in the clear")
	}
}
