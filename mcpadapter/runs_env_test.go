package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/events"
	hubtools "github.com/switchboard-hub/switchboard/providers/hub"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/notesfake"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/tenants"
	"github.com/switchboard-hub/switchboard/workflows"
)

// policies is a confirm policy per principal, "never" unless set.
type policies struct {
	mu       sync.Mutex
	m        map[string]string
	approval map[string]string
	// once, when set, runs on the next read (and is cleared): a test's hook into when
	// and with which context the policy is read.
	once func(ctx context.Context) error
}

func (p *policies) set(pr switchboard.Principal, policy string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m[string(pr.TenantID)+"|"+pr.ID()] = policy
}

// Policy answers like the agents service: from the database's point of view, a read
// with an ended context fails.
func (p *policies) Policy(ctx context.Context, pr switchboard.Principal) (router.Policy, error) {
	p.mu.Lock()
	once := p.once
	p.once = nil
	p.mu.Unlock()
	if once != nil {
		if err := once(ctx); err != nil {
			return router.Policy{}, err
		}
	}
	if err := ctx.Err(); err != nil {
		return router.Policy{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pol := router.Policy{Confirm: router.ConfirmNever, Approval: p.approval[string(pr.TenantID)+"|"+pr.ID()]}
	if v, ok := p.m[string(pr.TenantID)+"|"+pr.ID()]; ok {
		pol.Confirm = v
	}
	return pol, nil
}

// setApproval sets the principal's approval mode.
func (p *policies) setApproval(pr switchboard.Principal, mode string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.approval[string(pr.TenantID)+"|"+pr.ID()] = mode
}

// memAudit keeps the audit events the router records.
type memAudit struct {
	mu     sync.Mutex
	events []audit.Event
}

func (m *memAudit) Record(e audit.Event) {
	if e.Outcome == audit.OutcomeInFlight {
		return // the call's completed row, of the same id, follows: that one is kept
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, e)
}

// rows lists the events recorded so far as "kind outcome tool", in order.
func (m *memAudit) rows() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.events))
	for _, e := range m.events {
		out = append(out, string(e.Kind)+" "+e.Outcome+" "+e.Tool)
	}
	return out
}

// count is how many events were recorded so far.
func (m *memAudit) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.events)
}

// rowsFrom waits until n events were recorded after the first from (calls that end in
// the background record theirs later), and returns them as "kind outcome tool".
func (m *memAudit) rowsFrom(t *testing.T, from, n int) []string {
	t.Helper()
	testwait.Until(t, fmt.Sprintf("%d audit events after the first %d", n, from), func() bool { return m.count() >= from+n })
	return m.rows()[from:]
}

// confirmations lists the audit rows of confirmations recorded so far, as "kind tool".
func (m *memAudit) confirmations() []string {
	var out []string
	for _, row := range m.rows() {
		if strings.HasPrefix(row, "confirmation_") {
			out = append(out, strings.Replace(row, " ok ", " ", 1))
		}
	}
	return out
}

// runsEnv is an adapter with the runs extension over a real database, router and
// notes upstream: tenant alpha (users ann and bob, one shared notes connection) and
// tenant beta (user bea, its own notes connection).
type runsEnv struct {
	srv      *httptest.Server
	adapter  *Adapter // srv's
	reg      *providers.Registry
	up       *notesfake.Upstream
	exec     *runs.Executor
	policy   *policies
	audit    *memAudit
	ann, bob switchboard.Principal
	bea      switchboard.Principal
	connA    string // alpha's notes connection
	// stateKey keys the requestStates of every node, as serve derives it from the keyring.
	stateKey []byte
	// node starts another adapter (a node of the hub) on the same database, router and
	// runs, with the session store and relay given.
	node func(t *testing.T, store mcptransport.SessionStore, relay mcptransport.Relay) *httptest.Server
	// workflows runs the saved workflows; the adapters newWorkflowsEnv starts serve
	// them (serveWorkflows).
	workflows      *workflows.Service
	serveWorkflows bool
	// adapters are the nodes' adapters, in the order node started them (e.srv's first).
	adapters []*Adapter
}

const (
	keyAnn = "key-ann"
	keyBob = "key-bob"
	keyBea = "key-bea"
)

func newRunsEnv(t *testing.T, db *gorm.DB) *runsEnv {
	t.Helper()
	return newRunsEnvWith(t, db, nil, nil)
}

// newRunsEnvWith is newRunsEnv with an agents service and more keys; extra maps keys
// to principals given the tenants' principals (ann, bea) and alpha's connection id.
func newRunsEnvWith(t *testing.T, db *gorm.DB, ag Agents, extra func(e *runsEnv) keys) *runsEnv {
	t.Helper()
	return buildRunsEnv(t, db, ag, extra, false)
}

// newWorkflowsEnv is newRunsEnv with workflows as serve wires them: the runs execute on
// the workflows Hub, and every scope serves the workflows extension.
func newWorkflowsEnv(t *testing.T, db *gorm.DB) *runsEnv {
	t.Helper()
	return buildRunsEnv(t, db, nil, nil, true)
}

// feed, when given, is the executor's change feed (runs.Options.Feed).
func buildRunsEnv(t *testing.T, db *gorm.DB, ag Agents, extra func(e *runsEnv) keys, withWorkflows bool, feed ...events.Bus) *runsEnv {
	t.Helper()
	ctx := context.Background()
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	e := &runsEnv{up: notesfake.New(t), policy: &policies{m: map[string]string{}, approval: map[string]string{}}, stateKey: kr.Derive("request-state")}
	reg := providers.NewRegistry()
	e.reg = reg
	if err := reg.Register(notesfake.Spec(e.up.Server.URL)); err != nil {
		t.Fatal(err)
	}
	connStore := connections.NewStore(db, kr)
	e.audit = &memAudit{}
	ro := router.Options{Registry: reg, Connections: connections.NewService(connStore, reg, &providers.Transports{}, nil), Audit: e.audit, Policies: e.policy}
	if ra, ok := ag.(router.Agents); ok {
		ro.Agents = ra // what the agents' keys may call
	}
	rtr := router.New(ro)
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	var conns []string
	newTenant := func(slug string, emails ...string) []switchboard.Principal {
		slug += "-" + switchboard.RandomToken(4)
		ten, err := ts.CreateTenant(ctx, slug, slug)
		if err != nil {
			t.Fatal(err)
		}
		var ps []switchboard.Principal
		for _, email := range emails {
			u, err := ts.CreateUser(ctx, ten.ID, email, switchboard.RoleMember)
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, switchboard.Principal{TenantID: ten.ID, TenantSlug: slug, Kind: switchboard.PrincipalUser, UserID: u.ID, Role: switchboard.RoleMember})
		}
		c := connections.Connection{Provider: "notes", OwnerUserID: ps[0].UserID, AuthKind: providers.AuthAPIKey, AccountID: "acct", AccountLabel: "notes-" + slug, Shared: true}
		if err := connStore.Create(ctx, ten.ID, &c, connections.Credentials{AccessToken: notesfake.Token}); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c.ID)
		return ps
	}
	alpha := newTenant("alpha", "ann@alpha.test", "bob@alpha.test")
	beta := newTenant("beta", "bea@beta.test")
	e.ann, e.bob, e.bea = alpha[0], alpha[1], beta[0]
	e.connA = conns[0]
	var adapter *Adapter
	// Workflow runs go to the engine, every other run to the router, as serve wires them.
	wfStore := workflows.NewStore(db, kr)
	hub := &workflows.Hub{Router: rtr, Registry: reg, Engine: workflows.NewEngine(workflows.EngineOptions{Store: wfStore, Caller: rtr, Catalog: rtr})}
	var bus events.Bus
	if len(feed) > 0 {
		bus = feed[0]
	}
	e.exec = runs.NewExecutor(runs.Options{Store: runs.NewStore(db, kr), Runner: hub, Registry: reg, Feed: bus,
		Describe:    func(err error) string { return adapter.DescribeError(err) },
		ApprovalURL: func(id string) string { return "https://hub.test" + ApprovalPath + id }})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		e.exec.Close(ctx)
	})
	e.serveWorkflows = withWorkflows
	auth := keys{keyAnn: e.ann, keyBob: e.bob, keyBea: e.bea}
	if extra != nil {
		for k, p := range extra(e) {
			auth[k] = p
		}
	}
	e.workflows = &workflows.Service{Store: wfStore, Runs: e.exec, Router: rtr}
	// The tenants keep each workflow's tool workflow_<name> (their setting) beside its
	// run_flow__ trio: the tests of this environment call it.
	for _, ten := range []switchboard.TenantID{e.ann.TenantID, e.bea.TenantID} {
		if err := wfStore.SetToolAliases(ctx, ten, true); err != nil {
			t.Fatal(err)
		}
	}
	hub.Service = e.workflows
	// As serve registers them; without workflows, the hub's tools are the runs tools.
	ht := &hubtools.Tools{Runs: e.exec, Registry: reg, Connections: rtr, Search: rtr}
	if withWorkflows {
		if err := reg.Register(e.workflows.Spec()); err != nil {
			t.Fatal(err)
		}
		ht.Workflows = e.workflows
	}
	if err := ht.Register(reg); err != nil {
		t.Fatal(err)
	}
	e.node = func(t *testing.T, store mcptransport.SessionStore, relay mcptransport.Relay) *httptest.Server {
		exts := []Extension{RunsExtension(RunsOptions{Runs: e.exec, TaskPoll: 20 * time.Millisecond, StateKey: e.stateKey, Answer: hub.Answer, Flows: e.workflows})}
		if e.serveWorkflows {
			exts = append(exts, FlowsExtension(e.workflows, nil))
		}
		a := New(Options{
			Router: rtr, Auth: auth, Agents: ag, PublicURL: "https://hub.test", Sessions: store, Relay: relay, Extensions: exts,
		})
		if adapter == nil {
			adapter = a
		}
		e.adapters = append(e.adapters, a)
		t.Cleanup(func() { a.Close(context.Background()) })
		srv := httptest.NewServer(a)
		t.Cleanup(srv.Close)
		return srv
	}
	e.srv = e.node(t, nil, nil)
	e.adapter = adapter
	return e
}

// deletes counts the DELETEs the notes upstream received.
func (e *runsEnv) deletes() int {
	n := 0
	for _, r := range e.up.Requests() {
		if r.Method == "DELETE" {
			n++
		}
	}
	return n
}

// elicitor answers elicitation requests with a fixed action and records them.
type elicitor struct {
	mu       sync.Mutex
	action   mcp.ElicitationResponseAction
	content  any
	messages []string
	fail     error // the client's error to every form, when set
}

func (el *elicitor) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	el.mu.Lock()
	defer el.mu.Unlock()
	el.messages = append(el.messages, req.Params.Message)
	if el.fail != nil {
		return nil, el.fail
	}
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: el.action, Content: el.content}}, nil
}

func (el *elicitor) asked() []string {
	el.mu.Lock()
	defer el.mu.Unlock()
	return append([]string(nil), el.messages...)
}

// connect opens a client session as the key's principal; with an elicitor the client
// declares elicitation. version is the protocol version to ask for.
func (e *runsEnv) connect(t *testing.T, p switchboard.Principal, key, version string, el *elicitor) *client.Client {
	t.Helper()
	return e.connectTo(t, "/mcp/"+p.TenantSlug, key, version, el)
}

// connectTo is connect at a path of the adapter (an agent URL).
func (e *runsEnv) connectTo(t *testing.T, path, key, version string, el *elicitor) *client.Client {
	t.Helper()
	var opts []client.ClientOption
	if el != nil {
		opts = append(opts, client.WithElicitationHandler(el))
	}
	tr, err := transport.NewStreamableHTTP(e.srv.URL+path, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "runs-test", Version: "1"}
	if el != nil {
		init.Params.Capabilities.Elicitation = &mcp.ElicitationCapability{Form: &struct{}{}}
	}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// structured decodes a result's structured content.
func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
}

// waitRun waits for a run to end.
func (e *runsEnv) waitRun(t *testing.T, p switchboard.Principal, id string) runs.View {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := e.exec.Wait(ctx, p, id, 20*time.Millisecond)
	if err != nil {
		t.Fatalf("wait for run %s: %v", id, err)
	}
	return v
}
