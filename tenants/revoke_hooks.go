package tenants

import (
	"sync"

	"github.com/switchboard-hub/switchboard"
)

// revokeHooks are the functions told of revoked keys in this process.
type revokeHooks struct {
	mu  sync.Mutex
	fns []func(tenant switchboard.TenantID, keyIDs []string)
}

// OnKeysRevoked registers fn to be told, after the fact, of the keys each revocation
// in this process ended (RevokeKey, RemoveUser), so that what a key holds open (an MCP
// stream) can end at once. Other processes learn of a revocation by authenticating the
// key again, within the key cache's lifetime.
func (s *Store) OnKeysRevoked(fn func(tenant switchboard.TenantID, keyIDs []string)) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	s.hooks.fns = append(s.hooks.fns, fn)
}

// keysRevoked tells the hooks of revoked keys.
func (s *Store) keysRevoked(tenant switchboard.TenantID, keyIDs []string) {
	if len(keyIDs) == 0 {
		return
	}
	s.hooks.mu.Lock()
	fns := append([]func(switchboard.TenantID, []string){}, s.hooks.fns...)
	s.hooks.mu.Unlock()
	for _, fn := range fns {
		fn(tenant, keyIDs)
	}
}
