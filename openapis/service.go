// Package openapis keeps the APIs tenants add by their OpenAPI description (POST
// /api/openapi-providers): each is a provider of that tenant alone, named by the tenant,
// whose operations become the tools {name}_{operation} of its connections. They are
// connections of one registered provider, "openapi", whose tools exist per connection,
// so the router, agents, runs and the UI treat them like any provider's. Descriptions
// and base URLs come from tenants: fetching a description and every request to the API
// go through the SSRF guard.
//
// Start from [Service] (from [Options]) over its [Store]: [AddInput] is a tenant's
// request to add an API, [View] the answer, [API] the stored record.
package openapis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/openapi"
)

// Provider is the registered provider whose connections are the tenants' APIs.
const Provider = "openapi"

// Changed is the change-feed kind that says a tenant's API was added or deleted; ID is
// its name. Every node drops what it built of it.
const Changed events.Kind = "openapi.changed"

// The connection meta keys that name a connection's API.
const (
	metaAPI   = "api"    // its name, the prefix of its tools
	metaAPIID = "api_id" // its id, so an API deleted and added again under the name is another
)

// MaxDescription bounds a description a tenant gives or names (8 MB: most public
// descriptions are far smaller; Stripe's, among the largest, is about 7 MB).
const MaxDescription = 8 << 20

// Options configure a Service.
type Options struct {
	Store       *Store
	Connections *connections.Service
	// Registry gets the provider (New registers it).
	Registry *providers.Registry
	// Transports gets the provider's transport: the guard's.
	Transports *providers.Transports
	// Guard refuses private addresses; nil refuses them all.
	Guard *egress.Guard
	// FetchTimeout bounds fetching a description by its URL (default 30 seconds).
	FetchTimeout time.Duration
	// Keyring seals the APIs' OAuth client secrets.
	Keyring keyring.Keyring
	// Recorder takes the audit events of added and deleted APIs.
	Recorder audit.Recorder
	Logger   *slog.Logger
}

// Service adds, lists and deletes the tenants' APIs and supplies the tools of their
// connections. Safe for concurrent use.
type Service struct {
	store *Store
	conns *connections.Service
	reg   *providers.Registry
	guard *egress.Guard
	fetch *http.Client
	// tokenTransport carries the APIs' OAuth token requests, through the guard.
	tokenTransport http.RoundTripper
	log            *slog.Logger
	spec           *providers.Spec
	feed           events.Bus
	timeout        time.Duration
	rec            audit.Recorder
	kr             keyring.Keyring

	mu    sync.Mutex
	built map[string]*built // by tenant and API name
}

// built is what a stored API made: the provider its description makes, and its tools
// as a connection offers them.
type built struct {
	id    string
	spec  providers.Spec
	tools []*providers.Tool
	flow  *flow // its scheme's OAuth 2.0 flow; nil when it has none the hub runs
	app   bool  // an OAuth app is set for it
}

// New returns a Service and registers its provider. Call it while wiring, before the
// registry is shared.
func New(o Options) (*Service, error) {
	if o.Store == nil || o.Connections == nil || o.Registry == nil || o.Transports == nil {
		return nil, errors.New("openapis: store, connections, registry and transports are required")
	}
	if o.Guard == nil {
		g, err := egress.NewGuard(false, nil)
		if err != nil {
			return nil, err
		}
		o.Guard = g
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = 30 * time.Second
	}
	s := &Service{
		store: o.Store, conns: o.Connections, reg: o.Registry, guard: o.Guard, log: o.Logger, timeout: o.FetchTimeout, rec: o.Recorder, kr: o.Keyring,
		fetch: egress.Client(o.Guard.Transport(), o.FetchTimeout, true), tokenTransport: o.Guard.Transport(),
		built: map[string]*built{},
	}
	s.spec = &providers.Spec{
		Name:        Provider,
		Title:       "APIs added by their OpenAPI description",
		Description: "A tenant's own APIs, each added by its OpenAPI description; its connections bring their tools.",
		AuthKinds:   []providers.AuthKind{providers.AuthAPIKey, providers.AuthOAuth2, providers.AuthClientCredentials},
		RateLimit:   providers.RateLimit{PerSecond: 10, Burst: 20},
		Authorize:   openapi.Authorize,
		Tools:       s.connectionTools,
	}
	s.spec.ConnectionOAuth = &providers.ConnectionOAuth{Finish: s.finishOAuth, Refresh: s.refreshOAuth}
	if err := o.Registry.Register(*s.spec); err != nil {
		return nil, fmt.Errorf("openapis: %w", err)
	}
	s.spec, _ = o.Registry.Provider(Provider)
	o.Transports.Set(Provider, guardedTransport{next: o.Guard.Transport()})
	return s, nil
}

// SetFeed makes the service tell every node of its changes, and drop what it built of
// an API another node changed. Call it once, while wiring.
func (s *Service) SetFeed(b events.Bus) {
	s.feed = b
	b.Subscribe(func(e events.Event) {
		switch e.Kind {
		case events.Gap:
			s.mu.Lock()
			clear(s.built)
			s.mu.Unlock()
		case Changed:
			s.forget(e.Tenant, e.ID)
		}
	})
}

// forget drops what was built of a tenant's API.
func (s *Service) forget(tenant switchboard.TenantID, name string) {
	s.mu.Lock()
	delete(s.built, key(tenant, name))
	s.mu.Unlock()
}

// changed tells every node (or this one, without a feed) that a tenant's API changed.
func (s *Service) changed(ctx context.Context, tenant switchboard.TenantID, name string) {
	if s.feed == nil {
		s.forget(tenant, name)
		return
	}
	events.PublishAfterCommit(ctx, s.feed, s.log, events.Event{Kind: Changed, Tenant: tenant, ID: name})
}

func key(tenant switchboard.TenantID, name string) string { return string(tenant) + "\x00" + name }

// build returns what the tenant's API makes, building it from its stored description
// when this node has not yet (or the API was replaced since).
func (s *Service) build(ctx context.Context, tenant switchboard.TenantID, name, id string) (*built, error) {
	s.mu.Lock()
	b := s.built[key(tenant, name)]
	s.mu.Unlock()
	if b != nil && (id == "" || b.id == id) {
		return b, nil
	}
	a, err := s.store.get(ctx, tenant, name)
	if err != nil {
		return nil, err
	}
	if id != "" && a.ID != id {
		return nil, switchboard.NotFound("API " + name) // deleted and added again: another API
	}
	doc, err := decompress(a.Document, MaxDescription)
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("open the description of API %s: %w", name, err))
	}
	parsed, spec, err := parse(ctx, doc, options(a))
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("build API %s: %w", name, err))
	}
	tools, err := openapi.ConnectionTools(spec, s.spec)
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("build the tools of API %s: %w", name, err))
	}
	f := flowOf(parsed, a.Auth)
	spec.AuthKinds = authKinds(f, a.OAuthClientID != "")
	b = &built{id: a.ID, spec: spec, tools: tools, flow: f, app: a.OAuthClientID != ""}
	s.mu.Lock()
	s.built[key(tenant, name)] = b
	s.mu.Unlock()
	return b, nil
}

// options are a stored API's options for openapi.New.
func options(a API) openapi.Options {
	return openapi.Options{Name: a.Name, Title: a.Title, BaseURL: a.BaseURL, Auth: a.Auth, Operations: a.Operations, Tags: a.Tags}
}

// connectionTools lists a connection's tools: its API's (the provider's Spec.Tools).
func (s *Service) connectionTools(ctx context.Context, c providers.Connection) ([]*providers.Tool, error) {
	name := c.Meta[metaAPI]
	if name == "" {
		return nil, nil
	}
	b, err := s.build(ctx, c.Tenant, name, c.Meta[metaAPIID])
	if switchboard.CodeOf(err) == switchboard.CodeNotFound {
		return nil, nil // its API was deleted: it offers nothing
	}
	if err != nil {
		return nil, err
	}
	return b.tools, nil
}

// checkHosts refuses a description whose base URL or servers resolve to an address the
// guard refuses, naming the field that brought it.
func (s *Service) checkHosts(ctx context.Context, spec providers.Spec, baseGiven bool) error {
	for i, raw := range openapi.Hosts(spec) {
		field := "description"
		if i == 0 && baseGiven {
			field = "base_url"
		}
		if err := s.checkHost(ctx, field, raw); err != nil {
			return err
		}
	}
	return nil
}

// checkHost refuses a URL whose host the guard refuses or that does not resolve.
func (s *Service) checkHost(ctx context.Context, field, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return switchboard.Invalid(field, "is not an absolute URL")
	}
	if err := s.guard.CheckHost(ctx, u.Hostname()); err != nil {
		var re *egress.RefusedError
		if errors.As(err, &re) {
			return &switchboard.Error{Code: switchboard.CodeInvalid, Field: field, Message: refused(raw)}
		}
		return &switchboard.Error{Code: switchboard.CodeInvalid, Field: field, Message: "its host does not resolve: " + u.Hostname(), Err: err}
	}
	return nil
}

// refused says that the guard refused a URL's host, and how an operator allows it; not
// the address the host resolved to, which would map a private network's names.
func refused(raw string) string {
	return fmt.Sprintf("%s: its host is a private, loopback, link-local or reserved address, which a tenant's API may not use; an operator can allow it with %s=true or %s",
		redacted(raw), egress.AllowPrivateEnv, egress.AllowCIDRsEnv)
}

// connectionsOf lists the tenant's connections of an API, as an admin sees them.
func (s *Service) connectionsOf(ctx context.Context, p switchboard.Principal, name string) ([]connections.Connection, error) {
	all, err := s.conns.List(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []connections.Connection
	for _, c := range all {
		if c.Provider == Provider && c.Meta[metaAPI] == name {
			out = append(out, c)
		}
	}
	return out, nil
}

// trimmed is a list without blanks, each entry trimmed.
func trimmed(l []string) []string {
	var out []string
	for _, v := range l {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// guardedTransport is the guard's transport for the APIs' requests, whose refusal of an
// address is a forbidden error that says so (and how an operator allows it), not a
// network failure to retry.
type guardedTransport struct{ next http.RoundTripper }

func (t guardedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	var re *egress.RefusedError
	if err != nil && errors.As(err, &re) {
		return nil, &switchboard.Error{Code: switchboard.CodeForbidden, Message: refused(r.URL.Scheme + "://" + r.URL.Host), Err: err}
	}
	return resp, err
}
