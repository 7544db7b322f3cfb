package agents

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/router"
)

// PrivateUser returns the user whose private connections an agent's key may run tools
// on, "" for none (the agent then runs on shared connections only). A private
// connection is used only by its owner: through their own user keys, or through an
// agent they created and saved last, called with a key they created or by an OAuth
// client they allowed to act as it. So this is the agent's creator when the creator is
// both its last editor and the key's creator: an admin's edit of the agent, or a key
// (or a grant) an admin gave it, never acts through its creator's private connections.
//
// It reads the database on every call, so an edit takes effect at once on every node.
func (s *Service) PrivateUser(ctx context.Context, p switchboard.Principal) (string, error) {
	if p.Kind != switchboard.PrincipalAgent {
		return p.UserID, nil
	}
	return s.store.privateUser(ctx, p.TenantID, p.AgentID, p.KeyID)
}

// Selection returns the tools an agent's key may call: its agent's, each with the
// connection it is bound to (none for a workflow). A user's principal has no
// selection, and an agent that is gone selects nothing. It reads the database on
// every call, so an edit takes effect at once on every node.
func (s *Service) Selection(ctx context.Context, p switchboard.Principal) ([]router.Selected, error) {
	if p.Kind != switchboard.PrincipalAgent {
		return nil, nil
	}
	return s.store.selection(ctx, p.TenantID, p.AgentID)
}

// selection reads an agent's tools and their connections in one query, without the
// agent's row (see Service.Selection).
func (s *Store) selection(ctx context.Context, tenant switchboard.TenantID, agentID string) ([]router.Selected, error) {
	var out []router.Selected
	err := s.db.WithContext(ctx).Model(&Tool{}).Select("tool, connection_id").
		Where("tenant_id = ? AND agent_id = ?", tenant, agentID).Scan(&out).Error
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("read the tools of agent %s: %w", agentID, err))
	}
	return out, nil
}

// privateUser reads the agent's creator and last editor and its key's creator in one
// query (see Service.PrivateUser).
func (s *Store) privateUser(ctx context.Context, tenant switchboard.TenantID, agentID, keyID string) (string, error) {
	var row struct {
		CreatedBy    string
		UpdatedBy    string
		KeyCreatedBy string
	}
	err := s.db.WithContext(ctx).Table("agents AS a").
		Select("a.created_by, a.updated_by, k.created_by AS key_created_by").
		Joins("JOIN api_keys k ON k.tenant_id = a.tenant_id AND k.agent_id = a.id").
		Where("a.tenant_id = ? AND a.id = ? AND k.id = ?", tenant, agentID, keyID).
		Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		// Not one of the agent's keys: the agent console, where a person uses the agent
		// with their own credential (a user key or a browser session), which counts as
		// a key that person created for it; or an OAuth client a person allowed to act
		// as the agent (its grant, for this agent), which counts as a key the person who
		// allowed it created.
		err = s.db.WithContext(ctx).Raw(`SELECT a.created_by, a.updated_by, c.user_id AS key_created_by FROM agents a
			JOIN (SELECT tenant_id, user_id FROM api_keys WHERE id = ? AND agent_id IS NULL AND revoked_at IS NULL
			      UNION ALL SELECT tenant_id, user_id FROM web_sessions WHERE id = ?
			      UNION ALL SELECT tenant_id, consented_by FROM oauth_grants WHERE id = ? AND agent_id = ? AND revoked_at IS NULL) c ON c.tenant_id = a.tenant_id
			WHERE a.tenant_id = ? AND a.id = ?`, keyID, keyID, keyID, agentID, tenant, agentID).Take(&row).Error
	}
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return "", nil
	case err != nil:
		return "", switchboard.Internal(fmt.Errorf("read who agent %s acts for: %w", agentID, err))
	}
	if row.CreatedBy == "" || row.CreatedBy != row.UpdatedBy || row.CreatedBy != row.KeyCreatedBy {
		return "", nil
	}
	return row.CreatedBy, nil
}

// ForNewKey returns the agent if p may create an API key for it: p may manage it (its
// creator or a tenant admin), and every connection its tools are bound to is shared or
// p's own. An admin gets no key to an agent that runs on another user's private
// connection.
func (s *Service) ForNewKey(ctx context.Context, p switchboard.Principal, id string) (Agent, error) {
	a, err := s.manageable(ctx, p, id)
	if err != nil {
		return Agent{}, err
	}
	var foreign []string
	for _, t := range a.Tools {
		if t.ConnectionID == "" {
			continue // a workflow: its steps run on connections the key's principal may use
		}
		c, err := s.conns.Get(ctx, p, t.ConnectionID)
		switch {
		case switchboard.CodeOf(err) == switchboard.CodeNotFound:
			foreign = append(foreign, t.Tool)
		case err != nil:
			return Agent{}, err
		case !c.Shared && c.OwnerUserID != p.UserID:
			foreign = append(foreign, t.Tool)
		}
	}
	if len(foreign) > 0 {
		return Agent{}, switchboard.Errorf(switchboard.CodeForbidden,
			"the agent's tools %s run on another user's private connection: only that user may create keys for this agent", strings.Join(foreign, ", "))
	}
	return a, nil
}
