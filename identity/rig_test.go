package identity

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/tenants"
)

// rig is an authorization server on a test database with two tenants (acme, beta),
// an agent of acme, and UI sessions the test hands out.
type rig struct {
	t      testing.TB
	db     *gorm.DB
	store  *tenants.Store
	srv    *Server
	http   *httptest.Server
	base   string
	acme   tenants.Tenant
	ada    tenants.User // owner of acme
	bob    tenants.User // member of beta
	beta   tenants.Tenant
	agents agentTable
	sess   *sessionTable
	client *http.Client // follows no redirects
	kr     *keyring.LocalKeyring
	audit  *auditLog
}

// auditLog keeps the audit events the server records.
type auditLog struct {
	mu     sync.Mutex
	events []audit.Event
}

func (a *auditLog) Record(e audit.Event) {
	if e.Outcome == audit.OutcomeInFlight {
		return // the call's completed row, of the same id, follows: that one is kept
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events = append(a.events, e)
}

// of returns the events of a kind.
func (a *auditLog) of(kind audit.Kind) []audit.Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []audit.Event
	for _, e := range a.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// sessionTable is the UI sessions: token → principal.
type sessionTable struct {
	mu sync.Mutex
	m  map[string]switchboard.Principal
}

func (s *sessionTable) Session(_ context.Context, token string) (switchboard.Principal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.m[token]
	if !ok {
		return switchboard.Principal{}, &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "no session"}
	}
	return p, nil
}

func (s *sessionTable) CSRFToken(token string) string { return "csrf-" + token }

// agentTable is the agents a person may hand out: id → name and creator; any other id
// is forbidden.
type agentTable map[string][2]string

func (a agentTable) AgentForGrant(_ context.Context, _ switchboard.Principal, id string) (string, string, error) {
	v, ok := a[id]
	if !ok {
		return "", "", &switchboard.Error{Code: switchboard.CodeForbidden, Message: "not your agent"}
	}
	return v[0], v[1], nil
}

func (a agentTable) AgentsForGrant(context.Context, switchboard.Principal) ([]AgentChoice, error) {
	var out []AgentChoice
	for id, v := range a {
		out = append(out, AgentChoice{ID: id, Name: v[0]})
	}
	return out, nil
}

func newRig(t testing.TB) *rig {
	t.Helper()
	ctx := context.Background()
	db := testdb.SQLite(t)
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)

	acme, ada, _, _, err := ts.CreateTenantWithOwner(ctx, "acme", "Acme", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	beta, bob, _, _, err := ts.CreateTenantWithOwner(ctx, "beta", "Beta", "bob@example.com")
	if err != nil {
		t.Fatal(err)
	}
	kr, err := keyring.NewLocalKeyring("k1", map[string][]byte{"k1": make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, db: db, store: ts, acme: acme, ada: ada, beta: beta, bob: bob, sess: &sessionTable{m: map[string]switchboard.Principal{}},
		agents: agentTable{"agt_a": {"Triage", ada.ID}}, kr: kr, audit: &auditLog{}}
	var handler http.Handler
	r.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { handler.ServeHTTP(w, req) }))
	t.Cleanup(r.http.Close)
	r.base = r.http.URL
	r.srv = New(Options{DB: db, Keyring: kr, PublicURL: r.base, Sessions: r.sess, Agents: r.agents, Logger: slog.New(slog.DiscardHandler),
		Accounts: ts, Audit: r.audit})
	ts.SetPasswordPolicy(r.srv.PasswordsAllowed)
	ts.SetPasswordCost(4)
	mux := http.NewServeMux()
	mux.HandleFunc(ServerMetadataPath, r.srv.ServeMetadata)
	mux.HandleFunc(AuthorizePath, r.srv.Authorize)
	mux.HandleFunc(TokenPath, r.srv.Token)
	mux.HandleFunc(RegistrationPath, r.srv.Register)
	mux.HandleFunc(RevocationPath, r.srv.Revoke)
	mux.HandleFunc(SSOStartPath, r.srv.StartSSO)
	mux.HandleFunc(SSOCallbackPath, r.srv.SSOCallback)
	mux.HandleFunc(SSOLinkPath, r.srv.LinkSSO)
	handler = mux
	r.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return r
}

// signIn starts a UI session for a user and returns its token.
func (r *rig) signIn(tenant tenants.Tenant, u tenants.User) string {
	tok := switchboard.RandomToken(16)
	r.sess.mu.Lock()
	r.sess.m[tok] = switchboard.Principal{TenantID: tenant.ID, TenantSlug: tenant.Slug, Kind: switchboard.PrincipalUser, UserID: u.ID, Role: u.Role}
	r.sess.mu.Unlock()
	return tok
}

// register registers a client and returns its registration response.
func (r *rig) register(body string) (int, map[string]any) {
	r.t.Helper()
	res, err := http.Post(r.base+RegistrationPath, "application/json", strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	return decodeJSON(r.t, res)
}

// publicClient registers a public client with one redirect URI and returns its id.
func (r *rig) publicClient(redirect string) string {
	r.t.Helper()
	status, body := r.register(`{"client_name":"Test client","redirect_uris":["` + redirect + `"],"token_endpoint_auth_method":"none"}`)
	if status != http.StatusCreated {
		r.t.Fatalf("register: %d %v", status, body)
	}
	return body["client_id"].(string)
}

func decodeJSON(t testing.TB, res *http.Response) (int, map[string]any) {
	t.Helper()
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("status %d, body is not JSON: %s", res.StatusCode, raw)
	}
	return res.StatusCode, m
}

// pkce returns a verifier and its S256 challenge.
func pkce() (string, string) {
	v := switchboard.RandomToken(40)
	sum := sha256.Sum256([]byte(v))
	return v, base64.RawURLEncoding.EncodeToString(sum[:])
}

// authParams are a valid authorization request's parameters.
func (r *rig) authParams(clientID, redirect, challenge, resource string) url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "code_challenge": {challenge},
		"code_challenge_method": {"S256"}, "state": {"st-1"}, "scope": {"mcp"}, "resource": {resource}}
}

// get sends GET /oauth/authorize with the session (if any) and returns the answer.
func (r *rig) get(q url.Values, session string) *http.Response {
	r.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.base+AuthorizePath+"?"+q.Encode(), nil)
	if session != "" {
		req.AddCookie(&http.Cookie{Name: tenants.SessionCookie, Value: session})
	}
	res, err := r.client.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	return res
}

// post sends the consent form with the session and returns the answer.
func (r *rig) post(form url.Values, session string) *http.Response {
	r.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, r.base+AuthorizePath, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if session != "" {
		req.AddCookie(&http.Cookie{Name: tenants.SessionCookie, Value: session})
	}
	res, err := r.client.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	return res
}

// consent shows the consent page, allows, and returns the redirect's query.
func (r *rig) consent(q url.Values, session string) url.Values {
	r.t.Helper()
	res := r.get(q, session)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		r.t.Fatalf("consent page: %d %s", res.StatusCode, body)
	}
	form := url.Values{}
	for k, v := range q {
		form[k] = v
	}
	form.Set("csrf", r.sess.CSRFToken(session))
	form.Set("decision", "allow")
	return r.redirected(r.post(form, session))
}

// redirected returns the query of a 303 to the client's redirect URI.
func (r *rig) redirected(res *http.Response) url.Values {
	r.t.Helper()
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		r.t.Fatalf("status %d, want a 303 back to the client", res.StatusCode)
	}
	u, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		r.t.Fatal(err)
	}
	return u.Query()
}

// token posts to the token endpoint.
func (r *rig) token(form url.Values) (int, map[string]any) {
	r.t.Helper()
	res, err := http.PostForm(r.base+TokenPath, form)
	if err != nil {
		r.t.Fatal(err)
	}
	return decodeJSON(r.t, res)
}

// tokens runs the whole flow for a public client at resource as the session's person
// and returns the token response.
func (r *rig) tokens(session, resource string) (clientID string, resp map[string]any) {
	r.t.Helper()
	redirect := "http://127.0.0.1:4567/callback"
	clientID = r.publicClient(redirect)
	verifier, challenge := pkce()
	back := r.consent(r.authParams(clientID, redirect, challenge, resource), session)
	status, body := r.token(url.Values{"grant_type": {"authorization_code"}, "code": {back.Get("code")}, "redirect_uri": {redirect},
		"client_id": {clientID}, "code_verifier": {verifier}, "resource": {resource}})
	if status != http.StatusOK {
		r.t.Fatalf("token: %d %v", status, body)
	}
	return clientID, body
}
