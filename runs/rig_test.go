package runs

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/notesfake"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/tenants"
)

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

func (m *memAudit) toolCalls() []audit.Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []audit.Event
	for _, e := range m.events {
		if e.Kind == audit.KindToolCall {
			out = append(out, e)
		}
	}
	return out
}

// policies is a confirm policy per principal (never and relay unless set).
type policies struct {
	mu sync.Mutex
	m  map[string]router.Policy
}

func (p *policies) set(pr switchboard.Principal, pol router.Policy) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m[pr.ID()] = pol
}

func (p *policies) Policy(_ context.Context, pr switchboard.Principal) (router.Policy, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pol, ok := p.m[pr.ID()]; ok {
		return pol, nil
	}
	return router.Policy{Confirm: router.ConfirmNever}, nil
}

// selections are the tools each agent selected (by agent id), for the router: an
// agent's key runs on shared connections only.
type selections struct {
	mu sync.Mutex
	m  map[string][]router.Selected
}

func (s *selections) set(agentID string, tools ...router.Selected) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[agentID] = tools
}

func (s *selections) PrivateUser(_ context.Context, p switchboard.Principal) (string, error) {
	if p.Kind != switchboard.PrincipalAgent {
		return p.UserID, nil
	}
	return "", nil
}

func (s *selections) Selection(_ context.Context, p switchboard.Principal) ([]router.Selected, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[p.AgentID], nil
}

// kinds lists the kinds and tools of the events recorded so far, in order, leaving
// out the connection events the rig's set-up records.
func (m *memAudit) kinds() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, e := range m.events {
		if strings.HasPrefix(string(e.Kind), "connection_") {
			continue
		}
		out = append(out, string(e.Kind)+" "+e.Outcome+" "+e.Tool+" "+e.Principal)
	}
	return out
}

// rig is two tenants (a with users ann and bob, b with user bea), each with a shared
// notes connection, a real router on the database, and an executor.
type rig struct {
	db       *gorm.DB
	kr       keyring.Keyring
	store    *Store
	exec     *Executor
	up       *notesfake.Upstream
	reg      *providers.Registry
	router   *router.Router
	audit    *memAudit
	policy   *policies
	agents   *selections
	conns    *connections.Service
	ann, bob switchboard.Principal
	bea      switchboard.Principal
	connA    string
	connB    string
}

func newRig(t testing.TB, db *gorm.DB, tune func(*Options)) *rig {
	t.Helper()
	return newRigWith(t, db, tune)
}

// newRigWith is newRig with more providers in the registry.
func newRigWith(t testing.TB, db *gorm.DB, tune func(*Options), extra ...providers.Spec) *rig {
	t.Helper()
	ctx := context.Background()
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	up := notesfake.New(t)
	reg := providers.NewRegistry()
	for _, spec := range append([]providers.Spec{notesfake.Spec(up.Server.URL)}, extra...) {
		if err := reg.Register(spec); err != nil {
			t.Fatal(err)
		}
	}
	connStore := connections.NewStore(db, kr)
	rec := &memAudit{}
	svc := connections.NewService(connStore, reg, &providers.Transports{}, rec)
	pol := &policies{m: map[string]router.Policy{}}
	agents := &selections{m: map[string][]router.Selected{}}
	rtr := router.New(router.Options{Registry: reg, Connections: svc, Audit: rec, Policies: pol, Agents: agents})
	r := &rig{db: db, kr: kr, store: NewStore(db, kr), up: up, reg: reg, router: rtr, audit: rec, policy: pol, conns: svc, agents: agents}

	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	newTenant := func(slug string, emails ...string) ([]switchboard.Principal, string) {
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
			ps = append(ps, switchboard.Principal{TenantID: ten.ID, TenantSlug: slug, Kind: switchboard.PrincipalUser, UserID: u.ID, Role: switchboard.RoleMember, KeyID: "key_" + u.ID})
		}
		c := connections.Connection{Provider: "notes", OwnerUserID: ps[0].UserID, AuthKind: providers.AuthAPIKey, AccountID: "acct-1", AccountLabel: "notes-account", Shared: true}
		if err := connStore.Create(ctx, ten.ID, &c, connections.Credentials{AccessToken: notesfake.Token}); err != nil {
			t.Fatal(err)
		}
		return ps, c.ID
	}
	var pa, pb []switchboard.Principal
	pa, r.connA = newTenant("alpha", "ann@alpha.test", "bob@alpha.test")
	pb, r.connB = newTenant("beta", "bea@beta.test")
	r.ann, r.bob, r.bea = pa[0], pa[1], pb[0]
	r.exec = r.newExecutor(t, tune)
	return r
}

// newExecutor returns another executor on the rig's store and router (a second
// process, or the same one after a restart).
func (r *rig) newExecutor(t testing.TB, tune func(*Options)) *Executor {
	t.Helper()
	o := Options{Store: r.store, Runner: r.router, Registry: r.reg, RunTimeout: time.Minute, Connections: r.conns,
		ApprovalURL: func(id string) string { return "https://hub.test/approvals/" + id }}
	if tune != nil {
		tune(&o)
	}
	e := NewExecutor(o)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		e.Close(ctx)
	})
	return e
}

// wait waits for a run to end.
func (r *rig) wait(t *testing.T, e *Executor, p switchboard.Principal, id string) View {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := e.Wait(ctx, p, id, 20*time.Millisecond)
	if err != nil {
		t.Fatalf("wait for run %s: %v (state %s)", id, err, v.State)
	}
	return v
}

// row reads a run's row directly.
func (r *rig) row(t *testing.T, id string) Run {
	t.Helper()
	var run Run
	if err := r.db.Where("id = ?", id).Take(&run).Error; err != nil {
		t.Fatalf("read run %s: %v", id, err)
	}
	return run
}

func wantCode(t *testing.T, err error, code switchboard.Code, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want %s", code)
	}
	if got := switchboard.CodeOf(err); got != code {
		t.Fatalf("code = %s (%v), want %s", got, err, code)
	}
	if field != "" {
		e := switchboard.AsError(err)
		if e.Field != field {
			t.Fatalf("field = %q (%v), want %q", e.Field, err, field)
		}
	}
}
