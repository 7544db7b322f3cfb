package workflows

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/keyring"
)

// Workflow is a saved definition: one row of workflows, unique by name in its tenant.
type Workflow struct {
	ID          string               `gorm:"primaryKey;size:40"`
	TenantID    switchboard.TenantID `gorm:"size:40;not null"`
	Name        string               `gorm:"size:64;not null"`
	Description string               `gorm:"size:1000;not null"`
	Category    string               `gorm:"size:64;not null"`
	Definition  string               `gorm:"type:text;not null"` // JSON
	Source      string               `gorm:"type:text;not null"` // as written
	// Scheduled says the definition has a schedule trigger (the schedulers scan these).
	Scheduled bool      `gorm:"not null"`
	CreatedBy string    `gorm:"size:64;not null"`
	UpdatedBy string    `gorm:"size:64;not null"`
	Version   int64     `gorm:"not null"`
	CreatedAt time.Time `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null"`
	// Deactivated says the workflow does not run until it is activated again; its
	// tools stay listed, marked, for a while (Service.ToolGrace).
	Deactivated   bool `gorm:"not null;default:false"`
	DeactivatedAt *time.Time
	// DeletedAt is when it was deleted: it is no longer found, and its tools stay
	// listed, marked, for a while; a save of its name starts it anew.
	DeletedAt *time.Time
	// LiveVersion is the version runs in the live environment run: the first save's,
	// then the one current when it was last activated (Service.SetActive).
	LiveVersion int64 `gorm:"not null;default:0"`
}

// KeptVersions is how many versions of a workflow's definition are kept (and have
// their tools): the newest ones, and the live one.
const KeptVersions = 5

// Version is one kept version of a workflow's definition: one row of
// workflow_versions.
type Version struct {
	ID         string               `gorm:"primaryKey;size:40"`
	TenantID   switchboard.TenantID `gorm:"size:40;not null"`
	WorkflowID string               `gorm:"size:40;not null"`
	Version    int64                `gorm:"not null"`
	Definition string               `gorm:"type:text;not null"`
	CreatedBy  string               `gorm:"size:64;not null"`
	CreatedAt  time.Time            `gorm:"not null"`
}

// TableName is the table versions live in.
func (Version) TableName() string { return "workflow_versions" }

// keep records the workflow's current version and forgets the ones no longer kept.
func keep(tx *gorm.DB, w *Workflow, live int64, now time.Time) error {
	v := Version{ID: switchboard.NewID("wfv"), TenantID: w.TenantID, WorkflowID: w.ID, Version: w.Version, Definition: w.Definition, CreatedBy: w.UpdatedBy, CreatedAt: now}
	if err := tx.Create(&v).Error; err != nil {
		return err
	}
	return tx.Where("tenant_id = ? AND workflow_id = ? AND version <= ? AND version <> ?", w.TenantID, w.ID, w.Version-KeptVersions, live).Delete(&Version{}).Error
}

// Version returns a kept version of the tenant's workflow.
func (s *Store) Version(ctx context.Context, tenant switchboard.TenantID, w Workflow, version int64) (Version, error) {
	var v Version
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND workflow_id = ? AND version = ?", tenant, w.ID, version).Take(&v).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return Version{}, switchboard.NotFound(fmt.Sprintf("version %d of workflow %s (its version now is %d; the %d newest and the live one are kept)", version, w.Name, w.Version, KeptVersions))
	case err != nil:
		return Version{}, switchboard.Internal(fmt.Errorf("read version %d of workflow %s: %w", version, w.Name, err))
	}
	return v, nil
}

// keptVersions lists the kept versions of the tenant's workflows, oldest first, by
// workflow id.
func (s *Store) keptVersions(ctx context.Context, tenant switchboard.TenantID) (map[string][]Version, error) {
	var rows []Version
	if err := s.db.WithContext(ctx).Where("tenant_id = ?", tenant).Order("workflow_id, version").Find(&rows).Error; err != nil {
		return nil, switchboard.Internal(fmt.Errorf("list workflow versions: %w", err))
	}
	out := map[string][]Version{}
	for _, r := range rows {
		out[r.WorkflowID] = append(out[r.WorkflowID], r)
	}
	return out, nil
}

// The lifecycle states of a workflow, as its tools show them.
const (
	LifecycleActive      = "active"
	LifecycleDeactivated = "deactivated"
	LifecycleDeleted     = "deleted"
)

// lifecycle is the workflow's state: active, deactivated or deleted.
func (w Workflow) lifecycle() string {
	switch {
	case w.DeletedAt != nil:
		return LifecycleDeleted
	case w.Deactivated:
		return LifecycleDeactivated
	}
	return LifecycleActive
}

// Lifecycle is the workflow's state: LifecycleActive, LifecycleDeactivated or
// LifecycleDeleted.
func (w Workflow) Lifecycle() string { return w.lifecycle() }

// TableName is the table workflows live in.
func (Workflow) TableName() string { return "workflows" }

// StepState is where a step record is.
type StepState string

// The step states; all but running are final.
const (
	StepRunning   StepState = "running"
	StepCompleted StepState = "completed"
	StepFailed    StepState = "failed"
	StepSkipped   StepState = "skipped"
	StepCanceled  StepState = "canceled"
)

// wholeStep is the Item of a step's own record; a foreach step's items are 0, 1, …
const wholeStep = -1

// StepRecord is one row of workflow_steps: a step of a run (Item -1), or one item of
// a foreach step. Input and output are sealed.
type StepRecord struct {
	ID           string               `gorm:"primaryKey;size:40"`
	TenantID     switchboard.TenantID `gorm:"size:40;not null"`
	RunID        string               `gorm:"size:40;not null"`
	Step         string               `gorm:"size:64;not null"`
	Item         int                  `gorm:"not null"`
	Tool         string               `gorm:"size:64;not null"`
	ConnectionID string               `gorm:"size:40;not null"`
	State        StepState            `gorm:"size:16;not null"`
	Attempts     int                  `gorm:"not null"`
	InputSealed  []byte
	InputKeyID   string `gorm:"size:128;not null"`
	OutputSealed []byte
	OutputKeyID  string `gorm:"size:128;not null"`
	ErrorCode    string `gorm:"size:32;not null"`
	ErrorMessage string `gorm:"size:2000;not null"`
	// AuditID is the audit row of the step's last tool call.
	AuditID    string `gorm:"size:40;not null"`
	StartedAt  *time.Time
	FinishedAt *time.Time
	UpdatedAt  time.Time `gorm:"not null"`
}

// TableName is the table step records live in.
func (StepRecord) TableName() string { return "workflow_steps" }

// Store keeps workflows and the steps of their runs. Every method takes the tenant,
// and another tenant's rows are not found.
type Store struct {
	db  *gorm.DB
	kr  keyring.Keyring
	now func() time.Time
}

// NewStore returns a Store on db that seals step inputs and outputs with kr.
func NewStore(db *gorm.DB, kr keyring.Keyring) *Store {
	return &Store{db: db, kr: kr, now: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }}
}

// Save stores a workflow under its name: a new one, or, with overwrite, a new version
// of the one of that name (else a conflict). created says which.
func (s *Store) Save(ctx context.Context, tenant switchboard.TenantID, w *Workflow, overwrite bool) (created bool, err error) {
	now := s.now()
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var old Workflow
		err := tx.Where("tenant_id = ? AND name = ?", tenant, w.Name).Take(&old).Error
		switch {
		case errors.Is(err, gorm.ErrRecordNotFound):
			w.ID, w.TenantID, w.Version, w.CreatedAt, w.UpdatedAt = switchboard.NewID("wf"), tenant, 1, now, now
			w.UpdatedBy, w.LiveVersion = w.CreatedBy, 1
			created = true
			if err := tx.Create(w).Error; err != nil {
				return err
			}
			return keep(tx, w, w.LiveVersion, now)
		case err != nil:
			return err
		case old.DeletedAt != nil:
			// A deleted workflow's name is free: the new one replaces its row,
			// counting on from its version so its tools' versions never repeat.
			created = true
			res := tx.Model(&Workflow{}).Where("tenant_id = ? AND id = ?", tenant, old.ID).Updates(map[string]any{
				"description": w.Description, "category": w.Category, "definition": w.Definition, "source": w.Source, "scheduled": w.Scheduled,
				"created_by": w.CreatedBy, "updated_by": w.CreatedBy, "version": old.Version + 1, "created_at": now, "updated_at": now,
				"deleted_at": nil, "deactivated": false, "deactivated_at": nil, "live_version": old.Version + 1,
			})
			if res.Error != nil {
				return res.Error
			}
			w.ID, w.TenantID, w.Version, w.CreatedAt, w.UpdatedAt, w.UpdatedBy, w.LiveVersion = old.ID, tenant, old.Version+1, now, now, w.CreatedBy, old.Version+1
			// The deleted workflow's versions are not this one's.
			if err := tx.Where("tenant_id = ? AND workflow_id = ?", tenant, old.ID).Delete(&Version{}).Error; err != nil {
				return err
			}
			return keep(tx, w, w.LiveVersion, now)
		case !overwrite:
			return switchboard.Errorf(switchboard.CodeConflict, "a workflow named %s exists already; pass overwrite to replace it", w.Name)
		}
		res := tx.Model(&Workflow{}).Where("tenant_id = ? AND id = ? AND version = ?", tenant, old.ID, old.Version).Updates(map[string]any{
			"description": w.Description, "category": w.Category, "definition": w.Definition, "source": w.Source, "scheduled": w.Scheduled,
			"updated_by": w.CreatedBy, "version": old.Version + 1, "updated_at": now,
		})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return switchboard.Errorf(switchboard.CodeConflict, "workflow %s changed meanwhile; save it again", w.Name)
		}
		w.UpdatedBy = w.CreatedBy
		w.ID, w.TenantID, w.Version, w.CreatedAt, w.UpdatedAt, w.CreatedBy = old.ID, tenant, old.Version+1, old.CreatedAt, now, old.CreatedBy
		w.LiveVersion, w.Deactivated, w.DeactivatedAt = old.LiveVersion, old.Deactivated, old.DeactivatedAt
		return keep(tx, w, w.LiveVersion, now)
	})
	if err != nil {
		if se := (*switchboard.Error)(nil); errors.As(err, &se) {
			return false, err
		}
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return false, switchboard.Errorf(switchboard.CodeConflict, "a workflow named %s was saved meanwhile; save again with overwrite to replace it", w.Name)
		}
		if errors.Is(err, gorm.ErrForeignKeyViolated) {
			return false, switchboard.NotFound("tenant")
		}
		return false, switchboard.Internal(fmt.Errorf("save workflow %s: %w", w.Name, err))
	}
	return created, nil
}

// Get returns the tenant's workflow of that name.
func (s *Store) Get(ctx context.Context, tenant switchboard.TenantID, name string) (Workflow, error) {
	var w Workflow
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND name = ? AND deleted_at IS NULL", tenant, name).Take(&w).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return Workflow{}, switchboard.NotFound("workflow " + name)
	case err != nil:
		return Workflow{}, switchboard.Internal(fmt.Errorf("read workflow %s: %w", name, err))
	}
	return w, nil
}

// List returns the tenant's workflows by name, only those of the category when one
// is given.
func (s *Store) List(ctx context.Context, tenant switchboard.TenantID, category string) ([]Workflow, error) {
	q := s.db.WithContext(ctx).Where("tenant_id = ? AND deleted_at IS NULL", tenant)
	if category != "" {
		q = q.Where("category = ?", category)
	}
	var ws []Workflow
	if err := q.Order("name").Find(&ws).Error; err != nil {
		return nil, switchboard.Internal(fmt.Errorf("list workflows: %w", err))
	}
	return ws, nil
}

// listForTools returns the tenant's workflows whose tools are listed: every one not
// deleted, and those deleted or deactivated within grace.
func (s *Store) listForTools(ctx context.Context, tenant switchboard.TenantID, grace time.Duration) ([]Workflow, error) {
	since := s.now().Add(-grace)
	var ws []Workflow
	err := s.db.WithContext(ctx).Where("tenant_id = ?", tenant).
		Where("(deleted_at IS NULL AND (deactivated = ? OR deactivated_at IS NULL OR deactivated_at > ?)) OR deleted_at > ?", false, since, since).
		Order("name").Find(&ws).Error
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("list workflows' tools: %w", err))
	}
	return ws, nil
}

// SetActive activates (publishing its current version as the live one) or
// deactivates the tenant's workflow of that name; changed says whether it was not so
// already.
func (s *Store) SetActive(ctx context.Context, tenant switchboard.TenantID, name string, active bool) (changed bool, err error) {
	var at *time.Time
	if !active {
		now := s.now()
		at = &now
	}
	updates := map[string]any{"deactivated": !active, "deactivated_at": at}
	q := s.db.WithContext(ctx).Model(&Workflow{}).Where("tenant_id = ? AND name = ? AND deleted_at IS NULL", tenant, name)
	if active {
		// Activating publishes the current version: live runs run it from now on.
		updates["live_version"] = gorm.Expr("version")
		q = q.Where("deactivated = ? OR live_version <> version", true)
	} else {
		q = q.Where("deactivated = ?", false)
	}
	res := q.Updates(updates)
	if res.Error != nil {
		return false, switchboard.Internal(fmt.Errorf("set workflow %s active: %w", name, res.Error))
	}
	if res.RowsAffected == 0 {
		if _, err := s.Get(ctx, tenant, name); err != nil {
			return false, err
		}
		return false, nil
	}
	return true, nil
}

// Settings is a tenant's settings of its workflows' tools: one row of
// workflow_settings.
type Settings struct {
	TenantID switchboard.TenantID `gorm:"primaryKey;size:40"`
	// ToolAliases keeps each workflow's tool workflow_<name> beside its run_flow__,
	// run_flow_async__ and query_flow__ tools.
	ToolAliases bool      `gorm:"not null;default:false"`
	UpdatedAt   time.Time `gorm:"not null"`
}

// TableName is the table the settings live in.
func (Settings) TableName() string { return "workflow_settings" }

// ToolAliases reports whether the tenant keeps the tool workflow_<name> of each
// workflow (false until it chose to).
func (s *Store) ToolAliases(ctx context.Context, tenant switchboard.TenantID) (bool, error) {
	var st Settings
	err := s.db.WithContext(ctx).Where("tenant_id = ?", tenant).Take(&st).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return false, nil
	case err != nil:
		return false, switchboard.Internal(fmt.Errorf("read workflow settings: %w", err))
	}
	return st.ToolAliases, nil
}

// SetToolAliases sets whether the tenant keeps the tool workflow_<name> of each
// workflow.
func (s *Store) SetToolAliases(ctx context.Context, tenant switchboard.TenantID, on bool) error {
	st := Settings{TenantID: tenant, ToolAliases: on, UpdatedAt: s.now()}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "tenant_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"tool_aliases", "updated_at"})}).Create(&st).Error
	if err != nil {
		return switchboard.Internal(fmt.Errorf("save workflow settings: %w", err))
	}
	return nil
}

// Delete removes the tenant's workflow of that name (its runs stay, with their steps):
// it is no longer found, and its tools stay listed, marked deleted, for a while.
func (s *Store) Delete(ctx context.Context, tenant switchboard.TenantID, name string) error {
	res := s.db.WithContext(ctx).Model(&Workflow{}).Where("tenant_id = ? AND name = ? AND deleted_at IS NULL", tenant, name).
		Updates(map[string]any{"deleted_at": s.now(), "scheduled": false})
	if res.Error != nil {
		return switchboard.Internal(fmt.Errorf("delete workflow %s: %w", name, res.Error))
	}
	if res.RowsAffected == 0 {
		return switchboard.NotFound("workflow " + name)
	}
	return nil
}

// Steps returns the step records of one of the tenant's runs, in the order they
// started.
func (s *Store) Steps(ctx context.Context, tenant switchboard.TenantID, runID string) ([]StepRecord, error) {
	var rs []StepRecord
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND run_id = ?", tenant, runID).Order("started_at, step, item").Find(&rs).Error
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("read the steps of run %s: %w", runID, err))
	}
	return rs, nil
}

// startStep records that a step (or item) starts an attempt with its input sealed.
func (s *Store) startStep(ctx context.Context, r *StepRecord, input []byte) error {
	now := s.now()
	r.UpdatedAt = now
	if r.StartedAt == nil {
		r.StartedAt = &now
	}
	r.State = StepRunning
	r.FinishedAt = nil
	r.ErrorCode, r.ErrorMessage = "", ""
	if input != nil {
		sealed, keyID, err := s.seal(ctx, r, partInput, input)
		if err != nil {
			return err
		}
		r.InputSealed, r.InputKeyID = sealed, keyID
	}
	if r.ID == "" {
		r.ID = switchboard.NewID("wfs")
	}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "tenant_id"}, {Name: "run_id"}, {Name: "step"}, {Name: "item"}},
		DoUpdates: clause.AssignmentColumns([]string{"state", "attempts", "input_sealed", "input_key_id", "tool", "connection_id",
			"error_code", "error_message", "finished_at", "updated_at"}),
	}).Create(r).Error
	if err != nil {
		return switchboard.Internal(fmt.Errorf("record step %s of run %s: %w", r.Step, r.RunID, err))
	}
	return nil
}

// finishStep records how a step (or item) ended, its output sealed.
func (s *Store) finishStep(ctx context.Context, r *StepRecord, output []byte) error {
	now := s.now()
	r.UpdatedAt, r.FinishedAt = now, &now
	if r.StartedAt == nil {
		r.StartedAt = &now
	}
	if r.ID == "" {
		r.ID = switchboard.NewID("wfs")
	}
	r.ErrorMessage = clip(r.ErrorMessage)
	if output != nil {
		sealed, keyID, err := s.seal(ctx, r, partOutput, output)
		if err != nil {
			return err
		}
		r.OutputSealed, r.OutputKeyID = sealed, keyID
	}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "tenant_id"}, {Name: "run_id"}, {Name: "step"}, {Name: "item"}},
		DoUpdates: clause.AssignmentColumns([]string{"state", "attempts", "output_sealed", "output_key_id", "tool", "connection_id",
			"error_code", "error_message", "audit_id", "started_at", "finished_at", "updated_at"}),
	}).Create(r).Error
	if err != nil {
		return switchboard.Internal(fmt.Errorf("record the end of step %s of run %s: %w", r.Step, r.RunID, err))
	}
	return nil
}

// waitStep records that an asking step's record, just started, waits for its
// person's answer.
func (s *Store) waitStep(ctx context.Context, r *StepRecord) error {
	now := s.now()
	err := s.db.WithContext(ctx).Model(&StepRecord{}).Where("tenant_id = ? AND id = ?", r.TenantID, r.ID).
		Updates(map[string]any{"state": StepWaiting, "updated_at": now}).Error
	if err != nil {
		return switchboard.Internal(fmt.Errorf("record that step %s of run %s waits: %w", r.Step, r.RunID, err))
	}
	r.State, r.UpdatedAt = StepWaiting, now
	return nil
}

// answerStep records the answer to an asking step's question, if it still waits for
// one (two answers at once: the first counts), and says whether it did.
func (s *Store) answerStep(ctx context.Context, r *StepRecord, state StepState, code, message string, output []byte) (bool, error) {
	now := s.now()
	updates := map[string]any{"state": state, "error_code": code, "error_message": clip(message), "finished_at": now, "updated_at": now}
	if output != nil {
		sealed, keyID, err := s.seal(ctx, r, partOutput, output)
		if err != nil {
			return false, err
		}
		updates["output_sealed"], updates["output_key_id"] = sealed, keyID
	}
	res := s.db.WithContext(ctx).Model(&StepRecord{}).Where("tenant_id = ? AND id = ? AND state = ?", r.TenantID, r.ID, StepWaiting).Updates(updates)
	if res.Error != nil {
		return false, switchboard.Internal(fmt.Errorf("record the answer to step %s of run %s: %w", r.Step, r.RunID, res.Error))
	}
	return res.RowsAffected == 1, nil
}

// Input opens a step record's input (nil when it has none).
func (s *Store) Input(ctx context.Context, r *StepRecord) ([]byte, error) {
	if len(r.InputSealed) == 0 {
		return nil, nil
	}
	return s.open(ctx, r, partInput)
}

// Output opens a step record's output (nil when it has none).
func (s *Store) Output(ctx context.Context, r *StepRecord) ([]byte, error) {
	if len(r.OutputSealed) == 0 {
		return nil, nil
	}
	return s.open(ctx, r, partOutput)
}

const (
	partInput  = "input"
	partOutput = "output"
)

// sealAAD binds a sealed input or output to its tenant, run, step, item and purpose.
func sealAAD(r *StepRecord, part string) []byte {
	return []byte("switchboard/workflow-step/v1\x00" + string(r.TenantID) + "\x00" + r.RunID + "\x00" + r.Step + "\x00" + strconv.Itoa(r.Item) + "\x00" + part)
}

func (s *Store) seal(ctx context.Context, r *StepRecord, part string, plaintext []byte) ([]byte, string, error) {
	sealed, keyID, err := s.kr.Seal(ctx, plaintext, sealAAD(r, part))
	if err != nil {
		return nil, "", switchboard.Internal(fmt.Errorf("seal %s of step %s of run %s: %w", part, r.Step, r.RunID, err))
	}
	return sealed, keyID, nil
}

func (s *Store) open(ctx context.Context, r *StepRecord, part string) ([]byte, error) {
	sealed, keyID := r.InputSealed, r.InputKeyID
	if part == partOutput {
		sealed, keyID = r.OutputSealed, r.OutputKeyID
	}
	out, err := s.kr.Open(ctx, keyID, sealed, sealAAD(r, part))
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("open %s of step %s of run %s: %w", part, r.Step, r.RunID, err))
	}
	return out, nil
}

// clip bounds a message to its column.
func clip(s string) string {
	const limit = 2000
	if len(s) <= limit {
		return s
	}
	cut := limit - 3
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}

// Firing is one row of workflow_firings: a schedule's firing (or a webhook delivery)
// that started, or was claimed to start, a run.
type Firing struct {
	ID         string               `gorm:"primaryKey;size:40"`
	TenantID   switchboard.TenantID `gorm:"size:40;not null"`
	WorkflowID string               `gorm:"size:40;not null"`
	Trigger    string               `gorm:"size:80;not null"`
	FireAt     time.Time            `gorm:"not null"`
	RunID      string               `gorm:"size:40;not null"`
	CreatedAt  time.Time            `gorm:"not null"`
}

// TableName is the table firings live in.
func (Firing) TableName() string { return "workflow_firings" }

// scheduledWorkflows lists the workflows of every tenant that have a schedule: the
// schedulers' scan, the one read across tenants.
func (s *Store) scheduledWorkflows(ctx context.Context) ([]Workflow, error) {
	var ws []Workflow
	if err := s.db.WithContext(ctx).Where("scheduled = ? AND deleted_at IS NULL AND deactivated = ?", true, false).Order("tenant_id, name").Find(&ws).Error; err != nil {
		return nil, fmt.Errorf("list scheduled workflows: %w", err)
	}
	return ws, nil
}

// claim records a firing of a workflow's trigger at a time, once: it says whether this
// call recorded it (and so must start the run) or another node had.
func (s *Store) claim(ctx context.Context, w *Workflow, trigger string, at time.Time) (bool, error) {
	f := Firing{ID: switchboard.NewID("wff"), TenantID: w.TenantID, WorkflowID: w.ID, Trigger: trigger, FireAt: at.UTC(), CreatedAt: s.now()}
	res := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&f)
	if res.Error != nil {
		return false, switchboard.Internal(fmt.Errorf("claim firing %s of workflow %s: %w", trigger, w.Name, res.Error))
	}
	return res.RowsAffected == 1, nil
}
