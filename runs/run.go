// Package runs keeps asynchronous tool runs (the claim-check pattern): a run is started
// with a tool and its arguments, answers with a run id at once, executes through the
// router (the same ownership, validation and audit path as a direct call) under a
// per-tenant concurrency bound, and keeps its state, sealed input and sealed output in
// the database, so it survives a restart. A run may first wait for a person's
// confirmation (input_required) before it executes, and its Runner may pause it for a
// person's input ([Pause]) until [Executor.Resume].
//
// Start from [Executor] (built by [NewExecutor] from [Options]), which runs them, and
// [Store], which keeps them; a [Run] answers as a [View] in a [State].
package runs

import (
	"encoding/json"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// State is where a run is in its life.
type State string

// The states. Completed, failed and canceled are final.
const (
	StateWorking       State = "working"
	StateInputRequired State = "input_required"
	StateCompleted     State = "completed"
	StateFailed        State = "failed"
	StateCanceled      State = "canceled"
)

// Final reports whether the state never changes again.
func (s State) Final() bool {
	return s == StateCompleted || s == StateFailed || s == StateCanceled
}

// Origin says how a run was started.
type Origin string

// The origins.
const (
	// OriginAsync is a run started with switchboard_run_async or the REST API.
	OriginAsync Origin = "async"
	// OriginTask is an MCP task: a task-augmented tools/call.
	OriginTask Origin = "task"
	// OriginConfirm is a tools/call that needed a confirmation the client could not ask for.
	OriginConfirm Origin = "confirm"
)

// Kind is what a run executes.
type Kind string

// KindWorkflow is a saved workflow's run.
const KindWorkflow Kind = "workflow"

// Run is one row of the runs table. Input and output are sealed with the keyring (they
// may hold personal data); the principal's fields are kept so the run executes as the
// one who started it, also after a restart.
type Run struct {
	ID            string                    `gorm:"primaryKey;size:40"`
	TenantID      switchboard.TenantID      `gorm:"size:40;not null"`
	Principal     string                    `gorm:"size:64;not null"` // Principal.ID(): "user:…" or "agent:…"
	PrincipalKind switchboard.PrincipalKind `gorm:"size:16;not null"`
	UserID        string                    `gorm:"size:40;not null"`
	AgentID       string                    `gorm:"size:40;not null"`
	KeyID         string                    `gorm:"size:40;not null"`
	Role          switchboard.Role          `gorm:"size:16;not null"`
	Tool          string                    `gorm:"size:64;not null"`
	ConnectionID  string                    `gorm:"size:40;not null"`
	Origin        Origin                    `gorm:"size:16;not null"`
	State         State                     `gorm:"size:16;not null"`
	// Kind says what the run executes: KindWorkflow for a saved workflow's run (its
	// name and version in Workflow and WorkflowVersion), empty for a tool call.
	Kind            Kind   `gorm:"size:16;not null;default:''"`
	Workflow        string `gorm:"size:64;not null;default:''"`
	WorkflowVersion int64  `gorm:"not null;default:0"`
	// Context is the caller's context of the run as it gave it (a flow tool's
	// _context: thread, environment, channel, agent), as JSON; empty when none.
	Context string `gorm:"size:2000;not null;default:''"`
	// Resumable is set for operations that may run twice (read-only or idempotent):
	// such a run is run again when the process running it died.
	Resumable    bool   `gorm:"not null"`
	InputSealed  []byte `gorm:"not null"`
	InputKeyID   string `gorm:"size:128;not null"`
	OutputSealed []byte
	OutputKeyID  string `gorm:"size:128;not null"`
	ErrorCode    string `gorm:"size:32;not null"`
	ErrorMessage string `gorm:"size:2000;not null"`

	ElicitationMessage   string `gorm:"size:2000;not null"`
	ElicitationExpiresAt *time.Time
	ElicitationAction    string `gorm:"size:16;not null"`

	// InputRequestsSealed are the requests the run's call waits for its client to
	// answer while it executes (an MCP task's input requests, as JSON), sealed like the
	// input: the process executing it records them so that every process shows them.
	// Empty when none; cleared at every attempt's start and at the run's end.
	InputRequestsSealed []byte
	InputRequestsKeyID  string `gorm:"size:128;not null;default:''"`

	LeaseOwner string `gorm:"size:64;not null"`
	LeaseUntil *time.Time
	Attempts   int `gorm:"not null"`

	CreatedAt  time.Time `gorm:"not null"`
	UpdatedAt  time.Time `gorm:"not null"`
	StartedAt  *time.Time
	FinishedAt *time.Time
}

// TableName is the table runs live in.
func (Run) TableName() string { return "runs" }

// principal rebuilds the principal the run executes as.
func (r *Run) principal() switchboard.Principal {
	return switchboard.Principal{
		TenantID: r.TenantID, Kind: r.PrincipalKind,
		UserID: r.UserID, AgentID: r.AgentID, Role: r.Role, KeyID: r.KeyID,
	}
}

// View is a run as callers see it: its state, timestamps, and the output once
// completed (or the error once failed). It never holds the input.
type View struct {
	ID           string `json:"run_id"`
	Tool         string `json:"tool"`
	ConnectionID string `json:"connection_id"`
	State        State  `json:"state"`
	// Kind is workflow for a saved workflow's run, whose name and version follow.
	Kind            Kind             `json:"kind,omitempty"`
	Workflow        string           `json:"workflow,omitempty"`
	WorkflowVersion int64            `json:"workflow_version,omitempty"`
	Context         json.RawMessage  `json:"context,omitempty"`
	Output          json.RawMessage  `json:"output,omitempty"`
	Error           *ErrorView       `json:"error,omitempty"`
	Elicitation     *ElicitationView `json:"elicitation,omitempty"`
	// InputRequests are the requests a working run's call waits for its client to
	// answer (RecordInputRequests), as recorded: an MCP task's input requests, shown
	// only to its MCP client. Get reads them; List does not.
	InputRequests json.RawMessage `json:"-"`
	// ApprovalURL is the page where a person approves or declines the run, while it
	// waits for its confirmation.
	ApprovalURL string     `json:"approval_url,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	FinishedAt  *time.Time `json:"finished_at,omitempty"`
}

// ErrorView is why a run failed or was canceled.
type ErrorView struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ElicitationView is the confirmation a run waits for while input_required.
type ElicitationView struct {
	Message   string     `json:"message"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	Action    string     `json:"action,omitempty"`
}

// view renders the run; output is the opened output of a completed run.
func (r *Run) view(output json.RawMessage) View {
	v := View{
		ID: r.ID, Tool: r.Tool, ConnectionID: r.ConnectionID, State: r.State,
		Kind: r.Kind, Workflow: r.Workflow, WorkflowVersion: r.WorkflowVersion,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
	}
	if r.State == StateCompleted {
		v.Output = output
	}
	if r.Context != "" {
		v.Context = json.RawMessage(r.Context)
	}
	if r.ErrorCode != "" {
		v.Error = &ErrorView{Code: r.ErrorCode, Message: r.ErrorMessage}
	}
	if r.ElicitationMessage != "" {
		v.Elicitation = &ElicitationView{Message: r.ElicitationMessage, ExpiresAt: r.ElicitationExpiresAt, Action: r.ElicitationAction}
	}
	return v
}
