package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/database"
	"github.com/switchboard-hub/switchboard/internal/oauthtest"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/tenants"
)

// The OAuth app the authorization servers know.
const (
	testClientID     = "Iv1.switchboard-test"
	testClientSecret = "client-secret-0123456789abcdef"
)

// clock is the hub's clock: real time moved by an offset, so a test can make a token
// look expired to the hub while the authorization server keeps real time.
type clock struct{ off atomic.Int64 }

func (c *clock) now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *clock) advance(d time.Duration) { c.off.Add(int64(d)) }

// logBuffer collects every log line of the hub.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// node is one Switchboard process's connection service and router.
type node struct {
	svc *connections.Service
	rtr *router.Router
}

// oauthHub is a running API whose GitHub or Slack is a real authorization server
// (internal/oauthtest), with the default tenant's owner and member and a second tenant.
type oauthHub struct {
	t       *testing.T
	db      *gorm.DB
	as      *oauthtest.Server
	srv     *httptest.Server
	reg     *providers.Registry
	keyFile string
	tenants *tenants.Store
	writer  *audit.Writer
	clock   *clock
	logs    *logBuffer
	node
	provider string
	admin    actor
	member   actor
	ownerB   actor

	mu      sync.Mutex
	bodies  [][]byte
	secrets []string // tokens, codes and states seen: none may appear in logs, answers or audit
}

func newOAuthHub(t *testing.T, db *gorm.DB, o oauthtest.Options) *oauthHub {
	t.Helper()
	ctx := context.Background()
	h := &oauthHub{t: t, db: db, clock: &clock{}, logs: &logBuffer{}, tenants: tenants.NewStore(db), provider: string(o.Style)}
	t.Cleanup(h.tenants.Close)
	var handler atomic.Value
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handler.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(h.srv.Close)
	o.ClientID, o.ClientSecret, o.RedirectURI = testClientID, testClientSecret, h.srv.URL+api.CallbackPath
	h.as = oauthtest.New(t, o)

	h.reg = providers.NewRegistry()
	for _, spec := range all.Specs() {
		// The tests send hundreds of calls at once on one connection: a bucket that lets
		// them through keeps the rate limiter out of what they measure.
		spec.RateLimit = providers.RateLimit{PerSecond: 10000, Burst: 10000, MaxWait: 10 * time.Second}
		if err := h.reg.Register(spec); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.reg.SetBaseURL(h.provider, h.as.APIBase()); err != nil {
		t.Fatal(err)
	}
	h.keyFile = filepath.Join(t.TempDir(), "keys", "master.key")
	h.writer = audit.NewWriter(db, audit.WriterOptions{FlushInterval: 5 * time.Millisecond, Logger: h.logger()})
	t.Cleanup(func() { _ = h.writer.Close(context.Background()) })
	h.node = h.newNode(db)

	var key string
	var err error
	tenant, key, _, err := h.tenants.Bootstrap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	users, err := h.tenants.ListUsers(ctx, tenant.ID)
	if err != nil || len(users) != 1 {
		t.Fatalf("bootstrap users: %v, %v", users, err)
	}
	h.admin = actor{key: key, userID: users[0].ID, tenant: tenant.ID}
	h.member = h.newUser(tenant.ID, "member@a.test", switchboard.RoleMember)
	b, err := h.tenants.CreateTenant(ctx, "tenant-b", "Tenant B")
	if err != nil {
		t.Fatal(err)
	}
	h.ownerB = h.newUser(b.ID, "owner@b.test", switchboard.RoleOwner)

	handler.Store(api.New(api.Options{
		Registry: h.reg, Tenants: h.tenants, Connections: h.svc, Audit: audit.NewStore(db), Tools: h.rtr, Recorder: h.writer,
		Database:  func(ctx context.Context) error { return database.Ping(ctx, db) },
		PublicURL: h.srv.URL, Logger: h.logger(),
	}))
	t.Cleanup(h.checkNoSecrets)
	return h
}

func (h *oauthHub) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// newNode builds a connection service and router on db, as another process sharing
// the database would: its own pool, caches and single-flight, the same key file.
func (h *oauthHub) newNode(db *gorm.DB) node {
	h.t.Helper()
	kr, err := keyring.LoadOrCreateKeyFile(h.keyFile)
	if err != nil {
		h.t.Fatal(err)
	}
	transports := &providers.Transports{}
	svc := connections.NewService(connections.NewStore(db, kr), h.reg, transports, h.writer)
	svc.ConfigureOAuth(connections.OAuthConfig{
		RedirectURL: h.srv.URL + api.CallbackPath,
		Apps:        map[string]connections.OAuthApp{h.provider: {ClientID: testClientID, ClientSecret: testClientSecret, AuthURL: h.as.AuthURL(), TokenURL: h.as.TokenURL()}},
		Logger:      h.logger(),
		Now:         h.clock.now,
	})
	rtr := router.New(router.Options{Registry: h.reg, Connections: svc, Audit: h.writer, Transports: transports, Logger: h.logger(), ArgsKey: []byte("test")})
	svc.Subscribe(rtr.Forget)
	return node{svc: svc, rtr: rtr}
}

func (h *oauthHub) newUser(tenant switchboard.TenantID, email string, role switchboard.Role) actor {
	h.t.Helper()
	ctx := context.Background()
	u, err := h.tenants.CreateUser(ctx, tenant, email, role)
	if err != nil {
		h.t.Fatal(err)
	}
	key, _, err := h.tenants.CreateKey(ctx, tenant, u.ID, "test", false)
	if err != nil {
		h.t.Fatal(err)
	}
	return actor{key: key, userID: u.ID, tenant: tenant}
}

// browser is a person's browser: it keeps cookies and follows redirects.
func (h *oauthHub) browser() *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 30 * time.Second}
}

// send makes a request with the client (the actor's key when set) and returns the
// response with its body read.
func (h *oauthHub) send(c *http.Client, who actor, method, u string, body string, header map[string]string) (*http.Response, []byte) {
	h.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, r)
	if err != nil {
		h.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if who.key != "" {
		req.Header.Set("Authorization", "Bearer "+who.key)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	h.mu.Lock()
	h.bodies = append(h.bodies, b)
	h.mu.Unlock()
	if strings.HasPrefix(u, h.srv.URL+"/") {
		checkExchange(h.t, method, req.URL.Path, []byte(body), resp, b)
	}
	return resp, b
}

// api calls the hub's API with a plain client and checks the status.
func (h *oauthHub) api(who actor, method, path, body string, status int, out any) []byte {
	h.t.Helper()
	resp, b := h.send(http.DefaultClient, who, method, h.srv.URL+path, body, nil)
	if resp.StatusCode != status {
		h.t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			h.t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
	return b
}

// authorize starts a flow for who in the browser and returns the authorization URL.
func (h *oauthHub) authorize(browser *http.Client, who actor, body string) *url.URL {
	h.t.Helper()
	resp, b := h.send(browser, who, http.MethodPost, h.srv.URL+"/api/connections/"+h.provider+"/authorize", body, nil)
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("authorize: status %d: %s", resp.StatusCode, b)
	}
	var out struct {
		AuthorizationURL string `json:"authorization_url"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		h.t.Fatal(err)
	}
	u, err := url.Parse(out.AuthorizationURL)
	if err != nil {
		h.t.Fatal(err)
	}
	h.addSecret(u.Query().Get("state"))
	return u
}

var consentRequest = regexp.MustCompile(`name="request" value="([^"]*)"`)

// consent opens the authorization URL in the browser and answers the consent page
// (allow or deny, as the given upstream user); the browser follows the redirect back
// to the hub's callback. It returns the callback's response and body, and the callback
// URL the browser was sent to.
func (h *oauthHub) consent(browser *http.Client, authURL *url.URL, decision, user string) (*http.Response, []byte, *url.URL) {
	h.t.Helper()
	resp, page := h.send(browser, actor{}, http.MethodGet, authURL.String(), "", nil)
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("consent page: status %d: %s", resp.StatusCode, page)
	}
	m := consentRequest.FindSubmatch(page)
	if m == nil {
		h.t.Fatalf("no consent form in %s", page)
	}
	form := url.Values{"request": {htmlUnescape(string(m[1]))}, "decision": {decision}, "user": {user}}
	req, err := http.NewRequest(http.MethodPost, h.as.URL+"/consent", strings.NewReader(form.Encode()))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := browser.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	h.mu.Lock()
	h.bodies = append(h.bodies, b)
	h.mu.Unlock()
	if code := res.Request.URL.Query().Get("code"); code != "" {
		h.addSecret(code)
	}
	return res, b, res.Request.URL
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&#43;", "+", "&#34;", `"`, "&lt;", "<", "&gt;", ">", "&#39;", "'").Replace(s)
}

func (h *oauthHub) addSecret(s string) {
	if s == "" {
		return
	}
	h.mu.Lock()
	h.secrets = append(h.secrets, s)
	h.mu.Unlock()
}

// collectSecrets adds every token, code, verifier and secret the authorization server
// saw or issued.
func (h *oauthHub) collectSecrets() []string {
	for _, r := range h.as.Requests() {
		for _, k := range []string{"code", "refresh_token", "code_verifier", "client_secret", "state"} {
			h.addSecret(r.Form.Get(k))
		}
		if tok, ok := strings.CutPrefix(r.Auth, "Bearer "); ok {
			h.addSecret(tok)
		}
	}
	h.addSecret(testClientSecret)
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.secrets...)
}

// checkNoSecrets fails the test if a token, code, state or secret appears in a log
// line, an answer of the hub, or an audit event.
func (h *oauthHub) checkNoSecrets() {
	secrets := h.collectSecrets()
	_ = h.writer.Flush(context.Background())
	var details []string
	if err := h.db.Model(&audit.Event{}).Pluck("detail", &details).Error; err != nil {
		h.t.Errorf("read audit details: %v", err)
	}
	logs := h.logs.String()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range secrets {
		if len(s) < 8 {
			continue
		}
		if strings.Contains(logs, s) {
			h.t.Errorf("a log line carries a secret (%.6s…):\n%s", s, logs)
		}
		for _, b := range h.bodies {
			if h.isHubBody(b) && bytes.Contains(b, []byte(s)) {
				h.t.Errorf("an answer carries a secret (%.6s…): %s", s, b)
			}
		}
		for _, d := range details {
			if strings.Contains(d, s) {
				h.t.Errorf("an audit event carries a secret (%.6s…): %s", s, d)
			}
		}
	}
}

// isHubBody tells the hub's answers from those that carry the state by design: the
// authorization URL the hub hands out, and the authorization server's consent pages.
func (h *oauthHub) isHubBody(b []byte) bool {
	return !bytes.Contains(b, []byte(`action="/consent"`)) && !bytes.Contains(b, []byte(`"authorization_url"`))
}

// principal is who the actor's key authenticates as.
func (h *oauthHub) principal(who actor) switchboard.Principal {
	h.t.Helper()
	p, err := h.tenants.Authenticate(context.Background(), who.key)
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

// connections lists the connections the actor sees.
func (h *oauthHub) connections(who actor) []map[string]any {
	h.t.Helper()
	var out struct {
		Connections []map[string]any `json:"connections"`
	}
	h.api(who, http.MethodGet, "/api/connections", "", http.StatusOK, &out)
	return out.Connections
}

// countConnections counts every connection row of every tenant.
func (h *oauthHub) countConnections() int64 {
	h.t.Helper()
	var n int64
	if err := h.db.Model(&connections.Connection{}).Count(&n).Error; err != nil {
		h.t.Fatal(err)
	}
	return n
}

// auditKinds returns the kinds of the tenant's audit events, oldest first.
func (h *oauthHub) auditKinds(tenant switchboard.TenantID) []string {
	h.t.Helper()
	if err := h.writer.Flush(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	var kinds []string
	if err := h.db.Model(&audit.Event{}).Where("tenant_id = ?", tenant).Order("at, id").Pluck("kind", &kinds).Error; err != nil {
		h.t.Fatal(err)
	}
	return kinds
}
