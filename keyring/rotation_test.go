package keyring_test

import (
	"context"
	"errors"
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
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/vaulttest"
	"github.com/switchboard-hub/switchboard/keyring"
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
	}
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

// note is a row of a table that keeps one sealed secret, as the stores that seal with
// the keyring keep theirs.
type note struct {
	ID       string               `gorm:"primaryKey;size:40"`
	TenantID switchboard.TenantID `gorm:"size:40;not null"`
	Sealed   []byte
	KeyID    string `gorm:"size:128;not null"`
}

func (note) TableName() string { return "sealed_notes" }

// noteAAD binds a note's ciphertext to its row.
func noteAAD(tenant switchboard.TenantID, id string) []byte {
	return []byte("switchboard/note/v1\x00" + string(tenant) + "\x00" + id)
}

// notes returns the notes table as key rotation sees it, re-sealing with kr.
func notes(db *gorm.DB, kr keyring.Keyring) keyring.SealedRecords {
	return &keyring.SealedTable{
		DB: db, Keyring: kr, Name: "notes", Table: "sealed_notes",
		Parts: []keyring.SealedColumns{{Sealed: "sealed", KeyID: "key_id", AAD: func(r keyring.SealedRow) []byte { return noteAAD(r.TenantID, r.ID) }}},
	}
}

// notesDB returns db with the notes table.
func notesDB(t testing.TB, db *gorm.DB) *gorm.DB {
	t.Helper()
	if err := db.AutoMigrate(&note{}); err != nil {
		t.Fatal(err)
	}
	return db
}

// addNotes stores n notes of tenant, sealed by kr, and returns their IDs with their
// secrets.
func addNotes(t *testing.T, db *gorm.DB, kr keyring.Keyring, tenant switchboard.TenantID, n int) map[string]string {
	t.Helper()
	out := map[string]string{}
	for range n {
		secret := "ghp_" + switchboard.RandomToken(10)
		out[addNote(t, db, kr, tenant, secret).ID] = secret
	}
	return out
}

// addNote stores one note of tenant holding secret, sealed by kr.
func addNote(t testing.TB, db *gorm.DB, kr keyring.Keyring, tenant switchboard.TenantID, secret string) note {
	t.Helper()
	n := note{ID: switchboard.NewID("not"), TenantID: tenant}
	var err error
	if n.Sealed, n.KeyID, err = kr.Seal(context.Background(), []byte(secret), noteAAD(tenant, n.ID)); err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// keyIDs returns every note's key ID, by note ID.
func keyIDs(t *testing.T, db *gorm.DB) map[string]string {
	t.Helper()
	var rows []note
	if err := db.Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[r.ID] = r.KeyID
	}
	return out
}

// checkOpens opens every note with kr and compares the secrets.
func checkOpens(t *testing.T, db *gorm.DB, kr keyring.Keyring, want map[string]string) {
	t.Helper()
	var rows []note
	if err := db.Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rows {
		plain, err := kr.Open(context.Background(), r.KeyID, r.Sealed, noteAAD(r.TenantID, r.ID))
		if err != nil {
			t.Fatalf("open %s (key %s): %v", r.ID, r.KeyID, err)
		}
		got[r.ID] = string(plain)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("secrets (-want +got):\n%s", diff)
	}
}

func rotationRow(t *testing.T, db *gorm.DB, id string) keyring.KeyRotation {
	t.Helper()
	var rot keyring.KeyRotation
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
	db = notesDB(t, db)
	tenantA, tenantB := switchboard.TenantID("ten_a"), switchboard.TenantID("ten_b")
	want := mergeTokens(addNotes(t, db, rig.server, tenantA, 5), addNotes(t, db, rig.server, tenantB, 2))
	var oldKey string
	for _, k := range keyIDs(t, db) {
		oldKey = k
	}
	if rig.keys(t) != 1 {
		t.Fatalf("%d keys before the rotation, want 1", rig.keys(t))
	}

	// The first run stops after its first batch of 3.
	interrupted, cancel := context.WithCancel(ctx)
	defer cancel()
	var progress []keyring.RotateProgress
	rec := &events{}
	records := []keyring.SealedRecords{notes(db, rig.operator)}
	first, err := keyring.Rotate(interrupted, db, rig.operator, records, keyring.RotateOptions{
		BatchSize: 3,
		Audit:     rec,
		Progress: func(p keyring.RotateProgress) {
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
	if diff := cmp.Diff([]keyring.RotateProgress{{Kind: "notes", KeyID: newKey, Resealed: 3, Total: 7}}, progress); diff != "" {
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
	second, err := keyring.Rotate(ctx, db, rig.operator, records, keyring.RotateOptions{
		BatchSize: 3,
		Audit:     rec,
		Progress:  func(p keyring.RotateProgress) { progress = append(progress, p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRes := keyring.RotateResult{RotationID: first.RotationID, KeyID: newKey, Resumed: true, Resealed: 4, Done: true}
	if diff := cmp.Diff(wantRes, second); diff != "" {
		t.Errorf("second run (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]keyring.RotateProgress{
		{Kind: "notes", KeyID: newKey, Resealed: 3, Total: 4},
		{Kind: "notes", KeyID: newKey, Resealed: 4, Total: 4},
	}, progress); diff != "" {
		t.Errorf("progress of the rerun (-want +got):\n%s", diff)
	}
	if n := rig.keys(t); n != 2 {
		t.Errorf("%d keys after the rerun, want still 2", n)
	}
	for id, k := range keyIDs(t, db) {
		if k != newKey {
			t.Errorf("note %s is under %s, want %s", id, k, newKey)
		}
	}
	checkOpens(t, db, rig.server, want)
	checkOpens(t, db, rig.restarted(t), want)
	if rot := rotationRow(t, db, first.RotationID); rot.FinishedAt == nil || rot.Active != nil || rot.Resealed != 7 {
		t.Errorf("rotation row at the end: %+v", rot)
	}
	// The server that ran through it now seals under the new key.
	late := addNote(t, db, rig.server, tenantB, "ghp_late")
	if late.KeyID != newKey {
		t.Errorf("the running server sealed a new note under %s, want %s", late.KeyID, newKey)
	}

	// Each run left one event per tenant it re-sealed records of; none holds a token.
	detail := regexp.MustCompile(`^(\d) notes re-sealed under key (\S+) \(rotation (rot_\w+) (finished|continues)\)$`)
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
	// Notes are re-sealed in ID order, which is random, so which tenant's records
	// the first batch held varies: count per tenant, and check which run said what.
	perTenant := map[switchboard.TenantID]int{}
	states := map[string]int{}
	for _, e := range got {
		n, _ := strconv.Atoi(e.Count)
		perTenant[e.Tenant] += n
		states[e.State] += n
	}
	if diff := cmp.Diff(map[switchboard.TenantID]int{tenantA: 5, tenantB: 2}, perTenant); diff != "" {
		t.Errorf("re-sealed per tenant in audit events (-want +got):\n%s\n%+v", diff, got)
	}
	if diff := cmp.Diff(map[string]int{"continues": 3, "finished": 4}, states); diff != "" {
		t.Errorf("re-sealed per run in audit events (-want +got):\n%s\n%+v", diff, got)
	}

	// A later run rotates again.
	third, err := keyring.Rotate(ctx, db, rig.operator, records, keyring.RotateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if third.Resumed || third.RotationID == first.RotationID || third.KeyID == newKey || third.Resealed != 8 || !third.Done {
		t.Errorf("third run: %+v; want a new rotation of all 8 records", third)
	}
	if n := rig.keys(t); n != 3 {
		t.Errorf("%d keys after the third run, want 3", n)
	}
	checkOpens(t, db, rig.restarted(t), mergeTokens(want, map[string]string{late.ID: "ghp_late"}))
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

// TestRotateReportsRecordsThatDoNotOpen: a record that fails to open is named (never
// its content), the rest are re-sealed, the rotation stays open, and once the record
// is gone a rerun finishes it.
func TestRotateReportsRecordsThatDoNotOpen(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		rig := fileRig(t)
		db = notesDB(t, db)
		secrets := addNotes(t, db, rig.server, "ten_a", 3)
		bad := addNote(t, db, rig.server, "ten_b", "ghp_bad")
		secrets[bad.ID] = "ghp_bad"
		broken := append([]byte(nil), bad.Sealed...)
		broken[len(broken)-1] ^= 1
		if err := db.Exec("UPDATE sealed_notes SET sealed = ? WHERE id = ?", broken, bad.ID).Error; err != nil {
			t.Fatal(err)
		}
		records := []keyring.SealedRecords{notes(db, rig.operator)}
		res, err := keyring.Rotate(ctx, db, rig.operator, records, keyring.RotateOptions{BatchSize: 2})
		if err == nil || !strings.Contains(err.Error(), "notes/"+bad.ID) || !strings.Contains(err.Error(), "rerun") {
			t.Fatalf("err = %v, want one naming notes/%s", err, bad.ID)
		}
		for _, tok := range secrets {
			if strings.Contains(err.Error(), tok) {
				t.Errorf("the error holds a secret: %v", err)
			}
		}
		want := keyring.RotateResult{RotationID: res.RotationID, KeyID: res.KeyID, Resealed: 3, Failed: []string{"notes/" + bad.ID}, Left: 1}
		if diff := cmp.Diff(want, res); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
		if rot := rotationRow(t, db, res.RotationID); rot.FinishedAt != nil || rot.Failed != 1 {
			t.Errorf("rotation row: %+v, want open with 1 failure", rot)
		}
		if err := db.Delete(&note{}, "id = ?", bad.ID).Error; err != nil {
			t.Fatal(err)
		}
		again, err := keyring.Rotate(ctx, db, rig.operator, records, keyring.RotateOptions{BatchSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(keyring.RotateResult{RotationID: res.RotationID, KeyID: res.KeyID, Resumed: true, Done: true}, again); diff != "" {
			t.Errorf("rerun (-want +got):\n%s", diff)
		}
	})
}
