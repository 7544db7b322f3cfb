package agents

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
)

// Limits on an agent's fields.
const (
	MaxNameRunes         = 100
	MaxDescriptionRunes  = 2000
	MaxInstructionsRunes = 20000
	MaxTools             = 500
)

// Connections is what the service needs of the connection service: a connection the
// principal may see (another tenant's is not found).
type Connections interface {
	Get(ctx context.Context, p switchboard.Principal, id string) (connections.Connection, error)
}

// Workflows is what the service needs to check an agent's workflow tools
// (workflow_<name>): the tenant has the workflow, and p may run it (every step's tool
// exists and may be used by p). workflows.Service has it.
type Workflows interface {
	Runnable(ctx context.Context, p switchboard.Principal, name string) error
}

// Input is an agent as a caller gives it, to create or replace one.
type Input struct {
	Name         string
	Description  string
	Instructions string
	Confirm      Confirm
	Approval     Approval
	ToolMode     ToolMode
	RunTools     RunTools
	Catalog      Catalog
	Tools        []ToolInput
}

// ToolInput selects one tool and the connection it runs on. A workflow's tool
// (workflow_<name>) has no connection: its steps name their own.
type ToolInput struct {
	Tool         string
	ConnectionID string
}

// Service manages agents for a principal: it checks who may see and change what,
// validates every field (tools exist, each bound to a connection of the tenant that
// the agent's creator may use, of the tool's provider), and tells subscribers about
// every change.
type Service struct {
	store *Store
	reg   *providers.Registry
	conns Connections
	flows Workflows // set while wiring (SetWorkflows); nil refuses workflow tools

	mu   sync.Mutex
	subs []func(tenant switchboard.TenantID, agentID string)
	// policies caches Policy's answers, which every tool call asks for: dropped
	// for a tenant on each of its changes here, and after policyTTL (another node may
	// have changed them).
	policies map[policyKey]cachedPolicy
	// gens counts each tenant's changes, and epoch the gaps in the feed (which change
	// every tenant): a read that started before a change does not cache what it read.
	gens  map[switchboard.TenantID]uint64
	epoch uint64
	feed  events.Bus // set while wiring (SetFeed); nil tells this process only
}

type policyKey struct {
	tenant switchboard.TenantID
	agent  string
}

type cachedPolicy struct {
	policy  router.Policy
	expires time.Time
}

// policyTTL bounds how long a confirm policy changed on another node goes unseen here
// should its event be lost; the change feed drops it at once otherwise.
const policyTTL = 10 * time.Second

// NewService returns a Service.
func NewService(store *Store, reg *providers.Registry, conns Connections) *Service {
	return &Service{store: store, reg: reg, conns: conns}
}

// SetWorkflows lets agents select saved workflows as tools (workflow_<name>), checked
// at save against w. Call it once, while wiring.
func (s *Service) SetWorkflows(w Workflows) { s.flows = w }

// Subscribe registers fn to be called after every change to an agent, made here or,
// with a feed, on any node (the MCP adapter refreshes that agent's live sessions;
// agentID is "" for a change of the tenant's settings or its users, and tenant is ""
// too after a gap in the feed: anything may have changed). Subscribe while wiring; fn
// must not block.
func (s *Service) Subscribe(fn func(tenant switchboard.TenantID, agentID string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs = append(s.subs, fn)
}

// SetFeed makes the service publish its changes on the change feed and apply every
// node's: cached policies are dropped and subscribers told. A user removed (their
// agents go with them) or given another role changes the tenant's agents too. Call it
// once, while wiring.
func (s *Service) SetFeed(b events.Bus) {
	s.feed = b
	b.Subscribe(func(e events.Event) {
		switch e.Kind {
		case events.Gap:
			s.tell("", "")
		case events.AgentChanged, events.AgentDeleted:
			s.tell(e.Tenant, e.ID)
		case events.TenantMCPSettings, events.UserRemoved, events.UserRoleChanged:
			s.tell(e.Tenant, "")
		}
	})
}

// notify tells every node of a committed change: through the feed when there is one
// (which tells this process too), else this process alone.
func (s *Service) notify(ctx context.Context, kind events.Kind, tenant switchboard.TenantID, agentID string) {
	if s.feed == nil {
		s.tell(tenant, agentID)
		return
	}
	events.PublishAfterCommit(ctx, s.feed, nil, events.Event{Kind: kind, Tenant: tenant, ID: agentID})
}

// tell drops the cached policies of the tenant (of every tenant when it is empty) and
// calls this process's subscribers.
func (s *Service) tell(tenant switchboard.TenantID, agentID string) {
	s.mu.Lock()
	subs := slices.Clone(s.subs)
	for k := range s.policies {
		if tenant == "" || k.tenant == tenant {
			delete(s.policies, k)
		}
	}
	if s.gens == nil {
		s.gens = map[switchboard.TenantID]uint64{}
	}
	if tenant == "" {
		s.epoch++
	} else {
		s.gens[tenant]++
	}
	s.mu.Unlock()
	for _, fn := range subs {
		fn(tenant, agentID)
	}
}

// Create creates an agent acting for p's user. Only users create agents.
func (s *Service) Create(ctx context.Context, p switchboard.Principal, in Input) (Agent, error) {
	if err := asUser(p); err != nil {
		return Agent{}, err
	}
	a := Agent{CreatedBy: p.UserID}
	if err := s.fill(ctx, p, &a, in); err != nil {
		return Agent{}, err
	}
	if err := s.store.Create(ctx, p.TenantID, &a); err != nil {
		return Agent{}, err
	}
	s.notify(ctx, events.AgentChanged, p.TenantID, a.ID)
	return a, nil
}

// Get returns an agent of p's tenant. Users see every agent of their tenant; an
// agent's key sees only its own agent.
func (s *Service) Get(ctx context.Context, p switchboard.Principal, id string) (Agent, error) {
	if p.Kind == switchboard.PrincipalAgent && p.AgentID != id {
		return Agent{}, switchboard.NotFound("agent")
	}
	return s.store.Get(ctx, p.TenantID, id)
}

// List returns the agents of p's tenant (for an agent's key, only its own).
func (s *Service) List(ctx context.Context, p switchboard.Principal) ([]Agent, error) {
	as, err := s.store.List(ctx, p.TenantID)
	if err != nil {
		return nil, err
	}
	if p.Kind != switchboard.PrincipalAgent {
		return as, nil
	}
	out := as[:0]
	for _, a := range as {
		if a.ID == p.AgentID {
			out = append(out, a)
		}
	}
	return out, nil
}

// Update replaces an agent's fields and tools, if it is still at version. Its creator
// and the tenant's admins may; other users are forbidden.
func (s *Service) Update(ctx context.Context, p switchboard.Principal, id string, version int64, in Input) (Agent, error) {
	a, err := s.manageable(ctx, p, id)
	if err != nil {
		return Agent{}, err
	}
	if err := s.fill(ctx, p, &a, in); err != nil {
		return Agent{}, err
	}
	if err := s.store.Update(ctx, p.TenantID, &a, version); err != nil {
		return Agent{}, err
	}
	s.notify(ctx, events.AgentChanged, p.TenantID, a.ID)
	return a, nil
}

// Delete removes an agent; its creator and the tenant's admins may.
func (s *Service) Delete(ctx context.Context, p switchboard.Principal, id string) (Agent, error) {
	a, err := s.manageable(ctx, p, id)
	if err != nil {
		return Agent{}, err
	}
	if err := s.store.Delete(ctx, p.TenantID, id); err != nil {
		return Agent{}, err
	}
	s.notify(ctx, events.AgentDeleted, p.TenantID, id)
	return a, nil
}

// Manageable returns the agent if p may change it (its creator or a tenant admin):
// for minting and listing its API keys.
func (s *Service) Manageable(ctx context.Context, p switchboard.Principal, id string) (Agent, error) {
	return s.manageable(ctx, p, id)
}

func (s *Service) manageable(ctx context.Context, p switchboard.Principal, id string) (Agent, error) {
	if err := asUser(p); err != nil {
		return Agent{}, err
	}
	a, err := s.store.Get(ctx, p.TenantID, id)
	if err != nil {
		return Agent{}, err
	}
	if a.CreatedBy != p.UserID && !p.IsAdmin() {
		return Agent{}, switchboard.Errorf(switchboard.CodeForbidden, "only the agent's creator or a tenant admin may change it")
	}
	return a, nil
}

// Settings returns the tenant's MCP settings.
func (s *Service) Settings(ctx context.Context, p switchboard.Principal) (Settings, error) {
	return s.store.Settings(ctx, p.TenantID)
}

// PutSettings changes the tenant's MCP settings; only admins may.
func (s *Service) PutSettings(ctx context.Context, p switchboard.Principal, st Settings) (Settings, error) {
	if err := asUser(p); err != nil {
		return Settings{}, err
	}
	if !p.IsAdmin() {
		return Settings{}, switchboard.Errorf(switchboard.CodeForbidden, "only a tenant admin may change the MCP settings")
	}
	if !validConfirm(st.Confirm, false) {
		return Settings{}, switchboard.Invalid("confirm", "must be never, destructive or always")
	}
	if !validToolMode(st.ToolMode, false) {
		return Settings{}, switchboard.Invalid("tool_mode", "must be all or search")
	}
	if !validApproval(st.Approval) {
		return Settings{}, switchboard.Invalid("approval", "must be relay or person (empty is relay)")
	}
	if !validRunTools(st.RunTools) {
		return Settings{}, switchboard.Invalid("run_tools", "must be auto, on or off (empty is auto)")
	}
	if !validCatalog(st.Catalog) {
		return Settings{}, switchboard.Invalid("catalog", "must be connected or all (empty is connected)")
	}
	if err := s.store.PutSettings(ctx, p.TenantID, &st); err != nil {
		return Settings{}, err
	}
	s.notify(ctx, events.TenantMCPSettings, p.TenantID, "")
	return st, nil
}

// Policy is the confirm policy that applies to the principal's tool calls: its
// agent's (or the tenant's when the agent inherits it) for an agent's key, the
// tenant's for a user's. The router asks it for every call.
//
// Answers are cached (see policyTTL), so a tool call does not read the database for it.
func (s *Service) Policy(ctx context.Context, p switchboard.Principal) (router.Policy, error) {
	key := policyKey{tenant: p.TenantID}
	if p.Kind == switchboard.PrincipalAgent {
		key.agent = p.AgentID
	}
	now := time.Now()
	s.mu.Lock()
	c, ok := s.policies[key]
	gen, epoch := s.gens[p.TenantID], s.epoch
	s.mu.Unlock()
	if ok && now.Before(c.expires) {
		return c.policy, nil
	}
	st, err := s.store.Settings(ctx, p.TenantID)
	if err != nil {
		return router.Policy{}, err
	}
	policy := router.Policy{Confirm: string(st.Confirm), Approval: string(st.EffectiveApproval())}
	if key.agent != "" {
		a, err := s.store.Get(ctx, p.TenantID, p.AgentID)
		if err != nil {
			return router.Policy{}, err
		}
		policy.Confirm = string(a.EffectiveConfirm(st))
		policy.Approval = string(a.EffectiveApproval(st))
	}
	s.mu.Lock()
	if s.policies == nil {
		s.policies = map[policyKey]cachedPolicy{}
	}
	if s.gens[p.TenantID] == gen && s.epoch == epoch {
		s.policies[key] = cachedPolicy{policy: policy, expires: now.Add(policyTTL)}
	}
	s.mu.Unlock()
	return policy, nil
}

// AgentAndSettings returns an agent of the tenant and the tenant's settings, for the
// MCP adapter (which has authenticated the agent's key).
func (s *Service) AgentAndSettings(ctx context.Context, tenant switchboard.TenantID, id string) (Agent, Settings, error) {
	st, err := s.store.Settings(ctx, tenant)
	if err != nil {
		return Agent{}, Settings{}, err
	}
	if id == "" {
		return Agent{}, st, nil
	}
	a, err := s.store.Get(ctx, tenant, id)
	return a, st, err
}

// AgentExists reports whether the tenant the slug names has the agent, for the agent
// URL's public OAuth metadata (which asks before anyone has authenticated).
func (s *Service) AgentExists(ctx context.Context, tenantSlug, id string) (bool, error) {
	return s.store.ExistsAt(ctx, tenantSlug, id)
}

// fill validates the input and sets the agent's fields from it, p becoming the agent's
// last editor. The tools must exist, be unique, and be bound to a connection of the
// tool's provider that p may see and the agent's creator may use. A private connection
// is bound only by its owner: an admin editing another user's agent may keep a binding
// the agent already has to its creator's private connection (which then stops running,
// see PrivateUser, until its owner saves the agent again), but not add one.
func (s *Service) fill(ctx context.Context, p switchboard.Principal, a *Agent, in Input) error {
	name := strings.TrimSpace(in.Name)
	switch {
	case name == "" || utf8.RuneCountInString(name) > MaxNameRunes:
		return switchboard.Invalid("name", fmt.Sprintf("must be 1 to %d characters", MaxNameRunes))
	case strings.ContainsAny(name, "\r\n\t"):
		return switchboard.Invalid("name", "must be one line")
	case utf8.RuneCountInString(in.Description) > MaxDescriptionRunes:
		return switchboard.Invalid("description", fmt.Sprintf("must be at most %d characters", MaxDescriptionRunes))
	case utf8.RuneCountInString(in.Instructions) > MaxInstructionsRunes:
		return switchboard.Invalid("instructions", fmt.Sprintf("must be at most %d characters", MaxInstructionsRunes))
	case !utf8.ValidString(in.Description) || !utf8.ValidString(in.Instructions):
		return switchboard.Invalid("description", "must be valid UTF-8")
	case !validConfirm(in.Confirm, true):
		return switchboard.Invalid("confirm", "must be never, destructive, always, or empty for the tenant's policy")
	case !validApproval(in.Approval):
		return switchboard.Invalid("approval", "must be relay, person, or empty for the tenant's mode")
	case !validToolMode(in.ToolMode, true):
		return switchboard.Invalid("tool_mode", "must be all, search, or empty for the tenant's mode")
	case !validRunTools(in.RunTools):
		return switchboard.Invalid("run_tools", "must be auto, on, off, or empty for the tenant's setting")
	case !validCatalog(in.Catalog):
		return switchboard.Invalid("catalog", "must be connected, all, or empty for the tenant's setting")
	case len(in.Tools) > MaxTools:
		return switchboard.Invalid("tools", fmt.Sprintf("must hold at most %d tools", MaxTools))
	}
	creator := switchboard.Principal{TenantID: p.TenantID, Kind: switchboard.PrincipalUser, UserID: a.CreatedBy}
	had := make(map[Tool]bool, len(a.Tools))
	for _, t := range a.Tools {
		had[Tool{Tool: t.Tool, ConnectionID: t.ConnectionID}] = true
	}
	tools := make([]Tool, 0, len(in.Tools))
	seen := map[string]bool{}
	for i, ti := range in.Tools {
		field := fmt.Sprintf("tools[%d]", i)
		if seen[ti.Tool] {
			return switchboard.Invalid(field+".tool", fmt.Sprintf("%q is selected twice", ti.Tool))
		}
		seen[ti.Tool] = true
		nc, err := s.noConnectionTool(ctx, p.TenantID, ti.Tool)
		if err != nil {
			return err
		}
		if nc != nil {
			// One of the hub's own tools (a saved workflow, the workflows' management):
			// it runs as the caller, on no connection.
			if nc.Provider.TenantTools != nil { // a saved workflow, run as the agent's creator
				if err := s.checkWorkflow(ctx, creator, field, nc.Info.Name, ti); err != nil {
					return err
				}
			} else if ti.ConnectionID != "" {
				return switchboard.Invalid(field+".connection_id", "must be empty: "+ti.Tool+" runs on no connection")
			}
			tools = append(tools, Tool{Tool: ti.Tool})
			continue
		}
		if strings.TrimSpace(ti.ConnectionID) == "" {
			if t, ok := s.reg.Tool(ti.Tool); ok && connectable(t) {
				// A tool of a provider the person connects with OAuth, selected before
				// any account is: at the agent's URL with the catalog setting "all" its
				// call asks the person to connect one, which it is then bound to.
				tools = append(tools, Tool{Tool: t.Name})
				continue
			}
			return switchboard.Invalid(field+".connection_id", fmt.Sprintf("is required: %s runs on a connection (only the hub's own tools and this tenant's saved workflows take none, and none of them is named so)", ti.Tool))
		}
		c, err := s.conns.Get(ctx, p, ti.ConnectionID)
		if switchboard.CodeOf(err) == switchboard.CodeNotFound {
			return switchboard.Invalid(field+".connection_id", "is not a connection of this tenant that you can see")
		}
		if err != nil {
			return err
		}
		if !c.UsableBy(creator) {
			return switchboard.Invalid(field+".connection_id", "is another user's private connection, which the agent's creator may not use")
		}
		t, err := s.tool(ctx, ti.Tool, c)
		if err != nil {
			return err
		}
		if t == nil {
			if spec, ok := s.reg.Provider(c.Provider); ok && spec.PerConnection() {
				return switchboard.Invalid(field+".tool", fmt.Sprintf("%q is not one of the tools connection %s offers now", ti.Tool, c.ID))
			}
			return switchboard.Invalid(field+".tool", fmt.Sprintf("%q is not a tool of this hub", ti.Tool))
		}
		if c.Provider != t.Provider.Name {
			return switchboard.Invalid(field+".connection_id", fmt.Sprintf("is a %s connection; %s needs a %s connection", c.Provider, t.Name, t.Provider.Name))
		}
		if c.Status == connections.StatusRevoked {
			return switchboard.Invalid(field+".connection_id", "is revoked; reconnect the account first")
		}
		if !c.Shared && c.OwnerUserID != p.UserID && !had[Tool{Tool: t.Name, ConnectionID: c.ID}] {
			return switchboard.Invalid(field+".connection_id", "is another user's private connection: only its owner may bind it to an agent, and an admin may not act through it")
		}
		tools = append(tools, Tool{Tool: t.Name, ConnectionID: c.ID})
	}
	a.Name, a.Description, a.Instructions = name, in.Description, in.Instructions
	a.UpdatedBy = p.UserID
	a.Confirm, a.Approval, a.ToolMode, a.RunTools, a.Catalog, a.Tools = in.Confirm, in.Approval, in.ToolMode, in.RunTools, in.Catalog, tools
	return nil
}

// noConnectionTool finds a tool that runs on no connection by name: one of the hub's
// registered ones, or one of the tenant's own (a saved workflow); nil when there is
// none of that name.
func (s *Service) noConnectionTool(ctx context.Context, tenant switchboard.TenantID, name string) (*providers.Tool, error) {
	if t, ok := s.reg.Tool(name); ok {
		if t.Provider.Connectionless {
			return t, nil
		}
		return nil, nil
	}
	return s.reg.TenantTool(ctx, tenant, name)
}

// checkWorkflow checks a workflow tool the agent selects (tools[i] is field): it has
// no connection, and the workflow is one of the tenant's that the agent's creator may
// run.
func (s *Service) checkWorkflow(ctx context.Context, creator switchboard.Principal, field, name string, ti ToolInput) error {
	if ti.ConnectionID != "" {
		return switchboard.Invalid(field+".connection_id", "must be empty for a workflow: its steps name their own connections")
	}
	if s.flows == nil {
		return switchboard.Invalid(field+".tool", "workflows are not enabled on this server")
	}
	err := s.flows.Runnable(ctx, creator, name)
	switch switchboard.CodeOf(err) {
	case "":
		return nil
	case switchboard.CodeNotFound:
		return switchboard.Invalid(field+".tool", fmt.Sprintf("%q names no saved workflow of this tenant", ti.Tool))
	case switchboard.CodeInvalid, switchboard.CodeForbidden:
		return switchboard.Invalid(field+".tool", fmt.Sprintf("the agent's creator may not run workflow %s: %s", name, switchboard.AsError(err).Message))
	}
	return err
}

// tool finds a tool by name: a registered operation, or one of the connection's own
// when its provider's tools exist per connection (nil when there is none).
func (s *Service) tool(ctx context.Context, name string, c connections.Connection) (*providers.Tool, error) {
	if t, ok := s.reg.Tool(name); ok {
		return t, nil
	}
	t, err := s.reg.ConnectionTool(ctx, c.Ref(), name)
	if err != nil {
		return nil, fmt.Errorf("list the tools of connection %s: %w", c.ID, err)
	}
	return t, nil
}

func asUser(p switchboard.Principal) error {
	if p.Kind == switchboard.PrincipalAgent {
		return switchboard.Errorf(switchboard.CodeForbidden, "an agent's API key cannot manage agents; use a user's key")
	}
	if p.UserID == "" {
		return switchboard.Errorf(switchboard.CodeUnauthorized, "send an API key as Authorization: Bearer <key>")
	}
	return nil
}

// BindConnected binds the agent's tools selected on no connection, whose provider its
// person has connected since, each to the connection bind gives (the connection the
// builder would bind: the one the tool is offered on first), for the MCP adapter. The
// agent's URLs hear of the change.
func (s *Service) BindConnected(ctx context.Context, tenant switchboard.TenantID, agentID string, bind map[string]string) error {
	bound, err := s.store.BindUnbound(ctx, tenant, agentID, bind)
	if err != nil || !bound {
		return err
	}
	s.notify(ctx, events.AgentChanged, tenant, agentID)
	return nil
}

// connectable reports whether a tool runs on a connection of a provider its person
// connects with OAuth (and so may be selected before one is connected).
func connectable(t *providers.Tool) bool {
	p := t.Provider
	return p != nil && p.OAuth != nil && !p.Connectionless && !p.PerConnection()
}
