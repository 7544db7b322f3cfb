package router

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/providers"
)

// pool caches, per connection, its record and an HTTP client built on the provider's
// shared transport, so a call opens no credentials and builds no client on the hot path.
// An entry is dropped when the connection changes (forget) and re-read after ttl. The
// connection's rate-limit state lives apart from the entry and survives both, so an
// upstream's announced window is honoured whatever happens to the cached client; with a
// shared store (Redis), every node's clients of a connection draw on one limit.
type pool struct {
	registry   *providers.Registry
	conns      Connections
	transports *providers.Transports
	ttl        time.Duration

	// limits keeps each connection's rate-limit state, by connection id.
	limits limits.Upstream

	mu      sync.RWMutex
	entries map[string]*entry
	// gens counts each connection's changes: an open that started before a change
	// does not cache what it read.
	gens map[string]uint64
	// epoch counts forgetAll's, which change every connection.
	epoch uint64
	group flight
}

// tokenSourcer is implemented by connection stores whose tokens refresh
// (connections.Service): the pool's clients take their tokens from it, so a refresh is
// single-flight and persisted. Others' tokens are used as they are.
type tokenSourcer interface {
	TokenSource(c connections.Connection, creds connections.Credentials) oauth2.TokenSource
}

type entry struct {
	conn    connections.Connection
	spec    *providers.Spec
	client  *http.Client
	lim     *providers.Limiter
	expires time.Time
}

func newPool(reg *providers.Registry, conns Connections, tr *providers.Transports, ttl time.Duration, lim limits.Upstream) *pool {
	if lim == nil {
		lim = limits.NewLocal()
	}
	return &pool{
		registry: reg, conns: conns, transports: tr, ttl: ttl, limits: lim,
		entries: map[string]*entry{}, gens: map[string]uint64{},
	}
}

// get returns the connection's entry, opening it when it is not cached. The tenant is
// checked by the store on open and again here on every hit.
func (p *pool) get(ctx context.Context, tenant switchboard.TenantID, id string) (*entry, error) {
	p.mu.RLock()
	e, ok := p.entries[id]
	p.mu.RUnlock()
	if ok && time.Now().Before(e.expires) {
		if e.conn.TenantID != tenant {
			return nil, switchboard.NotFound("connection")
		}
		return e, nil
	}
	// Concurrent opens share one store read; the key holds the tenant, so a caller of
	// another tenant never receives this tenant's entry.
	return p.group.do(string(tenant)+"\x00"+id, func() (*entry, error) {
		p.mu.RLock()
		gen, epoch := p.gens[id], p.epoch
		p.mu.RUnlock()
		conn, creds, err := p.conns.Open(context.WithoutCancel(ctx), tenant, id)
		if err != nil {
			if switchboard.CodeOf(err) == switchboard.CodeNotFound {
				p.limits.Forget(ctx, id) // the connection is gone (or never was this tenant's)
			}
			return nil, err
		}
		spec, ok := p.registry.Provider(conn.Provider)
		if !ok {
			return nil, switchboard.Errorf(switchboard.CodeUnavailable, "provider %s is not available in this deployment", conn.Provider)
		}
		var tokens oauth2.TokenSource = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: creds.AccessToken, TokenType: creds.TokenType, Expiry: creds.Expiry})
		if ts, ok := p.conns.(tokenSourcer); ok {
			tokens = ts.TokenSource(conn, creds)
		}
		lim := providers.LimiterFor(spec, p.limits, id)
		if own, ok := conn.OwnRateLimit(); ok {
			lim.WithRate(own.Rate()) // the connection's own, which an admin set
		}
		e := &entry{conn: conn, spec: spec, lim: lim, expires: time.Now().Add(p.ttl)}
		e.client = providers.NewClient(spec, p.transports.For(conn.Provider), tokens, lim)
		e.client.Transport = &statusTransport{next: e.client.Transport}
		p.mu.Lock()
		if p.gens[id] == gen && p.epoch == epoch {
			p.entries[id] = e
		}
		p.mu.Unlock()
		return e, nil
	})
}

// forget drops a connection's cached entry; its rate-limit state stays until an open
// finds the connection gone.
func (p *pool) forget(id string) {
	p.mu.Lock()
	delete(p.entries, id)
	p.gens[id]++
	p.mu.Unlock()
}

// forgetAll drops every cached entry (after a gap in the change feed); rate-limit
// state stays, as in forget.
func (p *pool) forgetAll() {
	p.mu.Lock()
	clear(p.entries)
	p.epoch++
	p.mu.Unlock()
}

// flight makes concurrent opens of one connection share a single store read.
type flight struct {
	mu    sync.Mutex
	calls map[string]*flightCall
}

type flightCall struct {
	done chan struct{}
	e    *entry
	err  error
}

func (f *flight) do(key string, fn func() (*entry, error)) (*entry, error) {
	f.mu.Lock()
	if c, ok := f.calls[key]; ok {
		f.mu.Unlock()
		<-c.done
		return c.e, c.err
	}
	if f.calls == nil {
		f.calls = map[string]*flightCall{}
	}
	c := &flightCall{done: make(chan struct{})}
	f.calls[key] = c
	f.mu.Unlock()
	c.e, c.err = fn()
	close(c.done)
	f.mu.Lock()
	delete(f.calls, key)
	f.mu.Unlock()
	return c.e, c.err
}

// upstreamStatus receives the HTTP status of the last upstream response of a call, for
// the audit record.
type upstreamStatus struct {
	// wrote says a request of the call was written to its upstream in full: from then
	// on, a lost answer leaves the outcome unknown.
	wrote     atomic.Bool
	code      atomic.Int32
	responses atomic.Int32
	stats     providers.CallStats // upstream time and rate-limit waits, for the metrics
}

type statusKey struct{}

func withStatus(ctx context.Context, s *upstreamStatus) context.Context {
	return context.WithValue(providers.WithCallStats(ctx, &s.stats), statusKey{}, s)
}

// statusTransport notes each response's status in the call's upstreamStatus, and
// reports each response as progress (a call that pages through results gets one per
// page).
type statusTransport struct{ next http.RoundTripper }

func (t *statusTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// The call's place in the admission, and its room among the calls under way, give
	// way while it waits for its upstream: the wait costs the hub nothing, and a slow
	// upstream keeps its own calls waiting, not the other upstreams' (limits.Slot.Away).
	slot := limits.SlotFrom(req.Context())
	s, tracked := req.Context().Value(statusKey{}).(*upstreamStatus)
	if tracked {
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			WroteRequest: func(info httptrace.WroteRequestInfo) {
				if info.Err == nil {
					s.wrote.Store(true)
				}
			},
		}))
	}
	if err := slot.Away(req.Context(), req.URL.Host); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	resp, err := t.next.RoundTrip(req)
	slot.Resume()
	if resp != nil {
		if tracked {
			s.code.Store(int32(resp.StatusCode))
			n := s.responses.Add(1)
			// Formatted only for a caller that asked for progress: most never do.
			if providers.WantsProgress(req.Context()) {
				providers.ReportProgress(req.Context(), float64(n), 0, fmt.Sprintf("upstream response %d (HTTP %d)", n, resp.StatusCode))
			}
		}
	}
	return resp, err
}
