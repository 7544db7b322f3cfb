package connections_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/vaulttest"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
)

// events is an audit.Recorder that keeps what it is given.
type events struct {
	mu   sync.Mutex
	list []audit.Event
}

func (e *events) Record(ev audit.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, ev)
}

func (e *events) all() []audit.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]audit.Event(nil), e.list...)
}

// rotateRig is one keyring as key rotation uses it.
type rotateRig struct {
	// operator is the keyring of `switchboard keys rotate`.
	operator keyring.Rotator
	// server is the keyring of a server that started before the rotation and runs on.
	server keyring.Keyring
	// restarted returns a keyring made after the rotation, as a restarted server's.
	restarted func(t *testing.T) keyring.Keyring
	// keys counts the keys (or key versions) that exist.
	keys func(t *testing.T) int
	// path is the key file of a file rig.
	path string
}

// fileRig is a rig on a key file in a temporary directory.
func fileRig(t *testing.T) rotateRig {
	t.Helper()
	path := filepath.Join(t.TempDir(), "master.key")
	load := func(t *testing.T) *keyring.LocalKeyring {
		t.Helper()
		kr, err := keyring.LoadOrCreateKeyFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return kr
	}
	return rotateRig{
		operator:  load(t),
		server:    load(t),
		restarted: func(t *testing.T) keyring.Keyring { return load(t) },
		keys:      func(t *testing.T) int { return len(readKeyFile(t, path).Keys) },
		path:      path,
	}
}

type keyFileJSON struct {
	Current string
	Keys    map[string]string
}

func readKeyFile(t *testing.T, path string) keyFileJSON {
	t.Helper()
	var kf keyFileJSON
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &kf); err != nil {
		t.Fatal(err)
	}
	return kf
}

// currentKeyOnly returns an in-memory keyring of the key file's current key alone: a
// server that has not yet seen a rotation.
func currentKeyOnly(t *testing.T, path string) keyring.Keyring {
	t.Helper()
	kf := readKeyFile(t, path)
	key, err := base64.StdEncoding.DecodeString(kf.Keys[kf.Current])
	if err != nil {
		t.Fatal(err)
	}
	kr, err := keyring.NewLocalKeyring(kf.Current, map[string][]byte{kf.Current: key})
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// vaultRig is a rig on a new transit key of srv.
func vaultRig(t *testing.T, srv *vaulttest.Server) rotateRig {
	t.Helper()
	key := srv.NewKey(t)
	return rotateRig{
		operator: newVaultKeyring(t, srv, key, keyring.VaultOptions{}),
		server:   newVaultKeyring(t, srv, key, keyring.VaultOptions{}),
		restarted: func(t *testing.T) keyring.Keyring {
			return newVaultKeyring(t, srv, key, keyring.VaultOptions{})
		},
		keys: func(t *testing.T) int {
			latest, _ := srv.KeyVersions(t, key)
			return latest
		},
	}
}

// addConnections stores n more connections of tenant owned by p, sealed by store's
// keyring, and returns their IDs with their tokens.
func addConnections(t *testing.T, store *connections.Store, p switchboard.Principal, n int) map[string]string {
	t.Helper()
	out := map[string]string{}
	for range n {
		token := "ghp_" + switchboard.RandomToken(10)
		c := connections.Connection{OwnerUserID: p.UserID, Provider: "github", AuthKind: providers.AuthAPIKey, AccountID: token, AccountLabel: token}
		if err := store.Create(context.Background(), p.TenantID, &c, connections.Credentials{AccessToken: token}); err != nil {
			t.Fatal(err)
		}
		out[c.ID] = token
	}
	return out
}

// tokens are the tokens of every connection of the world, by connection ID.
func (w *world) tokens() map[string]string {
	out := map[string]string{}
	for _, tu := range []tenantUsers{w.a, w.b} {
		out[tu.annPrivate.ID] = "ghp_private_" + string(tu.id)
		out[tu.share.ID] = "ghp_shared_" + string(tu.id)
	}
	return out
}

// keyIDs returns every connection's key ID, by connection ID.
func keyIDs(t *testing.T, db *gorm.DB) map[string]string {
	t.Helper()
	var rows []connections.Connection
	if err := db.Select("id", "key_id").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[r.ID] = r.KeyID
	}
	return out
}

// checkOpens opens every connection with kr and compares the tokens.
func checkOpens(t *testing.T, db *gorm.DB, kr keyring.Keyring, want map[string]string) {
	t.Helper()
	store := connections.NewStore(db, kr)
	var rows []connections.Connection
	if err := db.Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rows {
		_, creds, err := store.Open(context.Background(), r.TenantID, r.ID)
		if err != nil {
			t.Fatalf("open %s (key %s): %v", r.ID, r.KeyID, err)
		}
		got[r.ID] = creds.AccessToken
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tokens (-want +got):\n%s", diff)
	}
}

func rotationRow(t *testing.T, db *gorm.DB, id string) connections.KeyRotation {
	t.Helper()
	var rot connections.KeyRotation
	if err := db.Where("id = ?", id).Take(&rot).Error; err != nil {
		t.Fatal(err)
	}
	return rot
}

// TestRotate runs key rotation with each keyring, on each database: interrupted after
// its first batch, records still open under both keys, and a rerun finishes it under
// the same key.
func TestRotate(t *testing.T) {
	t.Parallel()
	srv := vaulttest.Start(t)
	rigs := []struct {
		name string
		rig  func(t *testing.T) rotateRig
	}{
		{name: "file", rig: fileRig},
		{name: "vault", rig: func(t *testing.T) rotateRig { return vaultRig(t, srv) }},
	}
	for _, r := range rigs {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			testdb.Each(t, func(t *testing.T, db *gorm.DB) {
				t.Parallel()
				testRotate(t, db, r.rig(t))
			})
		})
	}
}

func testRotate(t *testing.T, db *gorm.DB, rig rotateRig) {
	ctx := context.Background()
	w := newWorldWith(t, db, rig.server)
	want := w.tokens()
	for id, tok := range addConnections(t, connections.NewStore(db, rig.server), w.a.ann, 3) {
		want[id] = tok
	}
	before := keyIDs(t, db)
	oldKey := before[w.a.share.ID]
	if rig.keys(t) != 1 {
		t.Fatalf("%d keys before the rotation, want 1", rig.keys(t))
	}

	// The first run stops after its first batch of 3.
	interrupted, cancel := context.WithCancel(ctx)
	defer cancel()
	var progress []connections.RotateProgress
	rec := &events{}
	records := []connections.SealedRecords{connections.NewStore(db, rig.operator).SealedRecords()}
	first, err := connections.Rotate(interrupted, db, rig.operator, records, connections.RotateOptions{
		BatchSize: 3,
		Audit:     rec,
		Progress: func(p connections.RotateProgress) {
			progress = append(progress, p)
			cancel()
		},
	})
	if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "rerun `switchboard keys rotate` to resume") {
		t.Fatalf("interrupted run: %v, want an interruption that says to rerun", err)
	}
	newKey := first.KeyID
	if newKey == "" || newKey == oldKey || first.Done || first.Resumed || first.Resealed != 3 {
		t.Fatalf("interrupted run: %+v; want 3 re-sealed under a new key", first)
	}
	if diff := cmp.Diff([]connections.RotateProgress{{Kind: "connections", KeyID: newKey, Resealed: 3, Total: 7}}, progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	if n := rig.keys(t); n != 2 {
		t.Errorf("%d keys after the rotation, want 2", n)
	}
	counts := map[string]int{}
	for _, k := range keyIDs(t, db) {
		counts[k]++
	}
	if diff := cmp.Diff(map[string]int{oldKey: 4, newKey: 3}, counts); diff != "" {
		t.Errorf("records per key mid-way (-want +got):\n%s", diff)
	}
	// Mid-way, every record opens: for the server that runs on, and after a restart.
	checkOpens(t, db, rig.server, want)
	checkOpens(t, db, rig.restarted(t), want)
	if rot := rotationRow(t, db, first.RotationID); rot.FinishedAt != nil || rot.Active == nil || rot.Resealed != 3 || rot.KeyID != newKey {
		t.Errorf("rotation row mid-way: %+v", rot)
	}

	// The rerun resumes: no new key, the rest re-sealed.
	progress = nil
	second, err := connections.Rotate(ctx, db, rig.operator, records, connections.RotateOptions{
		BatchSize: 3,
		Audit:     rec,
		Progress:  func(p connections.RotateProgress) { progress = append(progress, p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRes := connections.RotateResult{RotationID: first.RotationID, KeyID: newKey, Resumed: true, Resealed: 4, Done: true}
	if diff := cmp.Diff(wantRes, second); diff != "" {
		t.Errorf("second run (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]connections.RotateProgress{
		{Kind: "connections", KeyID: newKey, Resealed: 3, Total: 4},
		{Kind: "connections", KeyID: newKey, Resealed: 4, Total: 4},
	}, progress); diff != "" {
		t.Errorf("progress of the rerun (-want +got):\n%s", diff)
	}
	if n := rig.keys(t); n != 2 {
		t.Errorf("%d keys after the rerun, want still 2", n)
	}
	for id, k := range keyIDs(t, db) {
		if k != newKey {
			t.Errorf("connection %s is under %s, want %s", id, k, newKey)
		}
	}
	checkOpens(t, db, rig.server, want)
	checkOpens(t, db, rig.restarted(t), want)
	if rot := rotationRow(t, db, first.RotationID); rot.FinishedAt == nil || rot.Active != nil || rot.Resealed != 7 {
		t.Errorf("rotation row at the end: %+v", rot)
	}
	// The server that ran through it now seals under the new key.
	c := connections.Connection{OwnerUserID: w.b.ann.UserID, Provider: "github", AuthKind: providers.AuthAPIKey, AccountID: "late", AccountLabel: "late"}
	if err := connections.NewStore(db, rig.server).Create(ctx, w.b.id, &c, connections.Credentials{AccessToken: "ghp_late"}); err != nil {
		t.Fatal(err)
	}
	if c.KeyID != newKey {
		t.Errorf("the running server sealed a new connection under %s, want %s", c.KeyID, newKey)
	}

	// Each run left one event per tenant it re-sealed records of; none holds a token.
	detail := regexp.MustCompile(`^(\d) connections re-sealed under key (\S+) \(rotation (rot_\w+) (finished|continues)\)$`)
	type ev struct {
		Tenant switchboard.TenantID
		Count  string
		State  string
	}
	var got []ev
	for _, e := range rec.all() {
		m := detail.FindStringSubmatch(e.Detail)
		if e.Kind != audit.KindKeysRotated || e.Principal != "operator" || e.Outcome != "ok" || m == nil || m[2] != newKey || m[3] != first.RotationID {
			t.Errorf("audit event %+v", e)
			continue
		}
		for _, tok := range want {
			if strings.Contains(e.Detail, tok) {
				t.Errorf("audit event holds a token: %+v", e)
			}
		}
		got = append(got, ev{e.TenantID, m[1], m[4]})
	}
	// Connections are re-sealed in ID order, which is random, so which tenant's records
	// the first batch held varies: count per tenant, and check which run said what.
	perTenant := map[switchboard.TenantID]int{}
	states := map[string]int{}
	for _, e := range got {
		n, _ := strconv.Atoi(e.Count)
		perTenant[e.Tenant] += n
		states[e.State] += n
	}
	if diff := cmp.Diff(map[switchboard.TenantID]int{w.a.id: 5, w.b.id: 2}, perTenant); diff != "" {
		t.Errorf("re-sealed per tenant in audit events (-want +got):\n%s\n%+v", diff, got)
	}
	if diff := cmp.Diff(map[string]int{"continues": 3, "finished": 4}, states); diff != "" {
		t.Errorf("re-sealed per run in audit events (-want +got):\n%s\n%+v", diff, got)
	}

	// A later run rotates again.
	third, err := connections.Rotate(ctx, db, rig.operator, records, connections.RotateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if third.Resumed || third.RotationID == first.RotationID || third.KeyID == newKey || third.Resealed != 8 || !third.Done {
		t.Errorf("third run: %+v; want a new rotation of all 8 records", third)
	}
	if n := rig.keys(t); n != 3 {
		t.Errorf("%d keys after the third run, want 3", n)
	}
	checkOpens(t, db, rig.restarted(t), mergeTokens(want, map[string]string{c.ID: "ghp_late"}))
}

func mergeTokens(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// refreshingRecords refreshes a connection's token, as a server would, just before the
// rotation re-seals it.
type refreshingRecords struct {
	connections.SealedRecords
	server *connections.Store
	target string
	once   sync.Once
}

func (r *refreshingRecords) Reseal(ctx context.Context, ref connections.SealedRef) (bool, error) {
	if ref.ID == r.target {
		var err error
		r.once.Do(func() {
			_, err = r.server.UpdateCredentials(ctx, ref.TenantID, ref.ID, ref.Version, connections.Credentials{AccessToken: "ghp_refreshed"}, connections.StatusActive)
		})
		if err != nil {
			return false, err
		}
	}
	return r.SealedRecords.Reseal(ctx, ref)
}

// TestRotateKeepsAConcurrentRefresh: a token refresh that lands between the listing
// and the re-seal wins, even when the refreshing server still seals under the old key
// (the next pass re-seals it); the refresh's own version check still holds after a
// re-seal.
func TestRotateKeepsAConcurrentRefresh(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		rig := fileRig(t)
		w := newWorldWith(t, db, rig.server)
		server := connections.NewStore(db, currentKeyOnly(t, rig.path))
		recs := &refreshingRecords{SealedRecords: connections.NewStore(db, rig.operator).SealedRecords(), server: server, target: w.a.share.ID}
		res, err := connections.Rotate(ctx, db, rig.operator, []connections.SealedRecords{recs}, connections.RotateOptions{BatchSize: 10})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Done || res.Resealed != 4 {
			t.Errorf("result %+v, want done with 4 re-sealed (the refreshed one in the second pass)", res)
		}
		want := w.tokens()
		want[w.a.share.ID] = "ghp_refreshed"
		checkOpens(t, db, rig.restarted(t), want)
		for id, k := range keyIDs(t, db) {
			if k != res.KeyID {
				t.Errorf("connection %s is under %s, want %s", id, k, res.KeyID)
			}
		}

		// A re-seal keeps the version, so a refresh that read the row before it lands.
		c, err := server.Get(ctx, w.b.id, w.b.share.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := connections.Rotate(ctx, db, rig.operator, []connections.SealedRecords{connections.NewStore(db, rig.operator).SealedRecords()}, connections.RotateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := server.UpdateCredentials(ctx, w.b.id, c.ID, c.Version, connections.Credentials{AccessToken: "ghp_after"}, connections.StatusActive); err != nil {
			t.Fatalf("a refresh of the version read before the re-seal: %v", err)
		}

		// A re-seal of a record that moved on changes nothing.
		stale := connections.SealedRef{TenantID: w.b.id, ID: c.ID, KeyID: c.KeyID, Version: c.Version}
		ok, err := connections.NewStore(db, rig.operator).SealedRecords().Reseal(ctx, stale)
		if err != nil || ok {
			t.Errorf("re-seal of an outdated ref = %v, %v; want false", ok, err)
		}
		if _, creds, err := server.Open(ctx, w.b.id, c.ID); err != nil || creds.AccessToken != "ghp_after" {
			t.Errorf("after the outdated re-seal: %q, %v", creds.AccessToken, err)
		}
	})
}

// TestRotateReportsRecordsThatDoNotOpen: a record that fails to open is named (never
// its content), the rest are re-sealed, the rotation stays open, and once the record
// is gone a rerun finishes it.
func TestRotateReportsRecordsThatDoNotOpen(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		rig := fileRig(t)
		w := newWorldWith(t, db, rig.server)
		bad := w.b.annPrivate
		broken := append([]byte(nil), bad.Sealed...)
		broken[len(broken)-1] ^= 1
		if err := db.Exec("UPDATE connections SET sealed = ? WHERE id = ?", broken, bad.ID).Error; err != nil {
			t.Fatal(err)
		}
		records := []connections.SealedRecords{connections.NewStore(db, rig.operator).SealedRecords()}
		res, err := connections.Rotate(ctx, db, rig.operator, records, connections.RotateOptions{BatchSize: 2})
		if err == nil || !strings.Contains(err.Error(), "connections/"+bad.ID) || !strings.Contains(err.Error(), "rerun") {
			t.Fatalf("err = %v, want one naming connections/%s", err, bad.ID)
		}
		for _, tok := range w.tokens() {
			if strings.Contains(err.Error(), tok) {
				t.Errorf("the error holds a token: %v", err)
			}
		}
		want := connections.RotateResult{RotationID: res.RotationID, KeyID: res.KeyID, Resealed: 3, Failed: []string{"connections/" + bad.ID}, Left: 1}
		if diff := cmp.Diff(want, res); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
		if rot := rotationRow(t, db, res.RotationID); rot.FinishedAt != nil || rot.Failed != 1 {
			t.Errorf("rotation row: %+v, want open with 1 failure", rot)
		}
		if err := connections.NewStore(db, rig.operator).Delete(ctx, w.b.id, bad.ID); err != nil {
			t.Fatal(err)
		}
		again, err := connections.Rotate(ctx, db, rig.operator, records, connections.RotateOptions{BatchSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(connections.RotateResult{RotationID: res.RotationID, KeyID: res.KeyID, Resumed: true, Done: true}, again); diff != "" {
			t.Errorf("rerun (-want +got):\n%s", diff)
		}
	})
}
