package agents

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/switchboard-hub/switchboard"
)

// Store keeps agents, their tools and the tenants' MCP settings. Every method takes
// the tenant, and another tenant's agent is not found, the same as a missing one.
type Store struct {
	db *gorm.DB
}

// NewStore returns a Store on db.
func NewStore(db *gorm.DB) *Store { return &Store{db: db} }

func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// Create stores a new agent of the tenant with its tools: it assigns the ID and starts
// at version 1. A name the tenant already uses is a conflict.
func (s *Store) Create(ctx context.Context, tenant switchboard.TenantID, a *Agent) error {
	a.ID = switchboard.NewID("agt")
	a.TenantID = tenant
	a.Version = 1
	a.CreatedAt = now()
	a.UpdatedAt = a.CreatedAt
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := nameFree(tx, tenant, a.Name, ""); err != nil {
			return err
		}
		if err := tx.Create(a).Error; err != nil {
			return storeError(err, "create agent")
		}
		return putTools(tx, a)
	})
	return err
}

// Get returns one of the tenant's agents with its tools.
func (s *Store) Get(ctx context.Context, tenant switchboard.TenantID, id string) (Agent, error) {
	var a Agent
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenant, id).Take(&a).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return Agent{}, switchboard.NotFound("agent")
	case err != nil:
		return Agent{}, switchboard.Internal(fmt.Errorf("read agent %s: %w", id, err))
	}
	if err := s.db.WithContext(ctx).Where("tenant_id = ? AND agent_id = ?", tenant, id).Order("position").Find(&a.Tools).Error; err != nil {
		return Agent{}, switchboard.Internal(fmt.Errorf("read tools of agent %s: %w", id, err))
	}
	return a, nil
}

// ExistsAt reports whether the tenant the slug names has the agent, in one query, so
// the answer takes as long whether the tenant is missing or only the agent is.
func (s *Store) ExistsAt(ctx context.Context, tenantSlug, id string) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Table("agents AS a").
		Joins("JOIN tenants t ON t.id = a.tenant_id").
		Where("t.slug = ? AND a.id = ?", tenantSlug, id).
		Count(&n).Error
	if err != nil {
		return false, switchboard.Internal(fmt.Errorf("look up agent %s of tenant %s: %w", id, tenantSlug, err))
	}
	return n > 0, nil
}

// List returns the tenant's agents with their tools, by name.
func (s *Store) List(ctx context.Context, tenant switchboard.TenantID) ([]Agent, error) {
	var as []Agent
	if err := s.db.WithContext(ctx).Where("tenant_id = ?", tenant).Order("name, id").Find(&as).Error; err != nil {
		return nil, switchboard.Internal(fmt.Errorf("list agents: %w", err))
	}
	var tools []Tool
	if err := s.db.WithContext(ctx).Where("tenant_id = ?", tenant).Order("agent_id, position").Find(&tools).Error; err != nil {
		return nil, switchboard.Internal(fmt.Errorf("list agent tools: %w", err))
	}
	byAgent := map[string][]Tool{}
	for _, t := range tools {
		byAgent[t.AgentID] = append(byAgent[t.AgentID], t)
	}
	for i := range as {
		as[i].Tools = byAgent[as[i].ID]
	}
	return as, nil
}

// Update replaces an agent's fields and tools if it is still at version; it returns
// the agent at its new version. A stale version is a conflict.
func (s *Store) Update(ctx context.Context, tenant switchboard.TenantID, a *Agent, version int64) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := nameFree(tx, tenant, a.Name, a.ID); err != nil {
			return err
		}
		at := now()
		res := tx.Model(&Agent{}).Where("tenant_id = ? AND id = ? AND version = ?", tenant, a.ID, version).Updates(map[string]any{
			"name": a.Name, "description": a.Description, "instructions": a.Instructions,
			"confirm": a.Confirm, "approval": a.Approval, "tool_mode": a.ToolMode, "run_tools": a.RunTools, "catalog": a.Catalog, "updated_by": a.UpdatedBy, "version": version + 1, "updated_at": at,
		})
		if res.Error != nil {
			return storeError(res.Error, "update agent")
		}
		if res.RowsAffected == 0 {
			var n int64
			if err := tx.Model(&Agent{}).Where("tenant_id = ? AND id = ?", tenant, a.ID).Count(&n).Error; err != nil {
				return switchboard.Internal(fmt.Errorf("update agent: %w", err))
			}
			if n == 0 {
				return switchboard.NotFound("agent")
			}
			return switchboard.Errorf(switchboard.CodeConflict, "the agent changed since version %d; read it again and retry", version)
		}
		if err := tx.Where("tenant_id = ? AND agent_id = ?", tenant, a.ID).Delete(&Tool{}).Error; err != nil {
			return switchboard.Internal(fmt.Errorf("update agent tools: %w", err))
		}
		a.TenantID, a.Version, a.UpdatedAt = tenant, version+1, at
		return putTools(tx, a)
	})
}

// Delete removes one of the tenant's agents and its tools.
func (s *Store) Delete(ctx context.Context, tenant switchboard.TenantID, id string) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("tenant_id = ? AND agent_id = ?", tenant, id).Delete(&Tool{}).Error; err != nil {
			return switchboard.Internal(fmt.Errorf("delete agent tools: %w", err))
		}
		res := tx.Where("tenant_id = ? AND id = ?", tenant, id).Delete(&Agent{})
		if res.Error != nil {
			return switchboard.Internal(fmt.Errorf("delete agent %s: %w", id, res.Error))
		}
		if res.RowsAffected == 0 {
			return switchboard.NotFound("agent")
		}
		return nil
	})
}

// UsingConnection returns the IDs of the tenant's agents with a tool bound to the
// connection.
func (s *Store) UsingConnection(ctx context.Context, tenant switchboard.TenantID, connectionID string) ([]string, error) {
	var ids []string
	err := s.db.WithContext(ctx).Model(&Tool{}).Distinct("agent_id").
		Where("tenant_id = ? AND connection_id = ?", tenant, connectionID).Order("agent_id").Pluck("agent_id", &ids).Error
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("agents using connection %s: %w", connectionID, err))
	}
	return ids, nil
}

// Settings returns the tenant's MCP settings, the defaults when it never set them.
func (s *Store) Settings(ctx context.Context, tenant switchboard.TenantID) (Settings, error) {
	var st Settings
	err := s.db.WithContext(ctx).Where("tenant_id = ?", tenant).Take(&st).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return DefaultSettings(tenant), nil
	case err != nil:
		return Settings{}, switchboard.Internal(fmt.Errorf("read MCP settings: %w", err))
	}
	return st, nil
}

// PutSettings stores the tenant's MCP settings.
func (s *Store) PutSettings(ctx context.Context, tenant switchboard.TenantID, st *Settings) error {
	st.TenantID = tenant
	st.UpdatedAt = now()
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "tenant_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"confirm", "approval", "tool_mode", "run_tools", "catalog", "updated_at"}),
	}).Create(st).Error
	if err != nil {
		if errors.Is(err, gorm.ErrForeignKeyViolated) {
			return switchboard.NotFound("tenant")
		}
		return switchboard.Internal(fmt.Errorf("store MCP settings: %w", err))
	}
	return nil
}

// nameFree refuses a name another agent of the tenant has.
func nameFree(tx *gorm.DB, tenant switchboard.TenantID, name, self string) error {
	var n int64
	if err := tx.Model(&Agent{}).Where("tenant_id = ? AND name = ? AND id <> ?", tenant, name, self).Count(&n).Error; err != nil {
		return switchboard.Internal(fmt.Errorf("check agent name: %w", err))
	}
	if n > 0 {
		return &switchboard.Error{Code: switchboard.CodeConflict, Field: "name", Message: "another agent of this tenant has this name"}
	}
	return nil
}

func putTools(tx *gorm.DB, a *Agent) error {
	for i := range a.Tools {
		a.Tools[i].AgentID, a.Tools[i].TenantID, a.Tools[i].Position = a.ID, a.TenantID, i
	}
	if len(a.Tools) == 0 {
		return nil
	}
	if err := tx.Create(&a.Tools).Error; err != nil {
		return storeError(err, "store agent tools")
	}
	return nil
}

func storeError(err error, doing string) error {
	switch {
	case errors.Is(err, gorm.ErrDuplicatedKey):
		return &switchboard.Error{Code: switchboard.CodeConflict, Message: "an agent with this name or tool already exists"}
	case errors.Is(err, gorm.ErrForeignKeyViolated):
		return switchboard.NotFound("tenant or user")
	}
	return switchboard.Internal(fmt.Errorf("%s: %w", doing, err))
}

// BindUnbound binds those of the agent's tools that were selected on no connection (a
// tool of a provider its person had not connected yet) to a connection, bind giving
// each tool's; a tool bound already is left as it is. It reports whether any was
// bound, and then bumps the agent's version.
func (s *Store) BindUnbound(ctx context.Context, tenant switchboard.TenantID, agentID string, bind map[string]string) (bool, error) {
	bound := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for tool, conn := range bind {
			res := tx.Model(&Tool{}).Where("tenant_id = ? AND agent_id = ? AND tool = ? AND connection_id = ''", tenant, agentID, tool).Update("connection_id", conn)
			if res.Error != nil {
				return storeError(res.Error, "bind agent tool")
			}
			bound = bound || res.RowsAffected > 0
		}
		if !bound {
			return nil
		}
		res := tx.Model(&Agent{}).Where("tenant_id = ? AND id = ?", tenant, agentID).Updates(map[string]any{"version": gorm.Expr("version + 1"), "updated_at": now()})
		if res.Error != nil {
			return storeError(res.Error, "bind agent tool")
		}
		return nil
	})
	return bound, err
}
