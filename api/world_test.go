package api_test

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
	"github.com/switchboard-hub/switchboard/identity"
	"github.com/switchboard-hub/switchboard/internal/database"
	"github.com/switchboard-hub/switchboard/internal/notrun"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/mcpadapter"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
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

// The tokens the fake GitHub knows. Every response body a test reads is checked for them.
const (
	goodToken  = "ghp_GoodToken0123456789abcdefghijklmnopqr"
	otherToken = "ghp_OtherToken0123456789abcdefghijklmnop"
	// renewedToken is a second token of goodToken's account (octocat), for reconnects.
	renewedToken = "ghp_RenewedToken0123456789abcdefghijklmn"
	revokedToken = "ghp_RevokedToken0123456789abcdefghijklmn"
	// notAPIToken gets what a host that is not GitHub's API answers (a wrong
	// SWITCHBOARD_GITHUB_BASE_URL): 404 for GET /user.
	notAPIToken = "ghp_NotAPIToken0123456789abcdefghijklmno"
)

// fakeGitHub answers GET /user like api.github.com does, and records what it was sent.
type fakeGitHub struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string
	// held receives a value when GET .../issues/408 starts, which then answers only
	// when its request is canceled.
	held chan struct{}
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	t.Helper()
	f := &fakeGitHub{held: make(chan struct{}, 8)}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.auth = append(f.auth, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		f.mu.Unlock()
		if r.URL.Path == "/repos/octo-org/hello/issues/408" {
			f.held <- struct{}{}
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if r.Method == http.MethodGet && r.URL.Path == "/repos/octo-org/hello/issues/7" && (r.Header.Get("Authorization") == "Bearer "+goodToken || r.Header.Get("Authorization") == "Bearer "+renewedToken) {
			_, _ = io.WriteString(w, issue7)
			return
		}
		if r.Method == http.MethodGet && r.URL.Path == "/repos/octo-org/hello/actions/runs" && r.URL.Query().Get("branch") == "main" {
			// GitHub's list of workflow runs: the branch's latest failed.
			_, _ = io.WriteString(w, `{"total_count":1,"workflow_runs":[{"id":30433642,"name":"CI","display_title":"Fix the build","status":"completed","conclusion":"failure","head_branch":"main","head_sha":"acb5820ced9479c074f688cc328bf03f341a511d","event":"push","actor":{"login":"octocat","id":583231},"run_number":562,"run_attempt":1,"html_url":"https://github.com/octo-org/hello/actions/runs/30433642","created_at":"2026-05-04T10:11:12Z","updated_at":"2026-05-04T10:15:12Z"}]}`)
			return
		}
		if r.Method == http.MethodPost && r.URL.Path == "/repos/octo-org/hello/actions/runs/30433642/rerun" {
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{}`)
			return
		}
		if r.Method == http.MethodPost && r.URL.Path == "/repos/octo-org/hello/issues" {
			// GitHub's "Validation Failed" (components/responses/validation_failed in its
			// OpenAPI description) for an assignee who cannot be assigned.
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"message":"Validation Failed","errors":[{"value":"nobody-here","resource":"Issue","field":"assignees","code":"invalid"}],"documentation_url":"https://docs.github.com/rest/issues/issues#create-an-issue","status":"422"}`)
			return
		}
		if r.Method == http.MethodGet && r.URL.Path == "/repos/octo-org/hello/issues/429" {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"message":"API rate limit exceeded","documentation_url":"https://docs.github.com/rest"}`)
			return
		}
		if r.Method != http.MethodGet || r.URL.Path != "/user" || r.Header.Get("Authorization") == "Bearer "+notAPIToken {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest","status":"404"}`)
			return
		}
		switch r.Header.Get("Authorization") {
		case "Bearer " + goodToken:
			w.Header().Set("X-OAuth-Scopes", "repo, read:org")
			_, _ = io.WriteString(w, `{"login":"octocat","id":583231,"type":"User","site_admin":false}`)
		case "Bearer " + renewedToken:
			w.Header().Set("X-OAuth-Scopes", "repo")
			_, _ = io.WriteString(w, `{"login":"octocat","id":583231,"type":"User","site_admin":false}`)
		case "Bearer " + otherToken:
			_, _ = io.WriteString(w, `{"login":"hubot","id":1,"type":"User","site_admin":false}`)
		default:
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}`)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeGitHub) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.auth...)
}

// issue7 is GitHub's answer to GET /repos/octo-org/hello/issues/7.
const issue7 = `{"id":7007,"number":7,"state":"open","title":"Try it works","body":"from the UI","html_url":"https://github.com/octo-org/hello/issues/7","user":{"login":"octocat","id":583231},"labels":[],"assignees":[],"comments":0,"created_at":"2026-05-04T10:11:12Z","updated_at":"2026-05-04T10:11:12Z"}`

// actor is one API key of a tenant.
type actor struct {
	key    string
	userID string
	tenant switchboard.TenantID
}

// world is a running API on a migrated database: tenant A (the bootstrapped default,
// with its operator-owner and a member) and tenant B (an owner), and a fake GitHub.
type world struct {
	reg     *providers.Registry // the providers the world's server serves
	t       *testing.T
	db      *gorm.DB
	srv     *httptest.Server
	github  *fakeGitHub
	slack   *fakeSlack
	tenants *tenants.Store
	writer  *audit.Writer
	a       tenants.Tenant
	b       tenants.Tenant
	admin   actor // tenant A's owner, operator key
	member  actor // tenant A's member
	ownerB  actor // tenant B's owner
	runs    *runs.Executor
	oauth   *identity.Server

	mu     sync.Mutex
	bodies [][]byte
}

func newWorld(t *testing.T, db *gorm.DB) *world {
	t.Helper()
	ctx := context.Background()
	w := &world{t: t, db: db, github: newFakeGitHub(t), slack: newFakeSlack(t), tenants: tenants.NewStore(db)}
	t.Cleanup(w.tenants.Close)
	w.tenants.SetPasswordCost(4) // bcrypt's least: tests sign in often

	reg := providers.NewRegistry()
	if err := all.Register(reg); err != nil {
		t.Fatal(err)
	}
	w.reg = reg
	if err := reg.SetBaseURL("github", w.github.URL); err != nil {
		t.Fatal(err)
	}
	if err := reg.SetBaseURL("slack", w.slack.URL+"/api"); err != nil {
		t.Fatal(err)
	}
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "keys", "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	w.writer = audit.NewWriter(db, audit.WriterOptions{FlushInterval: 5 * time.Millisecond})
	t.Cleanup(func() { _ = w.writer.Close(context.Background()) })
	transports := &providers.Transports{}
	svc := connections.NewService(connections.NewStore(db, kr), reg, transports, w.writer)
	agentService := agents.NewService(agents.NewStore(db), reg, svc)
	rtr := router.New(router.Options{Registry: reg, Connections: svc, Audit: w.writer, Transports: transports, Logger: slog.New(slog.DiscardHandler), ArgsKey: []byte("test"), Policies: agentService, Agents: agentService})
	svc.Subscribe(rtr.Forget)
	wfStore := workflows.NewStore(db, kr)
	hub := &workflows.Hub{Router: rtr, Registry: reg, Engine: workflows.NewEngine(workflows.EngineOptions{Store: wfStore, Caller: rtr, Catalog: rtr, Logger: slog.New(slog.DiscardHandler)})}
	w.runs = runs.NewExecutor(runs.Options{Store: runs.NewStore(db, kr), Runner: hub, Registry: reg, Logger: slog.New(slog.DiscardHandler),
		Connections: svc, ApprovalURL: func(id string) string { return "https://hub.example.com/approvals/" + id }})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w.runs.Close(ctx)
	})

	var key string
	w.a, key, _, err = w.tenants.Bootstrap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	users, err := w.tenants.ListUsers(ctx, w.a.ID)
	if err != nil || len(users) != 1 {
		t.Fatalf("bootstrap users: %v, %v", users, err)
	}
	w.admin = actor{key: key, userID: users[0].ID, tenant: w.a.ID}
	w.member = w.newUser(w.a.ID, "member@a.test", switchboard.RoleMember)
	w.b, err = w.tenants.CreateTenant(ctx, "tenant-b", "Tenant B")
	if err != nil {
		t.Fatal(err)
	}
	w.ownerB = w.newUser(w.b.ID, "owner@b.test", switchboard.RoleOwner)

	w.oauth = identity.New(identity.Options{DB: db, Keyring: kr, PublicURL: "https://hub.example.com", Logger: slog.New(slog.DiscardHandler)})
	wfService := &workflows.Service{Store: wfStore, Runs: w.runs, Router: rtr, User: func(ctx context.Context, tenant switchboard.TenantID, id string) (switchboard.Principal, error) {
		u, err := w.tenants.User(ctx, tenant, id)
		if err != nil {
			return switchboard.Principal{}, err
		}
		return switchboard.Principal{TenantID: tenant, Kind: switchboard.PrincipalUser, UserID: u.ID, Role: u.Role}, nil
	}}
	hub.Service = wfService
	if err := reg.Register(wfService.Spec()); err != nil { // as serve registers it
		t.Fatal(err)
	}
	if err := (&hubtools.Tools{Runs: w.runs, Workflows: wfService, Registry: reg, Connections: rtr, Search: rtr}).Register(reg); err != nil { // as serve registers it
		t.Fatal(err)
	}
	// The MCP URLs as serve mounts them, so a test compares the agent console with them.
	adapter := mcpadapter.New(mcpadapter.Options{Router: rtr, Agents: agentService, Auth: w.tenants, Logger: slog.New(slog.DiscardHandler), PublicURL: "https://hub.example.com",
		Extensions: []mcpadapter.Extension{mcpadapter.RunsExtension(mcpadapter.RunsOptions{Runs: w.runs, StateKey: kr.Derive("request-state")})}})
	t.Cleanup(func() { adapter.Close(context.Background()) })
	engine := api.New(api.Options{
		OwnBodies:   []string{mcpadapter.Prefix},
		Grants:      w.oauth,
		Registry:    reg,
		Tenants:     w.tenants,
		Connections: svc,
		Audit:       audit.NewStore(db),
		Usage:       usage.NewStore(db),
		Tools:       rtr,
		Runs:        w.runs,
		Workflows:   wfService,
		Agents:      agentService,
		Lister:      adapter,
		Console:     adapter,
		Recorder:    w.writer,
		Database:    func(ctx context.Context) error { return database.Ping(ctx, db) },
		PublicURL:   "https://hub.example.com/",
		Logger:      slog.New(slog.DiscardHandler),
	})
	engine.Any(mcpadapter.Prefix+":tenant/agents/:agent", gin.WrapH(adapter))
	w.srv = httptest.NewServer(engine)
	t.Cleanup(w.srv.Close)
	t.Cleanup(w.checkNoSecrets)
	return w
}

func (w *world) newUser(tenant switchboard.TenantID, email string, role switchboard.Role) actor {
	w.t.Helper()
	ctx := context.Background()
	u, err := w.tenants.CreateUser(ctx, tenant, email, role)
	if err != nil {
		w.t.Fatal(err)
	}
	key, _, err := w.tenants.CreateKey(ctx, tenant, u.ID, "test", false)
	if err != nil {
		w.t.Fatal(err)
	}
	return actor{key: key, userID: u.ID, tenant: tenant}
}

// do sends a request with the actor's key (none for a zero actor) and returns the
// status and raw body, after holding both to docs/reference/openapi.yaml.
func (w *world) do(who actor, method, path, body string) (int, []byte) {
	w.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, w.srv.URL+path, r)
	if err != nil {
		w.t.Fatal(err)
	}
	if who.key != "" {
		req.Header.Set("Authorization", "Bearer "+who.key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := w.srv.Client().Do(req)
	if err != nil {
		w.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		w.t.Fatal(err)
	}
	w.mu.Lock()
	w.bodies = append(w.bodies, b)
	w.mu.Unlock()
	checkExchange(w.t, method, req.URL.Path, []byte(body), res, b)
	return res.StatusCode, b
}

// want sends a request, fails unless it answers status, and decodes the body into out.
func (w *world) want(who actor, method, path, body string, status int, out any) []byte {
	w.t.Helper()
	got, b := w.do(who, method, path, body)
	if got != status {
		w.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, got, status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			w.t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
	return b
}

// connect connects the GitHub account of goodToken as who and returns its id.
func (w *world) connect(who actor, token string, shared bool) string {
	w.t.Helper()
	body, _ := json.Marshal(map[string]any{"provider": "github", "token": token, "shared": shared})
	var got struct {
		ID string `json:"id"`
	}
	w.want(who, http.MethodPost, "/api/connections", string(body), http.StatusCreated, &got)
	return got.ID
}

func (w *world) flushAudit() {
	w.t.Helper()
	if err := w.writer.Flush(context.Background()); err != nil {
		w.t.Fatal(err)
	}
}

// checkNoSecrets fails the test if any response carried a provider token.
func (w *world) checkNoSecrets() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, b := range w.bodies {
		for _, tok := range []string{goodToken, otherToken, renewedToken, revokedToken, slackMemberToken, slackOtherToken} {
			if bytes.Contains(b, []byte(tok)) {
				w.t.Errorf("a response carries a provider token: %s", b)
			}
		}
	}
}

// apiError is the error body.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field"`
	} `json:"error"`
}

func decodeError(t *testing.T, b []byte) apiError {
	t.Helper()
	var e apiError
	if err := json.Unmarshal(b, &e); err != nil || e.Error.Code == "" {
		t.Fatalf("not an error body: %s", b)
	}
	return e
}

func jsonDecode(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }
