package mcpadapter

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/hub"
	"github.com/switchboard-hub/switchboard/router"
)

// scope is the MCP server of one endpoint of one principal: the tenant URL of a user,
// or the agent URL of an agent. Its tool list is exactly the tools that principal may
// call (at an agent URL, the agent's tools, each on the connection it is bound to).
type scope struct {
	adapter   *Adapter
	principal switchboard.Principal
	agentID   string
	mcp       *server.MCPServer
	// ep is the endpoint's transport on this node: mcp-go's StreamableHTTPServer for
	// mcp, the streams and the sessions this node holds.
	ep *mcptransport.Endpoint

	refreshMu   sync.Mutex
	fingerprint string      // guarded by refreshMu
	built       atomic.Bool // a tool list has been set

	// state is what the last refresh built; handlers read it without locks.
	state atomic.Pointer[scopeState]

	lastUsed atomic.Int64 // unix nanoseconds
	inFlight atomic.Int64 // open requests, including long-lived GET streams

	// list is the encoded tools/list answer (tools_list_cache.go); listCacheable is
	// false when the server has hooks a tools/list must run.
	list          toolsList
	listCacheable bool
	// plain is what the adapter's own answer to a plain tools/call needs of the
	// server (plain_calls.go).
	plain plainServer
	// subs are the resources the scope's sessions subscribed to on this node.
	subs subscriptions
}

// scopeState is one refresh's view of the scope.
type scopeState struct {
	hub   map[string]*hubTool // hub tools by name
	order []string            // hub tool names in registry order
	// handler runs a call of any of the hub tools (callHub, wrapped by the extensions
	// and instrument): one per refresh, not one per tool.
	handler server.ToolHandlerFunc
	mode    agents.ToolMode
	agent   *agents.Agent          // at an agent URL
	index   *providers.SearchIndex // in search mode
	// overBudget is the number of hub tools of a tenant URL served in search mode
	// because they exceed the tool budget (0 otherwise), for the instructions.
	overBudget int
	// plain are the names of the listed tools a plain tools/call of which the adapter
	// answers itself (plain_calls.go): hub tools the server runs with handler.
	plain map[string]bool
	// remote are the prompts and resources of the remote servers whose tools the scope
	// lists (remote_content.go).
	remote remoteState
}

// scopeKey names a principal's scope at an endpoint. An agent's keys each get their
// own: what an agent may run differs by key (only keys its private connections' owner
// created run on them, see agents.Service.PrivateUser).
func scopeKey(p switchboard.Principal, agentID string) string {
	key := string(p.TenantID) + "|" + p.ID() + "|" + agentID
	if p.Kind == switchboard.PrincipalAgent {
		key += "|" + p.KeyID
	}
	return key
}

// Scope returns the scope as extensions see it.
func (s *scope) Scope() Scope {
	sc := Scope{Principal: s.principal, AgentID: s.agentID, s: s}
	if st := s.state.Load(); st != nil {
		sc.Agent = st.agent
	}
	return sc
}

// scope returns the principal's scope at the endpoint, building it on first use. The
// scope is returned in use (inFlight counted under the adapter's lock, so Sweep cannot
// close it between here and serve); the caller must call done.
func (a *Adapter) scope(ctx context.Context, p switchboard.Principal, agentID string) (*scope, error) {
	key := scopeKey(p, agentID)
	a.mu.Lock()
	s, ok := a.scopes[key]
	if !ok {
		s = a.newScope(p, agentID)
		a.scopes[key] = s
	}
	s.inFlight.Add(1)
	a.mu.Unlock()
	if err := s.ensure(ctx); err != nil {
		s.done()
		// A scope that never built (an unknown agent, a database failure) is dropped
		// with its server, unless another request is using it.
		drop := false
		a.mu.Lock()
		if a.scopes[key] == s && !s.built.Load() && s.inFlight.Load() == 0 {
			delete(a.scopes, key)
			drop = true
		}
		a.mu.Unlock()
		if drop {
			s.close(context.Background())
		}
		return nil, err
	}
	return s, nil
}

func (a *Adapter) newScope(p switchboard.Principal, agentID string) *scope {
	s := &scope{adapter: a, principal: p, agentID: agentID}
	path := Prefix + p.TenantSlug
	instructions := "Tools of the SaaS accounts connected to Switchboard for tenant " + p.TenantSlug +
		". Tool names are {provider}_{operation}. Where a tool takes a `connection` argument, pick the account by its label."
	if agentID != "" {
		path += "/agents/" + agentID
		instructions = "Tools of a Switchboard agent of tenant " + p.TenantSlug + ", each bound to one connected account." +
			" The prompt " + instructionsPrompt + " holds the agent's instructions."
	}
	opts := []server.ServerOption{
		server.WithToolCapabilities(true),
		server.WithPromptCapabilities(true),
		server.WithResourceCapabilities(true, true),
		server.WithLogging(),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(promptCompleter{s}),
		server.WithResourceCompletionProvider(resourceCompleter{s}),
		server.WithRecovery(),
		server.WithResourceRecovery(),
		server.WithResourceHandlerMiddleware(markNotFound),
		server.WithInstructions(instructions),
		server.WithPaginationLimit(a.opts.ListPageSize),
	}
	opts = append(opts, a.telemetryOptions()...)
	for _, e := range a.opts.Extensions {
		opts = append(opts, e.ServerOptions...)
	}
	s.ep = mcptransport.NewEndpoint(mcptransport.EndpointOptions{Principal: p, Path: path, Held: &a.held,
		EventsPerStream: eventsPerStream, Retry: a.opts.StreamRetry, Log: a.opts.StreamLog, Now: a.opts.Now, Logger: a.opts.Logger})
	opts = append(opts, s.ep.ServerOption(), s.levelHooks(), s.instructionsHook(instructions), versionCapabilities(), s.subscriptionHooks())
	s.mcp = server.NewMCPServer("switchboard", a.opts.Version, opts...)
	s.ep.Attach(s.mcp)
	s.listCacheable = listCacheable(s.mcp, a.ownBeforeAny())
	s.plain = plainServerOf(s.mcp, s.ep.HTTP)
	s.state.Store(&scopeState{mode: agents.ToolModeAll})
	s.lastUsed.Store(time.Now().UnixNano())
	return s
}

// eventsPerStream bounds the events a scope keeps per SSE stream for resumption.
const eventsPerStream = 256

// ensure builds the tool list once.
func (s *scope) ensure(ctx context.Context) error {
	if s.built.Load() {
		return nil
	}
	return s.refresh(ctx)
}

// refresh rebuilds the tool list from the principal's connections (and, at an agent
// URL, the agent's selection) and replaces the server's tools, prompts and resources
// when they changed (mcp-go then notifies the live sessions with list_changed).
func (s *scope) refresh(ctx context.Context) error {
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	a := s.adapter
	bindings, err := a.opts.Router.Tools(ctx, s.principal)
	if err != nil {
		return err
	}
	st := &scopeState{mode: agents.ToolModeAll, hub: make(map[string]*hubTool, len(bindings))}
	fp := []string{"v2"}
	runTools := true // without an agents service there are no settings to narrow the list
	if a.opts.Agents != nil {
		agent, settings, err := a.opts.Agents.AgentAndSettings(ctx, s.principal.TenantID, s.agentID)
		if err != nil {
			return err
		}
		st.mode = settings.ToolMode
		runTools = settings.EffectiveRunTools().Serves(settings.Confirm)
		if s.agentID != "" {
			st.agent = &agent
			st.mode = agent.EffectiveToolMode(settings)
			runTools = agent.EffectiveRunTools(settings).Serves(agent.EffectiveConfirm(settings))
			fp = append(fp, fmt.Sprintf("agent=%s@%d", agent.ID, agent.Version))
		}
		catalog := settings.EffectiveCatalog()
		if st.agent != nil {
			catalog = st.agent.EffectiveCatalog(settings)
			if err := s.bindConnected(ctx, st.agent, bindings); err != nil {
				return err
			}
		}
		catalogAll := catalog == agents.CatalogAll && a.opts.ConnectLinks != nil
		if catalogAll {
			// The tools of the providers the caller has not connected, each asking the
			// person to connect when called (at an agent URL, those the agent selected).
			bindings = append(bindings, a.opts.Router.Unconnected(bindings)...)
			fp = append(fp, "catalog=all")
		}
		if n := onConnections(bindings); s.agentID == "" && (settings.UpdatedAt.IsZero() || catalogAll) && a.opts.ToolBudget > 0 && n > a.opts.ToolBudget {
			// A tenant that never chose a tool mode, or that offers its whole catalog,
			// with more tools than a list should hold: its tenant URL serves them
			// through search (the hub's own stay listed beside the search tools, and
			// are not counted).
			st.mode, st.overBudget = agents.ToolModeSearch, n
		}
	} else if s.agentID != "" {
		return switchboard.NotFound("agent")
	}
	bindings = modeBindings(scopeBindings(bindings, st.agent, runTools), st.mode)
	fp = append(fp, "mode="+string(st.mode))
	sc := s.Scope()
	sc.Agent = st.agent // the agent as just read, not as last built
	var handler server.ToolHandlerFunc = s.callHub
	for _, e := range a.opts.Extensions {
		if e.WrapTool != nil {
			handler = e.WrapTool(sc, handler)
		}
	}
	st.handler = s.roundTrips(s.instrument(handler))
	// The fingerprint keeps a digest of the tools and their connections, not the text.
	parts := make([]string, 0, len(bindings))
	for _, b := range bindings {
		t, err := a.hubTool(b)
		if err != nil {
			return err
		}
		st.hub[b.Tool.Name] = t
		st.order = append(st.order, b.Tool.Name)
		refs := make([]string, 0, len(b.Connections))
		for _, c := range b.Connections {
			refs = append(refs, fmt.Sprintf("%s=%s/%t", c.ID, c.Label, c.NeedsReconnect))
		}
		part := b.Tool.Name + ":" + strings.Join(refs, ",")
		if b.Tool.Provider.TenantTools != nil {
			// A tenant's own tool (a saved workflow) keeps its name when saved again
			// with other parameters: its clients must hear of the change.
			part += ":" + toolDigest(t.tool())
		}
		parts = append(parts, part)
	}
	slices.Sort(parts)
	fp = append(fp, digest(parts))
	if st.remote, err = s.remoteContent(ctx, bindings); err != nil {
		return err
	}
	fp = append(fp, st.remote.digest...)

	var mgmt []server.ServerTool
	var resources []server.ServerResource
	var templates []server.ServerResourceTemplate
	var prompts []server.ServerPrompt
	for _, e := range a.opts.Extensions {
		if e.Tools != nil && (runTools || !e.RunTools) {
			ts, err := e.Tools(ctx, sc)
			if err != nil {
				return fmt.Errorf("tools of extension %s: %w", e.Name, err)
			}
			mgmt = append(mgmt, ts...)
		}
		if e.Resources != nil {
			rs, err := e.Resources(ctx, sc)
			if err != nil {
				return fmt.Errorf("resources of extension %s: %w", e.Name, err)
			}
			resources = append(resources, rs...)
		}
		if e.ResourceTemplates != nil {
			ts, err := e.ResourceTemplates(ctx, sc)
			if err != nil {
				return fmt.Errorf("resource templates of extension %s: %w", e.Name, err)
			}
			templates = append(templates, ts...)
		}
		if e.Prompts != nil {
			ps, err := e.Prompts(ctx, sc)
			if err != nil {
				return fmt.Errorf("prompts of extension %s: %w", e.Name, err)
			}
			for _, p := range ps {
				// An extension's prompt may ask its client what it needs (providers.Caller).
				p.Handler = s.promptRoundTrips(p.Handler)
				prompts = append(prompts, p)
			}
		}
	}
	for _, t := range mgmt {
		fp = append(fp, "mgmt:"+t.Tool.Name+"\x00"+toolDigest(t.Tool))
	}
	for _, r := range resources {
		fp = append(fp, "res:"+r.Resource.URI)
	}
	for _, t := range templates {
		fp = append(fp, "tpl:"+t.Template.URITemplate.Raw())
	}
	for _, p := range prompts {
		fp = append(fp, "eprompt:"+jsonDigest(p.Prompt))
	}
	if st.agent != nil {
		fp = append(fp, "prompt:"+st.agent.Name+"\x00"+st.agent.Description+"\x00"+st.agent.Instructions)
	}
	fingerprint := digest(fp)
	if fingerprint == s.fingerprint && s.built.Load() {
		return nil
	}

	for i := range mgmt {
		mgmt[i] = a.listedAs(mgmt[i])
	}
	listed := mgmt
	if st.mode == agents.ToolModeSearch {
		// The search tools stand for the tools that run on a connection; those that
		// run on none (the search tools, the hub's own, saved workflows) are listed.
		st.index = newSearchIndex(st)
		var direct []server.ServerTool
		for _, name := range st.order {
			if t := st.hub[name]; t.binding.Tool.Provider.Connectionless {
				direct = append(direct, server.ServerTool{Tool: t.tool(), Handler: st.handler})
			}
		}
		listed = slices.Concat(direct, listed)
	} else {
		hubTools := make([]server.ServerTool, 0, len(st.order)+len(mgmt))
		for _, name := range st.order {
			hubTools = append(hubTools, server.ServerTool{Tool: st.hub[name].tool(), Handler: st.handler})
		}
		listed = append(hubTools, listed...)
		st.plain = plainTools(st, mgmt)
	}
	s.state.Store(st)
	s.mcp.SetTools(listed...)
	s.list.toolsChanged()
	s.mcp.SetPrompts(slices.Concat(s.prompts(st), prompts, st.remote.listed)...)
	s.mcp.SetResources(slices.Concat(s.resources(), resources, st.remote.resources)...)
	s.mcp.SetResourceTemplates(slices.Concat(s.resourceTemplates(), templates, st.remote.templates)...)
	s.fingerprint = fingerprint
	s.built.Store(true)
	return nil
}

// digest is a fixed-size digest of parts (each ended by a NUL), for the fingerprint a
// scope keeps between refreshes.
func digest(parts []string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return string(h.Sum(nil))
}

// toolDigest is a digest of a tool's definition as tools/list serves it (description,
// schemas, annotations): a workflow saved again with other parameters keeps its name
// but changes its tool, and its clients must hear of it (list_changed).
func toolDigest(t mcp.Tool) string { return jsonDigest(t) }

// jsonDigest is a digest of v as served (a tool's, prompt's or resource's definition).
func jsonDigest(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "unmarshalable:" + err.Error() // never the same as a served definition
	}
	return digest([]string{string(b)})
}

// onConnections counts the tools that run on a connection.
func onConnections(bindings []router.Binding) int {
	n := 0
	for _, b := range bindings {
		if !b.Tool.Provider.Connectionless {
			n++
		}
	}
	return n
}

// scopeBindings are the tools a scope serves of the principal's: at an agent URL the
// agent's selection and the ambient tools (agentBindings), else all of them; without
// the tools of background runs where the run-tools setting leaves them out.
func scopeBindings(all []router.Binding, agent *agents.Agent, runTools bool) []router.Binding {
	if agent != nil {
		all = agentBindings(all, *agent)
	}
	if runTools {
		return all
	}
	out := all[:0:0]
	for _, b := range all {
		if b.Tool.Provider.Name != hub.Provider {
			out = append(out, b)
		}
	}
	return out
}

// agentBindings narrows the principal's bindings to the agent's tools, each on the
// connection it is bound to (a tool that runs on no connection, selected on none),
// followed by the ambient tools (Spec.Ambient), which every agent has. A tool selected
// on no connection is served only while its provider is not connected (among all with
// the catalog setting "all"). A tool whose
// connection is gone (deleted, revoked, or no longer usable by the agent's creator) is
// left out.
func agentBindings(all []router.Binding, agent agents.Agent) []router.Binding {
	byName := make(map[string]router.Binding, len(all))
	for _, b := range all {
		byName[b.Tool.Name] = b
	}
	out := make([]router.Binding, 0, len(agent.Tools))
	for _, t := range agent.Tools {
		b, ok := byName[t.Tool]
		if !ok || b.Tool.Provider.Ambient {
			continue
		}
		if b.Tool.Provider.Connectionless {
			if t.ConnectionID == "" {
				out = append(out, b)
			}
			continue
		}
		if t.ConnectionID == "" && b.Unconnected() {
			// Selected before its provider was connected, listed by the catalog
			// setting "all": a call asks the person to connect.
			out = append(out, b)
			continue
		}
		for _, c := range b.Connections {
			if c.ID == t.ConnectionID {
				out = append(out, router.Binding{Tool: b.Tool, Connections: []router.ConnectionRef{c}})
				break
			}
		}
	}
	for _, b := range all {
		if b.Tool.Provider.Ambient {
			out = append(out, b)
		}
	}
	return out
}

// hubTool returns one of the scope's hub tools by name.
func (s *scope) hubTool(name string) (*hubTool, bool) {
	t, ok := s.state.Load().hub[name]
	return t, ok
}

// serve hands a request to the scope's server; the scope was taken in use by
// Adapter.scope, and serve gives it back.
func (s *scope) serve(w http.ResponseWriter, r *http.Request, p switchboard.Principal) {
	defer s.done()
	s.lastUsed.Store(time.Now().UnixNano())
	s.adapter.serveSession(w, r, s, p)
}

// done ends one use of the scope.
func (s *scope) done() {
	s.lastUsed.Store(time.Now().UnixNano())
	s.inFlight.Add(-1)
}

func (s *scope) idle(now time.Time, timeout time.Duration) bool {
	return s.inFlight.Load() == 0 && now.Sub(time.Unix(0, s.lastUsed.Load())) > timeout
}

// close ends the scope's sessions on this node.
func (s *scope) close(ctx context.Context) { s.ep.Close(ctx) }

// agentBinder binds an agent's tools selected on no connection once their provider is
// connected (agents.Service.BindConnected).
type agentBinder interface {
	BindConnected(ctx context.Context, tenant switchboard.TenantID, agentID string, bind map[string]string) error
}

// bindConnected binds the agent's tools selected on no connection whose provider its
// person has connected since (from the conversation, or on the Integrations page) to
// the connection the builder would: the first the tool is offered on. The agent read
// is changed in place, so this build serves them on it.
func (s *scope) bindConnected(ctx context.Context, agent *agents.Agent, all []router.Binding) error {
	binder, ok := s.adapter.opts.Agents.(agentBinder)
	if !ok {
		return nil
	}
	byName := make(map[string]router.Binding, len(all))
	for _, b := range all {
		byName[b.Tool.Name] = b
	}
	bind := map[string]string{}
	tools := slices.Clone(agent.Tools)
	for i, t := range tools {
		b, ok := byName[t.Tool]
		if t.ConnectionID != "" || !ok || b.Tool.Provider.Connectionless || len(b.Connections) == 0 {
			continue
		}
		bind[t.Tool] = b.Connections[0].ID
		tools[i].ConnectionID = b.Connections[0].ID
	}
	if len(bind) == 0 {
		return nil
	}
	if err := binder.BindConnected(ctx, s.principal.TenantID, agent.ID, bind); err != nil {
		return fmt.Errorf("bind the agent's tools to their new connections: %w", err)
	}
	agent.Tools = tools
	return nil
}
