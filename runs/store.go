package runs

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/keyring"
)

// Store keeps runs. Every method a caller reaches takes the principal (or its tenant),
// and another principal's run is not found, the same as a missing one. Only the
// recovery scans of the background loop read across tenants.
type Store struct {
	db  *gorm.DB
	kr  keyring.Keyring
	now func() time.Time
	// changed, when set, hears of every change of a run's state once it is stored (the
	// executor publishes it to the fleet: state_changes.go).
	changed func(ctx context.Context, tenant switchboard.TenantID, id string)
}

// NewStore returns a Store on db that seals inputs and outputs with kr.
func NewStore(db *gorm.DB, kr keyring.Keyring) *Store {
	return &Store{db: db, kr: kr, now: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }}
}

// own narrows a query to the principal's own runs.
func own(db *gorm.DB, p switchboard.Principal) *gorm.DB {
	return db.Where("tenant_id = ? AND principal = ?", p.TenantID, p.ID())
}

// create stores a new run with its input sealed to the run.
func (s *Store) create(ctx context.Context, r *Run, input []byte) error {
	sealed, keyID, err := s.seal(ctx, r.TenantID, r.ID, partInput, input)
	if err != nil {
		return switchboard.Internal(err)
	}
	r.InputSealed, r.InputKeyID = sealed, keyID
	now := s.now()
	r.CreatedAt, r.UpdatedAt = now, now
	if err := s.db.WithContext(ctx).Create(r).Error; err != nil {
		if errors.Is(err, gorm.ErrForeignKeyViolated) {
			return switchboard.NotFound("tenant")
		}
		return switchboard.Internal(fmt.Errorf("create run: %w", err))
	}
	return nil
}

// Get returns one of the principal's own runs.
func (s *Store) Get(ctx context.Context, p switchboard.Principal, id string) (Run, error) {
	var r Run
	err := own(s.db.WithContext(ctx), p).Where("id = ?", id).Take(&r).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return Run{}, switchboard.NotFound("run")
	case err != nil:
		return Run{}, switchboard.Internal(fmt.Errorf("read run %s: %w", id, err))
	}
	return r, nil
}

// get reads a run of the tenant, whoever started it (for the executor).
func (s *Store) get(ctx context.Context, tenant switchboard.TenantID, id string) (Run, error) {
	var r Run
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenant, id).Take(&r).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return Run{}, switchboard.NotFound("run")
	case err != nil:
		return Run{}, switchboard.Internal(fmt.Errorf("read run %s: %w", id, err))
	}
	return r, nil
}

// ListOptions narrow and page a list of runs.
type ListOptions struct {
	State State  // only runs in this state, when set
	Tool  string // only runs of this tool, when set
	// Workflow, when set, keeps only the runs of the saved workflow of that name.
	Workflow string
	// Kind, when set, keeps only the runs of that kind.
	Kind   Kind
	Limit  int    // at most this many (1 to 100; 0 means 50)
	Cursor string // the next_cursor of the previous page
}

// MaxListLimit bounds one page of runs.
const MaxListLimit = 100

// List returns the principal's own runs, newest first, and the cursor of the next page
// ("" when this is the last).
func (s *Store) List(ctx context.Context, p switchboard.Principal, o ListOptions) ([]Run, string, error) {
	switch {
	case o.Limit == 0:
		o.Limit = 50
	case o.Limit < 1 || o.Limit > MaxListLimit:
		return nil, "", switchboard.Invalid("limit", fmt.Sprintf("must be between 1 and %d", MaxListLimit))
	}
	if o.State != "" && !validState(o.State) {
		return nil, "", switchboard.Invalid("state", "must be one of working, input_required, completed, failed, canceled")
	}
	q := own(s.db.WithContext(ctx), p)
	if o.State != "" {
		q = q.Where("state = ?", o.State)
	}
	if o.Tool != "" {
		q = q.Where("tool = ?", o.Tool)
	}
	if o.Workflow != "" {
		q = q.Where("kind = ? AND workflow = ?", KindWorkflow, o.Workflow)
	}
	if o.Kind != "" {
		q = q.Where("kind = ?", o.Kind)
	}
	if o.Cursor != "" {
		at, id, err := decodeCursor(o.Cursor)
		if err != nil {
			return nil, "", err
		}
		q = q.Where("created_at < ? OR (created_at = ? AND id < ?)", at, at, id)
	}
	var rs []Run
	if err := q.Order("created_at DESC, id DESC").Limit(o.Limit + 1).Find(&rs).Error; err != nil {
		return nil, "", switchboard.Internal(fmt.Errorf("list runs: %w", err))
	}
	next := ""
	if len(rs) > o.Limit {
		rs = rs[:o.Limit]
		last := rs[len(rs)-1]
		next = encodeCursor(last.CreatedAt, last.ID)
	}
	return rs, next, nil
}

func validState(s State) bool {
	switch s {
	case StateWorking, StateInputRequired, StateCompleted, StateFailed, StateCanceled:
		return true
	}
	return false
}

func encodeCursor(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(at.UTC().Format(time.RFC3339Nano) + "|" + id))
}

func decodeCursor(c string) (time.Time, string, error) {
	bad := switchboard.Invalid("cursor", "is not a cursor this API returned")
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", bad
	}
	ts, id, ok := strings.Cut(string(raw), "|")
	if !ok || id == "" {
		return time.Time{}, "", bad
	}
	at, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return time.Time{}, "", bad
	}
	return at, id, nil
}

// Output opens the output of a completed run.
func (s *Store) Output(ctx context.Context, r *Run) ([]byte, error) {
	if r.State != StateCompleted || len(r.OutputSealed) == 0 {
		return nil, nil
	}
	return s.open(ctx, r, partOutput)
}

// input opens a run's input.
func (s *Store) input(ctx context.Context, r *Run) ([]byte, error) {
	return s.open(ctx, r, partInput)
}

// update applies updates to one run of the tenant where the condition holds, and says
// whether it did.
func (s *Store) update(ctx context.Context, tenant switchboard.TenantID, id string, cond func(*gorm.DB) *gorm.DB, updates map[string]any) (bool, error) {
	updates["updated_at"] = s.now()
	q := s.db.WithContext(ctx).Model(&Run{}).Where("tenant_id = ? AND id = ?", tenant, id)
	res := cond(q).Updates(updates)
	if res.Error != nil {
		return false, switchboard.Internal(fmt.Errorf("update run %s: %w", id, res.Error))
	}
	if _, state := updates["state"]; state && res.RowsAffected == 1 {
		s.stateChanged(ctx, tenant, id)
	}
	return res.RowsAffected == 1, nil
}

// stateChanged tells changed, when set, that a run's new state is stored.
func (s *Store) stateChanged(ctx context.Context, tenant switchboard.TenantID, id string) {
	if s.changed != nil {
		s.changed(ctx, tenant, id)
	}
}

// claim starts an attempt of a working run this process holds the lease of.
func (s *Store) claim(ctx context.Context, tenant switchboard.TenantID, id, owner string, until time.Time) (bool, error) {
	now := s.now()
	return s.update(ctx, tenant, id, func(q *gorm.DB) *gorm.DB {
		return q.Where("state = ? AND lease_owner = ?", StateWorking, owner)
	}, withoutInputRequests(map[string]any{
		"lease_until": until, "attempts": gorm.Expr("attempts + 1"),
		"started_at": gorm.Expr("COALESCE(started_at, ?)", now),
	}))
}

// renew extends the lease of a working run this process holds; false means the run
// is no longer this process's to run (canceled, or taken over).
func (s *Store) renew(ctx context.Context, tenant switchboard.TenantID, id, owner string, until time.Time) (bool, error) {
	return s.update(ctx, tenant, id, func(q *gorm.DB) *gorm.DB {
		return q.Where("state = ? AND lease_owner = ?", StateWorking, owner)
	}, map[string]any{"lease_until": until})
}

// complete records the sealed output of a working run this process holds.
func (s *Store) complete(ctx context.Context, tenant switchboard.TenantID, id, owner string, output []byte) (bool, error) {
	sealed, keyID, err := s.seal(ctx, tenant, id, partOutput, output)
	if err != nil {
		return false, switchboard.Internal(err)
	}
	return s.update(ctx, tenant, id, func(q *gorm.DB) *gorm.DB {
		return q.Where("state = ? AND lease_owner = ?", StateWorking, owner)
	}, withoutInputRequests(map[string]any{"state": StateCompleted, "output_sealed": sealed, "output_key_id": keyID, "finished_at": s.now(), "lease_until": nil}))
}

// fail records why a working run this process holds failed.
func (s *Store) fail(ctx context.Context, tenant switchboard.TenantID, id, owner, code, message string) (bool, error) {
	return s.update(ctx, tenant, id, func(q *gorm.DB) *gorm.DB {
		return q.Where("state = ? AND lease_owner = ?", StateWorking, owner)
	}, withoutInputRequests(map[string]any{"state": StateFailed, "error_code": code, "error_message": clip(message), "finished_at": s.now(), "lease_until": nil}))
}

// cancel ends one of the principal's runs that has not ended yet.
func (s *Store) cancel(ctx context.Context, p switchboard.Principal, id, code, message string) (bool, error) {
	return s.update(ctx, p.TenantID, id, func(q *gorm.DB) *gorm.DB {
		return q.Where("principal = ? AND state IN ?", p.ID(), []State{StateWorking, StateInputRequired})
	}, withoutInputRequests(map[string]any{"state": StateCanceled, "error_code": code, "error_message": clip(message), "finished_at": s.now(), "lease_until": nil}))
}

// accept moves one of the principal's input_required runs, not yet expired, to
// working under this process's lease.
func (s *Store) accept(ctx context.Context, p switchboard.Principal, id, owner string, until time.Time) (bool, error) {
	now := s.now()
	return s.update(ctx, p.TenantID, id, func(q *gorm.DB) *gorm.DB {
		return q.Where("principal = ? AND state = ? AND elicitation_expires_at > ?", p.ID(), StateInputRequired, now)
	}, map[string]any{"state": StateWorking, "elicitation_action": "accept", "lease_owner": owner, "lease_until": until})
}

// refuse cancels one of the principal's input_required runs, not yet expired, because
// the person declined or dismissed the confirmation.
func (s *Store) refuse(ctx context.Context, p switchboard.Principal, id, action, message string) (bool, error) {
	now := s.now()
	return s.update(ctx, p.TenantID, id, func(q *gorm.DB) *gorm.DB {
		return q.Where("principal = ? AND state = ? AND elicitation_expires_at > ?", p.ID(), StateInputRequired, now)
	}, map[string]any{"state": StateCanceled, "elicitation_action": action, "error_code": "declined", "error_message": clip(message), "finished_at": now})
}

// expiredLeases lists working runs, of any tenant, whose lease ran out before now: the
// process running them died or lost the database. It is the recovery scan.
func (s *Store) expiredLeases(ctx context.Context, now time.Time, limit int) ([]Run, error) {
	var rs []Run
	err := s.db.WithContext(ctx).Where("state = ? AND lease_until < ?", StateWorking, now).Order("lease_until").Limit(limit).Find(&rs).Error
	if err != nil {
		return nil, fmt.Errorf("list runs with expired leases: %w", err)
	}
	return rs, nil
}

// takeOver moves the lease of a run found by expiredLeases to this process, if nobody
// renewed or took it meanwhile.
func (s *Store) takeOver(ctx context.Context, r *Run, owner string, until, now time.Time) (bool, error) {
	return s.update(ctx, r.TenantID, r.ID, func(q *gorm.DB) *gorm.DB {
		return q.Where("state = ? AND lease_owner = ? AND lease_until < ?", StateWorking, r.LeaseOwner, now)
	}, map[string]any{"lease_owner": owner, "lease_until": until})
}

// expireElicitations fails input_required runs, of any tenant, whose confirmation was
// not given in time (at most limit of them), and returns them.
func (s *Store) expireElicitations(ctx context.Context, now time.Time, limit int) ([]Run, error) {
	var due []Run
	err := s.db.WithContext(ctx).Where("state = ? AND elicitation_expires_at <= ?", StateInputRequired, now).
		Order("elicitation_expires_at").Limit(limit).Find(&due).Error
	if err != nil {
		return nil, fmt.Errorf("list expired confirmations: %w", err)
	}
	var out []Run
	for _, r := range due {
		res := s.db.WithContext(ctx).Model(&Run{}).
			Where("tenant_id = ? AND id = ? AND state = ? AND elicitation_expires_at <= ?", r.TenantID, r.ID, StateInputRequired, now).
			Updates(map[string]any{
				"state": StateFailed, "error_code": "timeout", "finished_at": now, "updated_at": now,
				"error_message": expiredMessage,
			})
		if res.Error != nil {
			return out, fmt.Errorf("expire the confirmation of run %s: %w", r.ID, res.Error)
		}
		if res.RowsAffected == 1 { // not answered meanwhile
			out = append(out, r)
			s.stateChanged(ctx, r.TenantID, r.ID)
		}
	}
	return out, nil
}

// expire fails one of the principal's input_required runs whose confirmation came too
// late.
func (s *Store) expire(ctx context.Context, p switchboard.Principal, id string) error {
	now := s.now()
	_, err := s.update(ctx, p.TenantID, id, func(q *gorm.DB) *gorm.DB {
		return q.Where("principal = ? AND state = ? AND elicitation_expires_at <= ?", p.ID(), StateInputRequired, now)
	}, map[string]any{"state": StateFailed, "error_code": "timeout", "finished_at": now, "error_message": expiredMessage})
	return err
}

// expiredMessage says why a run whose confirmation never came failed.
const expiredMessage = "nobody confirmed the run in time, so it was not run; start it again to be asked again"

// purge deletes runs, of any tenant, that ended before the time given, and says how
// many: the retention sweep of the background loop.
func (s *Store) purge(ctx context.Context, before time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Where("state IN ? AND finished_at < ?", []State{StateCompleted, StateFailed, StateCanceled}, before).Delete(&Run{})
	if res.Error != nil {
		return 0, fmt.Errorf("purge old runs: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// clip bounds a message to the column's size.
func clip(s string) string {
	const limit = 2000
	if len(s) <= limit {
		return s
	}
	cut := limit - 3
	for cut > 0 && (s[cut]&0xC0) == 0x80 { // never split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "..."
}
