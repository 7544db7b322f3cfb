package mcpadapter

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// defaultKeyRecheck is how often the keys of open requests are authenticated again
// when Options.KeyRecheck is not set.
const defaultKeyRecheck = 30 * time.Second

// openRequest is an MCP request being served (a GET stream, or a POST answering with
// a stream) with the key that authenticated it, so that it ends when the key does.
type openRequest struct {
	principal switchboard.Principal
	key       string
	resource  string // the MCP URL it was made at, where an access token is checked
	cancel    context.CancelFunc
}

// openRequests are the requests being served, by themselves.
type openRequests struct {
	mu  sync.Mutex
	set map[*openRequest]struct{}
}

// track registers a request authenticated by key as p and returns it with a context
// that ends when the key is revoked, and the function that unregisters it.
func (a *Adapter) track(r *http.Request, p switchboard.Principal, key, resource string) (*http.Request, func()) {
	ctx, cancel := context.WithCancel(r.Context())
	o := &openRequest{principal: p, key: key, resource: resource, cancel: cancel}
	a.open.mu.Lock()
	if a.open.set == nil {
		a.open.set = map[*openRequest]struct{}{}
	}
	a.open.set[o] = struct{}{}
	a.open.mu.Unlock()
	return r.WithContext(ctx), func() {
		a.open.mu.Lock()
		delete(a.open.set, o)
		a.open.mu.Unlock()
		cancel()
	}
}

// openWhere returns the open requests that match.
func (a *Adapter) openWhere(match func(*openRequest) bool) []*openRequest {
	a.open.mu.Lock()
	defer a.open.mu.Unlock()
	var out []*openRequest
	for o := range a.open.set {
		if match(o) {
			out = append(out, o)
		}
	}
	return out
}

// KeysRevoked ends the open requests (GET streams above all) of revoked keys of the
// tenant at once; wire it to the tenants store's OnKeysRevoked.
func (a *Adapter) KeysRevoked(tenant switchboard.TenantID, keyIDs []string) {
	revoked := make(map[string]bool, len(keyIDs))
	for _, id := range keyIDs {
		revoked[id] = true
	}
	for _, o := range a.openWhere(func(o *openRequest) bool { return o.principal.TenantID == tenant && revoked[o.principal.KeyID] }) {
		o.cancel()
	}
}

// recheckKeys authenticates the key of every open request again and ends those whose
// key no longer authenticates as the same principal (revoked in another process, or
// its user removed). A failure to check (the database is down) keeps the request.
func (a *Adapter) recheckKeys(ctx context.Context) {
	checked := map[[2]string]bool{} // key and resource → still valid
	for _, o := range a.openWhere(func(*openRequest) bool { return true }) {
		valid, done := checked[[2]string{o.key, o.resource}]
		if !done {
			p, err := a.authenticate(ctx, o.key, o.resource)
			switch {
			case err == nil:
				valid = p.TenantID == o.principal.TenantID && p.KeyID == o.principal.KeyID && p.ID() == o.principal.ID()
			case switchboard.CodeOf(err) == switchboard.CodeInternal:
				a.opts.Logger.Warn("recheck the key of an open MCP request", "tenant", o.principal.TenantID, "key", o.principal.KeyID, "err", err)
				valid = true
			default:
				valid = false
			}
			checked[[2]string{o.key, o.resource}] = valid
		}
		if !valid {
			o.cancel()
		}
	}
}
