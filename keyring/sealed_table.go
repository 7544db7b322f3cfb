package keyring

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
)

// SealedColumns names one sealed secret of a table's rows: the ciphertext column, the
// key ID column (empty while the row holds no such secret), and the additional data
// the secret was sealed with, computed from the row.
type SealedColumns struct {
	Sealed string
	KeyID  string
	AAD    func(row SealedRow) []byte
}

// SealedRow is a row as SealedTable reads it: its ID, tenant, and the columns named in
// SealedTable.Columns, as strings.
type SealedRow struct {
	ID       string
	TenantID switchboard.TenantID
	Columns  map[string]string
}

// SealedTable is the SealedRecords of a table whose rows keep secrets sealed by the
// keyring in pairs of columns, each row with an id and a tenant_id; packages that seal
// with the keyring describe their tables with it so that key rotation re-seals them.
type SealedTable struct {
	DB      *gorm.DB
	Keyring Keyring
	// Name names the records in progress lines, for example "oauth_apps".
	Name  string
	Table string
	Parts []SealedColumns
	// Columns are read for AAD and must be unchanged for a re-seal to apply (a run's
	// state, an OAuth app's provider).
	Columns []string
}

var _ SealedRecords = (*SealedTable)(nil)

// Kind is the table's name in progress lines.
func (t *SealedTable) Kind() string { return t.Name }

// staleWhere is the condition "some part is sealed under a key other than keyID".
func (t *SealedTable) staleWhere(keyID string) (string, []any) {
	var conds []string
	var args []any
	for _, p := range t.Parts {
		conds = append(conds, "("+p.KeyID+" <> '' AND "+p.KeyID+" <> ?)")
		args = append(args, keyID)
	}
	return "(" + strings.Join(conds, " OR ") + ")", args
}

// Stale lists rows with a part sealed under a key other than keyID, in ID order.
func (t *SealedTable) Stale(ctx context.Context, keyID, after string, limit int) ([]SealedRef, error) {
	where, args := t.staleWhere(keyID)
	var rows []struct {
		ID       string
		TenantID switchboard.TenantID
	}
	err := t.DB.WithContext(ctx).Table(t.Table).Select("id", "tenant_id").
		Where(where, args...).Where("id > ?", after).Order("id").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list %s to re-seal: %w", t.Name, err)
	}
	refs := make([]SealedRef, len(rows))
	for i, r := range rows {
		refs[i] = SealedRef{TenantID: r.TenantID, ID: r.ID}
	}
	return refs, nil
}

// CountStale counts rows with a part sealed under a key other than keyID.
func (t *SealedTable) CountStale(ctx context.Context, keyID string) (int64, error) {
	where, args := t.staleWhere(keyID)
	var n int64
	if err := t.DB.WithContext(ctx).Table(t.Table).Where(where, args...).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count %s to re-seal: %w", t.Name, err)
	}
	return n, nil
}

// Reseal opens every part of the row and seals it again under the current key. The
// update holds only while the row keeps every ciphertext, key ID and column it was
// read with, so a writer that changed it meanwhile wins.
func (t *SealedTable) Reseal(ctx context.Context, ref SealedRef) (bool, error) {
	cols := []string{"id", "tenant_id"}
	cols = append(cols, t.Columns...)
	for _, p := range t.Parts {
		cols = append(cols, p.Sealed, p.KeyID)
	}
	var found []map[string]any
	err := t.DB.WithContext(ctx).Table(t.Table).Select(cols).Where("tenant_id = ? AND id = ?", ref.TenantID, ref.ID).Limit(1).Find(&found).Error
	if err != nil {
		return false, fmt.Errorf("read %s %s: %w", t.Name, ref.ID, err)
	}
	if len(found) == 0 {
		return false, nil
	}
	raw := found[0]
	row := SealedRow{ID: ref.ID, TenantID: ref.TenantID, Columns: map[string]string{}}
	for _, c := range t.Columns {
		row.Columns[c] = asString(raw[c])
	}
	q := t.DB.WithContext(ctx).Table(t.Table).Where("tenant_id = ? AND id = ?", ref.TenantID, ref.ID)
	for _, c := range t.Columns {
		q = q.Where(c+" = ?", raw[c])
	}
	updates := map[string]any{}
	for _, p := range t.Parts {
		keyID := asString(raw[p.KeyID])
		sealed := asBytes(raw[p.Sealed])
		q = q.Where(p.KeyID+" = ?", keyID)
		if keyID == "" {
			continue
		}
		q = q.Where(p.Sealed+" = ?", sealed)
		aad := p.AAD(row)
		plaintext, err := t.Keyring.Open(ctx, keyID, sealed, aad)
		if err != nil {
			return false, fmt.Errorf("open %s of %s %s: %w", p.Sealed, t.Name, ref.ID, err)
		}
		resealed, newKeyID, err := t.Keyring.Seal(ctx, plaintext, aad)
		clear(plaintext)
		if err != nil {
			return false, fmt.Errorf("re-seal %s of %s %s: %w", p.Sealed, t.Name, ref.ID, err)
		}
		updates[p.Sealed], updates[p.KeyID] = resealed, newKeyID
	}
	if len(updates) == 0 {
		return false, nil
	}
	res := q.Updates(updates)
	if res.Error != nil {
		return false, fmt.Errorf("re-seal %s %s: %w", t.Name, ref.ID, res.Error)
	}
	return res.RowsAffected == 1, nil
}

func asString(v any) string {
	switch s := v.(type) {
	case nil:
		return ""
	case string:
		return s
	case []byte:
		return string(s)
	}
	return fmt.Sprint(v)
}

func asBytes(v any) []byte {
	switch b := v.(type) {
	case []byte:
		return b
	case string:
		return []byte(b)
	}
	return nil
}
