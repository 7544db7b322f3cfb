package securitytest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	hubtools "github.com/switchboard-hub/switchboard/providers/hub"

	"github.com/gin-gonic/gin"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/identity"
	"github.com/switchboard-hub/switchboard/internal/notrun"
	"github.com/switchboard-hub/switchboard/internal/oauthtest"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/mcpadapter"
	"github.com/switchboard-hub/switchboard/openapis"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/tenants"
	"github.com/switchboard-hub/switchboard/usage"
	"github.com/switchboard-hub/switchboard/workflows"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	notrun.Main(m)
}

// victimToken is the GitHub token of the victim's private connection. The fake GitHub
// records every request made with it: no foreign principal's request may cause one.
const victimToken = "ghp_VictimToken0123456789abcdefghijklmnopq"

// fakeGitHub answers like api.github.com for the few paths the suite uses.
type fakeGitHub struct {
	*httptest.Server
	mu       sync.Mutex
	victim   int             // requests made with victimToken
	requests []githubRequest // every request, in order
	// moved is where GitHub redirects the repository victim/moved, as it does a renamed
	// one ("" answers 404).
	moved string
}

// githubRequest is one request the fake GitHub received.
type githubRequest struct {
	Method, Path, Authorization string
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	f := &fakeGitHub{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		if r.Header.Get("Authorization") == "Bearer "+victimToken {
			f.victim++
		}
		f.requests = append(f.requests, githubRequest{Method: r.Method, Path: r.URL.Path, Authorization: r.Header.Get("Authorization")})
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		f.mu.Lock()
		moved := f.moved
		f.mu.Unlock()
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/repos/victim/moved" && moved != "":
			http.Redirect(w, r, moved, http.StatusMovedPermanently)
			return
		case r.Method == http.MethodPost && r.URL.Path == "/user/repos":
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"id":1296269,"name":"h3-repo","full_name":"octocat/h3-repo","private":false,"owner":{"login":"octocat","id":1},"html_url":"https://github.com/octocat/h3-repo","default_branch":"main"}`)
			return
		case r.Method == http.MethodPost && r.URL.Path == "/gists":
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"id":"aa5a315d61ae9438b18d","html_url":"https://gist.github.com/aa5a315d61ae9438b18d","public":false,"description":"","files":{"a.txt":{"filename":"a.txt","content":"x"}}}`)
			return
		}
		if r.Method == http.MethodGet && r.URL.Path == "/user" && strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ghp_") {
			w.Header().Set("X-OAuth-Scopes", "repo, read:org")
			if r.Header.Get("Authorization") == "Bearer "+victimToken {
				_, _ = io.WriteString(w, `{"login":"victim-octocat","id":4242,"type":"User","site_admin":false}`)
				return
			}
			_, _ = io.WriteString(w, `{"login":"attacker","id":666,"type":"User","site_admin":false}`)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest","status":"404"}`)
	}))
	t.Cleanup(f.Close)
	return f
}

// received returns the requests the fake GitHub received of the method.
func (f *fakeGitHub) received(method string) []githubRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []githubRequest
	for _, r := range f.requests {
		if r.Method == method {
			out = append(out, r)
		}
	}
	return out
}

func (f *fakeGitHub) victimRequests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.victim
}

// hub is the serving path of `switchboard serve` on a test server.
type hub struct {
	t       *testing.T
	srv     *httptest.Server
	engine  *gin.Engine
	tenants *tenants.Store
	github  *fakeGitHub
	writer  *audit.Writer
	db      *gorm.DB
	idp     *oauthtest.OIDC // the victim's identity provider
}

func newHub(t *testing.T, db *gorm.DB) *hub {
	t.Helper()
	h := &hub{t: t, github: newFakeGitHub(t), tenants: tenants.NewStore(db), db: db}
	t.Cleanup(h.tenants.Close)
	h.tenants.SetPasswordCost(4)
	log := slog.New(slog.DiscardHandler)
	reg := providers.NewRegistry()
	if err := all.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := reg.SetBaseURL("github", h.github.URL); err != nil {
		t.Fatal(err)
	}
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "keys", "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	h.writer = audit.NewWriter(db, audit.WriterOptions{FlushInterval: 5 * time.Millisecond})
	t.Cleanup(func() { _ = h.writer.Close(context.Background()) })
	transports := &providers.Transports{}
	svc := connections.NewService(connections.NewStore(db, kr), reg, transports, h.writer)
	svc.ConfigureOAuth(connections.OAuthConfig{RedirectURL: "https://hub.example.com" + api.CallbackPath, Logger: log})
	guard, err := egress.NewGuard(false, nil)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := remotemcp.New(remotemcp.Options{Connections: svc, Guard: guard, Version: "test", Logger: log, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remote.Close)
	tenantAPIs, err := openapis.New(openapis.Options{Store: openapis.NewStore(db), Connections: svc, Registry: reg, Transports: transports, Guard: guard, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	agentService := agents.NewService(agents.NewStore(db), reg, svc)
	rtr := router.New(router.Options{Registry: reg, Connections: svc, Audit: h.writer, Transports: transports, Logger: log,
		ArgsKey: []byte("security"), Policies: agentService, Agents: agentService})
	var adapter *mcpadapter.Adapter
	wfStore := workflows.NewStore(db, kr)
	hub := &workflows.Hub{Router: rtr, Registry: reg, Engine: workflows.NewEngine(workflows.EngineOptions{Store: wfStore, Caller: rtr, Catalog: rtr, Logger: log})}
	runExec := runs.NewExecutor(runs.Options{Store: runs.NewStore(db, kr), Runner: hub, Registry: reg, Logger: log,
		Describe: func(err error) string { return adapter.DescribeError(err) }})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		runExec.Close(ctx)
	})
	wfService := &workflows.Service{Store: wfStore, Runs: runExec, Router: rtr}
	bodies := limits.NewBodyBudget(0, 0) // shared by the API and the MCP URLs, as serve shares it
	adapter = mcpadapter.New(mcpadapter.Options{Router: rtr, Auth: h.tenants, Agents: agentService, Remote: remote, Logger: log, PublicURL: "https://hub.example.com", Bodies: bodies,
		Extensions: []mcpadapter.Extension{mcpadapter.RunsExtension(mcpadapter.RunsOptions{Runs: runExec, Logger: log, StateKey: kr.Derive("request-state"), Answer: hub.Answer, Flows: wfService}),
			mcpadapter.FlowsExtension(wfService, log)}})
	t.Cleanup(func() { adapter.Close(context.Background()) })
	svc.Subscribe(rtr.Forget)
	svc.Subscribe(adapter.ConnectionChanged)
	svc.Subscribe(remote.ConnectionChanged)
	agentService.Subscribe(adapter.AgentChanged)
	h.tenants.OnKeysRevoked(adapter.KeysRevoked)
	ui := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!doctype html><title>Switchboard</title>")
	})
	// The victim's identity provider, for its single sign-on.
	h.idp = oauthtest.NewOIDC(t, oauthtest.OIDCOptions{ClientID: "victim-sso-client", ClientSecret: victimSSOSecret, RedirectURI: "https://hub.example.com" + identity.SSOCallbackPath})
	oauth := identity.New(identity.Options{DB: db, Keyring: kr, PublicURL: "https://hub.example.com", Logger: log, Accounts: h.tenants, Audit: h.writer})
	h.tenants.SetPasswordPolicy(oauth.PasswordsAllowed)
	hub.Service = wfService
	if err := reg.Register(wfService.Spec()); err != nil { // as serve registers it
		t.Fatal(err)
	}
	if err := (&hubtools.Tools{Runs: runExec, Workflows: wfService, Registry: reg, Connections: rtr}).Register(reg); err != nil { // as serve registers it
		t.Fatal(err)
	}
	agentService.SetWorkflows(wfService) // agents may select saved workflows as tools, as serve wires it
	h.engine = api.New(api.Options{BodyBudget: bodies, OwnBodies: []string{mcpadapter.Prefix}, Registry: reg, Tenants: h.tenants, Connections: svc, Audit: audit.NewStore(db), Usage: usage.NewStore(db), Tools: rtr, Runs: runExec,
		Workflows: wfService,
		Agents:    agentService, RemoteMCP: remote, OpenAPI: tenantAPIs, Recorder: h.writer, Ready: func(context.Context) error { return nil },
		Grants:    oauth,
		SSO:       oauth,
		Lister:    adapter,
		Console:   adapter,
		PublicURL: "https://hub.example.com", Logger: log, NoRoute: ui})
	// Mounted as serve mounts it.
	mcp := gin.WrapH(adapter)
	h.engine.Any(mcpadapter.Prefix+":tenant", mcp)
	h.engine.Any(mcpadapter.Prefix+":tenant/agents/:agent", mcp)
	h.engine.GET(identity.SSOStartPath, gin.WrapF(oauth.StartSSO))
	h.engine.POST(identity.SSOStartPath, gin.WrapF(oauth.StartSSO))
	h.engine.GET(identity.SSOCallbackPath, gin.WrapF(oauth.SSOCallback))
	h.engine.POST(identity.SSOLinkPath, gin.WrapF(oauth.LinkSSO))
	h.srv = httptest.NewServer(h.engine)
	t.Cleanup(h.srv.Close)
	return h
}

// do sends a request with key (none when "") and returns the status and body.
func (h *hub) do(key, method, path, body string, header map[string]string) (int, http.Header, []byte) {
	h.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, r)
	if err != nil {
		h.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	// Redirects within the hub are followed; one that leaves it (single sign-on's, to
	// an identity provider) is the answer.
	client := *h.srv.Client()
	client.CheckRedirect = func(next *http.Request, _ []*http.Request) error {
		if next.URL.Host != req.URL.Host {
			return http.ErrUseLastResponse
		}
		return nil
	}
	res, err := client.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

// want sends a request that must answer status and decodes its body into out.
func (h *hub) want(key, method, path, body string, status int, out any) {
	h.t.Helper()
	got, _, b := h.do(key, method, path, body, nil)
	if got != status {
		h.t.Fatalf("%s %s: status %d, want %d: %s", method, path, got, status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			h.t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
}

// victimSSOSecret is the client secret of the victim's single sign-on.
const victimSSOSecret = "victim-sso-secret-0123456789"

// fixture is the victim tenant's objects and every kind of foreign principal.
type fixture struct {
	victimSlug   string
	victimTenant switchboard.TenantID
	owner        string // the victim: tenant A's owner, key
	ownerID      string // user id
	ownerEmail   string
	connID       string // the owner's private GitHub connection
	agentID      string // the owner's agent, bound to connID
	agentKeyID   string // its key's id
	// ownerAgentKey is the key of the owner's agent, which the owner created: it acts
	// on the owner's private connection, never as the owner.
	ownerAgentKey string
	keyID         string // a second key of the owner
	runID         string // the owner's run on connID
	wfRunID       string // the owner's run of the workflow victim_flow (a step on connID)
	invitationID  string
	grantID       string // an MCP client the owner allowed (Connected apps)
	memberID      string // tenant A's member (the "other user")
	ssoChangeID   string // the owner's setting up of single sign-on, not acknowledged

	principals map[string]string // kind → API key ("" for none)
}

// The kinds of foreign principal.
const (
	anonymous   = "no key"
	revoked     = "revoked key"
	removed     = "removed user"
	agentKey    = "agent key"
	otherTenant = "other tenant"
	otherUser   = "other user"
)

var principalKinds = []string{anonymous, revoked, removed, agentKey, otherTenant, otherUser}

// user makes a user of the tenant with a key, and returns its id and key.
func (h *hub) user(tenant switchboard.TenantID, email string, role switchboard.Role) (string, string) {
	h.t.Helper()
	ctx := context.Background()
	u, err := h.tenants.CreateUser(ctx, tenant, email, role)
	if err != nil {
		h.t.Fatal(err)
	}
	key, _, err := h.tenants.CreateKey(ctx, tenant, u.ID, "k", false)
	if err != nil {
		h.t.Fatal(err)
	}
	return u.ID, key
}

// settle waits until the run at path (the key's) has ended and returns its state.
func (h *hub) settle(key, path string) string {
	h.t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		var st struct {
			State string `json:"state"`
		}
		h.want(key, http.MethodGet, path, "", http.StatusOK, &st)
		if st.State != "working" {
			return st.State
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s is still working", path)
		}
	}
}

// seed makes the victim tenant and the foreign principals.
func (h *hub) seed() *fixture {
	h.t.Helper()
	ctx := context.Background()
	f := &fixture{victimSlug: "victim-co", ownerEmail: "victim-owner@victim.test", principals: map[string]string{anonymous: ""}}
	ta, err := h.tenants.CreateTenant(ctx, f.victimSlug, "Victim Co")
	if err != nil {
		h.t.Fatal(err)
	}
	f.victimTenant = ta.ID
	user := h.user
	f.ownerID, f.owner = user(ta.ID, f.ownerEmail, switchboard.RoleOwner)
	var memberKey string
	f.memberID, memberKey = user(ta.ID, "member@victim.test", switchboard.RoleMember)
	f.principals[otherUser] = memberKey
	removedID, removedKey := user(ta.ID, "gone@victim.test", switchboard.RoleAdmin)
	f.principals[removed] = removedKey
	tb, err := h.tenants.CreateTenant(ctx, "other-co", "Other Co")
	if err != nil {
		h.t.Fatal(err)
	}
	_, f.principals[otherTenant] = user(tb.ID, "owner@other.test", switchboard.RoleOwner)

	var conn struct{ ID string }
	h.want(f.owner, http.MethodPost, "/api/connections", `{"provider":"github","token":"`+victimToken+`"}`, http.StatusCreated, &conn)
	f.connID = conn.ID
	var agent struct{ ID string }
	h.want(f.owner, http.MethodPost, "/api/agents", `{"name":"victim-agent","tools":[{"tool":"github_get_me","connection_id":"`+f.connID+`"}]}`, http.StatusCreated, &agent)
	f.agentID = agent.ID
	var agentKeyOut struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	h.want(f.owner, http.MethodPost, "/api/agents/"+f.agentID+"/keys", `{"name":"victim"}`, http.StatusCreated, &agentKeyOut)
	f.agentKeyID = agentKeyOut.ID
	f.ownerAgentKey = agentKeyOut.Key
	// The agent key principal is the member's own agent's key: foreign to the owner.
	var memberAgent struct{ ID string }
	h.want(memberKey, http.MethodPost, "/api/agents", `{"name":"member-agent"}`, http.StatusCreated, &memberAgent)
	var memberAgentKey struct {
		Key string `json:"key"`
	}
	h.want(memberKey, http.MethodPost, "/api/agents/"+memberAgent.ID+"/keys", `{"name":"member"}`, http.StatusCreated, &memberAgentKey)
	f.principals[agentKey] = memberAgentKey.Key
	var key struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	h.want(f.owner, http.MethodPost, "/api/keys", `{"name":"second"}`, http.StatusCreated, &key)
	f.keyID = key.ID
	h.want(f.owner, http.MethodPost, "/api/keys", `{"name":"to revoke"}`, http.StatusCreated, &key)
	h.want(f.owner, http.MethodDelete, "/api/keys/"+key.ID, "", http.StatusNoContent, nil)
	f.principals[revoked] = key.Key
	var run struct {
		ID string `json:"run_id"`
	}
	h.want(f.owner, http.MethodPost, "/api/runs", `{"tool":"github_get_me","connection_id":"`+f.connID+`","arguments":{}}`, http.StatusAccepted, &run)
	f.runID = run.ID
	// The run calls GitHub with the victim's token: let it finish before the probes
	// count such calls.
	h.settle(f.owner, "/api/runs/"+f.runID)
	def, _ := json.Marshal(map[string]any{"definition": victimWorkflow(f)})
	h.want(f.owner, http.MethodPost, "/api/workflows", string(def), http.StatusCreated, nil)
	var wfRun struct {
		ID string `json:"run_id"`
	}
	h.want(f.owner, http.MethodPost, "/api/workflows/victim_flow/runs", `{"parameters":{}}`, http.StatusAccepted, &wfRun)
	f.wfRunID = wfRun.ID
	h.settle(f.owner, "/api/runs/"+f.wfRunID)
	h.want(f.owner, http.MethodPost, "/api/openapi-providers", `{"name":"`+victimAPI+`","base_url":"https://192.0.3.10","description":`+
		`{"openapi":"3.0.3","info":{"title":"Victim API","version":"1"},"paths":{"/x":{"get":{"operationId":"getX","responses":{"200":{"description":"ok"}}}}}}}`, http.StatusCreated, nil)
	var inv struct{ ID string }
	h.want(f.owner, http.MethodPost, "/api/invitations", `{"email":"invited@victim.test","role":"admin"}`, http.StatusCreated, &inv)
	f.invitationID = inv.ID
	f.grantID = "grt_victimsapp"
	if err := h.db.Create(&identity.Grant{ID: f.grantID, TenantID: f.victimTenant, ClientID: "cli_victim", ClientName: "Victim's app",
		Resource: "https://hub.example.com/mcp/" + f.victimSlug, Scope: "mcp", UserID: f.ownerID, ConsentedBy: f.ownerID, CreatedAt: time.Now()}).Error; err != nil {
		h.t.Fatal(err)
	}
	h.want(f.owner, http.MethodPut, "/api/oauth-apps/github", `{"client_id":"victim-client-id","client_secret":"victim-client-secret"}`, http.StatusOK, nil)
	h.want(f.owner, http.MethodPut, "/api/sso", `{"issuer":"`+h.idp.Issuer()+`","client_id":"victim-sso-client","client_secret":"`+victimSSOSecret+`","allowed_domains":["victim.test"]}`, http.StatusOK, nil)
	var changes struct {
		Changes []struct{ ID string } `json:"changes"`
	}
	h.want(f.owner, http.MethodGet, "/api/sso/changes", "", http.StatusOK, &changes)
	if len(changes.Changes) != 1 {
		h.t.Fatalf("changes of single sign-on after setting it: %+v", changes.Changes)
	}
	f.ssoChangeID = changes.Changes[0].ID
	h.want(f.owner, http.MethodDelete, "/api/users/"+removedID, "", http.StatusNoContent, nil)
	return f
}

// markers are what a principal's answers must never hold: the victim's objects, and
// for another tenant anything of the victim tenant.
func (f *fixture) markers(kind string) []string {
	m := []string{victimToken, "victim-client-secret", victimSSOSecret, f.keyID, f.runID, f.wfRunID, f.invitationID, f.agentKeyID, "invited@victim.test", f.grantID, f.ssoChangeID}
	if kind == otherTenant || kind == anonymous || kind == revoked || kind == removed {
		m = append(m, f.connID, f.agentID, f.ownerID, f.ownerEmail, string(f.victimTenant), f.memberID, "victim-client-id", "victim-octocat", victimAPI)
	}
	return m
}

// leaked returns the first marker the body holds that the request did not send
// itself (an error may name the id it was asked for).
func (f *fixture) leaked(kind string, body []byte, request string) string {
	for _, m := range f.markers(kind) {
		if m != "" && bytes.Contains(body, []byte(m)) && !strings.Contains(request, m) {
			return m
		}
	}
	return ""
}

// victimAPI is the name of the API the owner added by its OpenAPI description.
const victimAPI = "victim_notes_api"

// victimWorkflow is the owner's workflow: one step on the owner's private connection.
func victimWorkflow(f *fixture) string {
	return "name: victim_flow\nsteps:\n  - {name: me, tool: github_get_me, connection: " + f.connID + "}\n"
}
