package api

import (
	"context"

	"github.com/switchboard-hub/switchboard"
)

// ownerNames returns the email of each user of the tenant by id, to show who owns a
// connection someone else shared: two shared connections may carry labels that read
// alike, and their owners tell them apart. Nil when the tenant store is not wired.
func (s *server) ownerNames(ctx context.Context, tenant switchboard.TenantID) (map[string]string, error) {
	if s.Tenants == nil {
		return nil, nil
	}
	users, err := s.Tenants.ListUsers(ctx, tenant)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(users))
	for _, u := range users {
		out[u.ID] = u.Email
	}
	return out, nil
}
