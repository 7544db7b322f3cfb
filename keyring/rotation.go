package keyring

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
)

// KeyRotation is a run of key rotation, stored so that an interrupted run resumes
// under the key it started with rather than rotating again.
type KeyRotation struct {
	ID         string     `gorm:"primaryKey;size:40"`
	KeyID      string     `gorm:"size:128;not null"` // the key everything is re-sealed under; empty until the key is rotated
	Active     *int       `gorm:"uniqueIndex:idx_key_rotations_active"`
	StartedAt  time.Time  `gorm:"not null"`
	FinishedAt *time.Time ``
	Resealed   int64      `gorm:"not null"`
	Failed     int64      `gorm:"not null"`
}

// TableName is the table key rotations live in.
func (KeyRotation) TableName() string { return "key_rotations" }

// RotateOptions tune Rotate; zero values take the defaults.
type RotateOptions struct {
	// BatchSize is how many records are listed and re-sealed at a time; default 100.
	BatchSize int
	// Audit receives one keys_rotated event per tenant whose records this run re-sealed.
	Audit audit.Recorder
	// Progress, when set, is called after every batch.
	Progress func(RotateProgress)
}

// RotateProgress is what Rotate has done so far in one kind of record.
type RotateProgress struct {
	Kind     string // the kind of record, for example "connections"
	KeyID    string // the key records are re-sealed under
	Resealed int64  // re-sealed in this run
	Changed  int64  // changed meanwhile by someone else, left for the next pass
	Failed   int64  // did not open or seal
	Total    int64  // stale when the kind's first pass began
}

// RotateResult is the outcome of Rotate.
type RotateResult struct {
	RotationID string
	KeyID      string // the key everything was re-sealed under
	Resumed    bool   // an unfinished rotation was continued instead of a new key made
	Resealed   int64  // records re-sealed by this run
	Failed     []string
	Left       int64 // records still under older keys
	Done       bool  // nothing is left under older keys; the rotation is finished
}

// maxRotatePasses bounds the passes over the records: a record that changed while a
// pass re-sealed it is looked at again in the next one.
const maxRotatePasses = 3

// Rotate re-seals every record of every kind under the newest key, in batches. The
// first run makes a new key current with kr.Rotate; a run that finds an unfinished
// rotation (interrupted, or stopped by records that failed) continues it instead, so
// rerunning after an interruption picks up where it stopped. Records keep opening the
// whole time: old keys stay until everything is re-sealed, and servers that run
// meanwhile seal under the new key as soon as they see it.
//
// The run ends finished (the rotation row closed) when no record is left under an
// older key. It returns an error when the context ends (rerun to resume) or when
// records failed to open or seal (their kind and ID are listed, never their content).
func Rotate(ctx context.Context, db *gorm.DB, kr Rotator, records []SealedRecords, opts RotateOptions) (RotateResult, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = 100
	}
	rot, resumed, err := startRotation(ctx, db)
	if err != nil {
		return RotateResult{}, err
	}
	res := RotateResult{RotationID: rot.ID, Resumed: resumed}
	current, err := kr.ActiveKeyID(ctx)
	if err != nil {
		return res, fmt.Errorf("read the current key: %w", err)
	}
	if rot.KeyID == "" {
		if current, err = kr.Rotate(ctx); err != nil {
			return res, fmt.Errorf("rotate the key: %w", err)
		}
	}
	if current != rot.KeyID {
		// A new rotation, or a resumed one whose key was rotated again since: re-seal
		// under the newest key.
		if err := db.WithContext(ctx).Model(&KeyRotation{}).Where("id = ?", rot.ID).Update("key_id", current).Error; err != nil {
			return res, fmt.Errorf("record the key of rotation %s: %w", rot.ID, err)
		}
		rot.KeyID = current
	}
	res.KeyID = rot.KeyID

	perTenant := map[switchboard.TenantID]map[string]int64{}
	defer func() { recordRotation(opts.Audit, rot, perTenant, res.Done) }()
	failed := map[string]bool{}
	for _, recs := range records {
		p := RotateProgress{Kind: recs.Kind(), KeyID: rot.KeyID}
		if p.Total, err = recs.CountStale(ctx, rot.KeyID); err != nil {
			return res, err
		}
		for pass := 0; pass < maxRotatePasses; pass++ {
			changedBefore := p.Changed
			if err := rotatePass(ctx, db, rot, recs, opts, &p, &res, failed, perTenant); err != nil {
				return res, err
			}
			if p.Changed == changedBefore {
				break
			}
		}
	}
	for _, recs := range records {
		n, err := recs.CountStale(ctx, rot.KeyID)
		if err != nil {
			return res, err
		}
		res.Left += n
	}
	res.Failed = slices.Sorted(maps.Keys(failed))
	switch {
	case len(res.Failed) > 0:
		return res, fmt.Errorf("%d records did not re-seal under %s and still need their old key: %s; rotation %s stays open, rerun `switchboard keys rotate` once they are fixed or deleted",
			len(res.Failed), rot.KeyID, strings.Join(res.Failed, ", "), rot.ID)
	case res.Left > 0:
		return res, fmt.Errorf("%d records are still under older keys: something sealed them meanwhile with a key it had not yet replaced; rerun `switchboard keys rotate` to finish rotation %s",
			res.Left, rot.ID)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	if err := db.WithContext(ctx).Model(&KeyRotation{}).Where("id = ?", rot.ID).Updates(map[string]any{"active": nil, "finished_at": now}).Error; err != nil {
		return res, fmt.Errorf("finish rotation %s: %w", rot.ID, err)
	}
	res.Done = true
	return res, nil
}

// rotatePass re-seals one kind of record once through, in batches.
func rotatePass(ctx context.Context, db *gorm.DB, rot KeyRotation, recs SealedRecords, opts RotateOptions, p *RotateProgress, res *RotateResult, failed map[string]bool, perTenant map[switchboard.TenantID]map[string]int64) error {
	after := ""
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("rotation %s interrupted; rerun `switchboard keys rotate` to resume: %w", rot.ID, err)
		}
		refs, err := recs.Stale(ctx, rot.KeyID, after, opts.BatchSize)
		if err != nil {
			return err
		}
		if len(refs) == 0 {
			return nil
		}
		var resealed, failures int64
		for _, ref := range refs {
			after = ref.ID
			name := recs.Kind() + "/" + ref.ID
			if failed[name] {
				continue
			}
			ok, err := recs.Reseal(ctx, ref)
			switch {
			case err != nil && ctx.Err() != nil:
				return fmt.Errorf("rotation %s interrupted; rerun `switchboard keys rotate` to resume: %w", rot.ID, ctx.Err())
			case err != nil:
				failed[name] = true
				failures++
			case ok:
				resealed++
				if perTenant[ref.TenantID] == nil {
					perTenant[ref.TenantID] = map[string]int64{}
				}
				perTenant[ref.TenantID][recs.Kind()]++
			default:
				p.Changed++
			}
		}
		p.Resealed += resealed
		p.Failed += failures
		res.Resealed += resealed
		// The counts survive an interruption; they are what the operator sees, so a
		// failure to store them does not stop the rotation.
		_ = db.WithContext(ctx).Model(&KeyRotation{}).Where("id = ?", rot.ID).
			Updates(map[string]any{"resealed": gorm.Expr("resealed + ?", resealed), "failed": gorm.Expr("failed + ?", failures)}).Error
		if opts.Progress != nil {
			opts.Progress(*p)
		}
	}
}

// startRotation returns the unfinished rotation, or starts one. The unique index on
// active keeps it to one unfinished rotation; two runs started at the same instant may
// both make a new key, and then the later key wins and a rerun finishes the job, so
// operators run one `keys rotate` at a time.
func startRotation(ctx context.Context, db *gorm.DB) (KeyRotation, bool, error) {
	for range 2 {
		var rot KeyRotation
		err := db.WithContext(ctx).Where("active = ?", 1).Take(&rot).Error
		if err == nil {
			return rot, true, nil
		}
		if !errors.Is(err, gorm.ErrRecordNotFound) {
			return KeyRotation{}, false, fmt.Errorf("read the unfinished key rotation: %w", err)
		}
		one := 1
		rot = KeyRotation{ID: switchboard.NewID("rot"), Active: &one, StartedAt: time.Now().UTC().Truncate(time.Microsecond)}
		err = db.WithContext(ctx).Create(&rot).Error
		if err == nil {
			return rot, false, nil
		}
		if !errors.Is(err, gorm.ErrDuplicatedKey) && !isUniqueViolation(err) {
			return KeyRotation{}, false, fmt.Errorf("start a key rotation: %w", err)
		}
	}
	return KeyRotation{}, false, errors.New("start a key rotation: another one keeps starting and finishing; try again")
}

// isUniqueViolation recognises a unique index refusing a row on a connection that
// does not translate errors.
func isUniqueViolation(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "unique") || strings.Contains(msg, "duplicate")
}

// recordRotation writes one audit event per tenant whose records this run re-sealed.
func recordRotation(rec audit.Recorder, rot KeyRotation, perTenant map[switchboard.TenantID]map[string]int64, done bool) {
	if rec == nil {
		return
	}
	state := "continues"
	if done {
		state = "finished"
	}
	for _, tenant := range slices.Sorted(maps.Keys(perTenant)) {
		var parts []string
		for _, kind := range slices.Sorted(maps.Keys(perTenant[tenant])) {
			parts = append(parts, fmt.Sprintf("%d %s", perTenant[tenant][kind], kind))
		}
		rec.Record(audit.Event{
			TenantID:  tenant,
			Kind:      audit.KindKeysRotated,
			Principal: "operator",
			Outcome:   "ok",
			Detail:    fmt.Sprintf("%s re-sealed under key %s (rotation %s %s)", strings.Join(parts, ", "), rot.KeyID, rot.ID, state),
		})
	}
}
