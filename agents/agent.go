// Package agents owns agents: a named set of tools, each bound to one connection of
// the agent's tenant, with instructions (served as an MCP prompt), a confirm policy
// and a tool mode, reachable at its own MCP URL with its own API keys. It also owns
// the tenant's MCP settings (the defaults an agent inherits). Every store call takes
// the tenant.
//
// Start from [Service], which creates, changes and lists agents and the tenant's
// [Settings] over its [Store]; an [Agent] holds its [Tool] bindings and policies
// ([Confirm], [ToolMode], [RunTools]).
package agents

import (
	"time"

	"github.com/switchboard-hub/switchboard"
)

// Confirm is a confirm policy: when a tool call asks the person first.
type Confirm string

// The confirm policies. ConfirmInherit (an agent's empty value) takes the tenant's.
const (
	ConfirmInherit     Confirm = ""
	ConfirmNever       Confirm = "never"
	ConfirmDestructive Confirm = "destructive"
	ConfirmAlways      Confirm = "always"
)

// Approval is who may confirm a call: the approval mode.
type Approval string

// The approval modes. ApprovalInherit is an agent's empty value (the tenant's mode)
// and a tenant's (relay).
const (
	ApprovalInherit Approval = ""
	// ApprovalRelay accepts the MCP client's form, the agent relaying the person's
	// answer (switchboard_submit_elicitation), and the approval page.
	ApprovalRelay Approval = "relay"
	// ApprovalPerson accepts only a signed-in person on the approval page.
	ApprovalPerson Approval = "person"
)

// ToolMode is how an MCP endpoint lists its tools.
type ToolMode string

// The tool modes. ToolModeInherit (an agent's empty value) takes the tenant's;
// ToolModeSearch replaces the full list with search_tools, describe_tool and call_tool.
const (
	ToolModeInherit ToolMode = ""
	ToolModeAll     ToolMode = "all"
	ToolModeSearch  ToolMode = "search"
)

// RunTools is whether an MCP endpoint lists the run tools (switchboard_run_async,
// switchboard_get_run, switchboard_cancel_run, switchboard_list_runs and
// switchboard_submit_elicitation), which cost every list about 9 KB.
type RunTools string

// The run-tools settings. RunToolsInherit is an agent's empty value (the tenant's
// setting) and a tenant's (auto).
const (
	RunToolsInherit RunTools = ""
	// RunToolsAuto lists them where runs are needed: where the confirm policy asks
	// before some calls, since such a call answers with a run to read with
	// switchboard_get_run and to confirm with switchboard_submit_elicitation.
	RunToolsAuto RunTools = "auto"
	RunToolsOn   RunTools = "on"
	RunToolsOff  RunTools = "off"
)

// Agent is a named selection of tools of one tenant, each bound to a connection.
type Agent struct {
	ID           string               `gorm:"primaryKey;size:40"`
	TenantID     switchboard.TenantID `gorm:"size:40;not null"`
	Name         string               `gorm:"size:100;not null"`
	Description  string               `gorm:"size:2000;not null"`
	Instructions string               `gorm:"not null"`
	Confirm      Confirm              `gorm:"size:16;not null"`
	Approval     Approval             `gorm:"size:16;not null"`
	ToolMode     ToolMode             `gorm:"size:16;not null"`
	RunTools     RunTools             `gorm:"size:16;not null"`
	Catalog      Catalog              `gorm:"size:16;not null"`
	// CreatedBy is the user the agent acts for: its tools run on connections that
	// user may use.
	CreatedBy string `gorm:"size:40;not null"`
	// UpdatedBy is the user who saved the agent last (created or replaced it). The
	// agent's tools bound to a private connection run only while this is the
	// connection's owner (see PrivateUser).
	UpdatedBy string    `gorm:"size:40;not null"`
	Version   int64     `gorm:"not null"`
	CreatedAt time.Time `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null"`
	// Tools are the agent's selected tools, in the order they were given.
	Tools []Tool `gorm:"-"`
}

// TableName is the agents table.
func (Agent) TableName() string { return "agents" }

// Tool is one tool an agent selected, bound to one connection; a saved workflow's tool
// (workflow_<name>) has none (ConnectionID is empty): its steps name their own.
type Tool struct {
	AgentID      string               `gorm:"primaryKey;size:40"`
	Tool         string               `gorm:"primaryKey;size:64"`
	TenantID     switchboard.TenantID `gorm:"size:40;not null"`
	ConnectionID string               `gorm:"size:40;not null"`
	Position     int                  `gorm:"not null"`
}

// TableName is the agent_tools table.
func (Tool) TableName() string { return "agent_tools" }

// Settings are a tenant's MCP settings: the confirm policy and tool mode its tenant
// URL uses and its agents inherit.
type Settings struct {
	TenantID  switchboard.TenantID `gorm:"primaryKey;size:40"`
	Confirm   Confirm              `gorm:"size:16;not null"`
	Approval  Approval             `gorm:"size:16;not null"`
	ToolMode  ToolMode             `gorm:"size:16;not null"`
	RunTools  RunTools             `gorm:"size:16;not null"`
	Catalog   Catalog              `gorm:"size:16;not null"`
	UpdatedAt time.Time            `gorm:"not null"`
}

// TableName is the tenant_mcp_settings table.
func (Settings) TableName() string { return "tenant_mcp_settings" }

// DefaultSettings are a tenant's settings until it changes them: no confirmation, the
// full tool list.
func DefaultSettings(tenant switchboard.TenantID) Settings {
	return Settings{TenantID: tenant, Confirm: ConfirmNever, ToolMode: ToolModeAll}
}

// EffectiveConfirm is the agent's confirm policy, or the tenant's when it has none.
func (a *Agent) EffectiveConfirm(s Settings) Confirm {
	if a.Confirm != ConfirmInherit {
		return a.Confirm
	}
	return s.Confirm
}

// EffectiveApproval is the agent's approval mode, or the tenant's when it has none
// (relay when neither set one).
func (a *Agent) EffectiveApproval(s Settings) Approval {
	if a.Approval != ApprovalInherit {
		return a.Approval
	}
	return s.EffectiveApproval()
}

// EffectiveApproval is the tenant's approval mode: relay unless it set person.
func (s Settings) EffectiveApproval() Approval {
	if s.Approval == ApprovalInherit {
		return ApprovalRelay
	}
	return s.Approval
}

func validApproval(m Approval) bool {
	return m == ApprovalInherit || m == ApprovalRelay || m == ApprovalPerson
}

// EffectiveToolMode is the agent's tool mode, or the tenant's when it has none.
func (a *Agent) EffectiveToolMode(s Settings) ToolMode {
	if a.ToolMode != ToolModeInherit {
		return a.ToolMode
	}
	return s.ToolMode
}

// EffectiveRunTools is the agent's run-tools setting, or the tenant's when it has none
// (auto when neither set one).
func (a *Agent) EffectiveRunTools(s Settings) RunTools {
	if a.RunTools != RunToolsInherit {
		return a.RunTools
	}
	return s.EffectiveRunTools()
}

// EffectiveRunTools is the tenant's run-tools setting: auto unless it set on or off.
func (s Settings) EffectiveRunTools() RunTools {
	if s.RunTools == RunToolsInherit {
		return RunToolsAuto
	}
	return s.RunTools
}

// Serves reports whether an endpoint with this (effective) run-tools setting and
// confirm policy lists the run tools.
func (r RunTools) Serves(confirm Confirm) bool {
	switch r {
	case RunToolsOn:
		return true
	case RunToolsOff:
		return false
	}
	return confirm != ConfirmNever && confirm != ConfirmInherit
}

func validRunTools(r RunTools) bool {
	return r == RunToolsInherit || r == RunToolsAuto || r == RunToolsOn || r == RunToolsOff
}

func validConfirm(c Confirm, inherit bool) bool {
	switch c {
	case ConfirmNever, ConfirmDestructive, ConfirmAlways:
		return true
	case ConfirmInherit:
		return inherit
	}
	return false
}

func validToolMode(m ToolMode, inherit bool) bool {
	switch m {
	case ToolModeAll, ToolModeSearch:
		return true
	case ToolModeInherit:
		return inherit
	}
	return false
}
