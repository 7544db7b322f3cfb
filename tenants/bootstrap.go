package tenants

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
)

// The first tenant, user and key Bootstrap creates.
const (
	DefaultTenantSlug = "default"
	BootstrapEmail    = "admin@localhost"
	BootstrapKeyName  = "bootstrap"
)

// Bootstrap prepares a fresh deployment: when there is no tenant yet it creates the
// "default" tenant, its owner admin@localhost, and an operator key named "bootstrap",
// returned in the clear with created true. Otherwise it returns the default tenant (or,
// if that was renamed away, the oldest) and created false. Concurrent calls create once.
func (s *Store) Bootstrap(ctx context.Context) (Tenant, string, bool, error) {
	var (
		tenant    Tenant
		plaintext string
	)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&Tenant{}).Count(&n).Error; err != nil {
			return fmt.Errorf("count tenants: %w", err)
		}
		if n > 0 {
			return errAlreadyBootstrapped
		}
		t, err := createTenant(tx, DefaultTenantSlug, "Default")
		if err != nil {
			return err
		}
		u, err := createUser(tx, t.ID, BootstrapEmail, switchboard.RoleOwner)
		if err != nil {
			return err
		}
		key, _, err := createKey(tx, t.ID, u.ID, nil, BootstrapKeyName, true)
		if err != nil {
			return err
		}
		tenant, plaintext = t, key
		return nil
	})
	switch {
	case err == nil:
		return tenant, plaintext, true, nil
	case errors.Is(err, errAlreadyBootstrapped), switchboard.CodeOf(err) == switchboard.CodeConflict:
		// Either tenants exist, or a concurrent start created the default one first.
		t, err := s.TenantBySlug(ctx, DefaultTenantSlug)
		if switchboard.CodeOf(err) == switchboard.CodeNotFound {
			err = s.db.WithContext(ctx).Order("created_at, id").Take(&t).Error
		}
		if err != nil {
			return Tenant{}, "", false, fmt.Errorf("bootstrap: find default tenant: %w", err)
		}
		return t, "", false, nil
	default:
		return Tenant{}, "", false, fmt.Errorf("bootstrap: %w", err)
	}
}

var errAlreadyBootstrapped = errors.New("already bootstrapped")
