package oauthtest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// OIDCOptions configure an OpenID provider.
type OIDCOptions struct {
	ClientID     string
	ClientSecret string
	// RedirectURI is the client's one registered redirect URI; authorization requests
	// must name it exactly.
	RedirectURI string
	// TokenTTL is the lifetime of ID tokens (an hour when zero).
	TokenTTL time.Duration
}

// Person is who is signed in at the provider: the authorization endpoint issues a
// code for them at once, as a provider does for someone with a session there.
type Person struct {
	Subject       string
	Email         string
	EmailVerified bool
}

// OIDC is a running OpenID Connect provider: discovery
// (/.well-known/openid-configuration), its signing keys (JWKS), the authorization
// endpoint (code flow, PKCE S256 required, the nonce carried into the ID token) and the
// token endpoint (client_secret_basic or client_secret_post, codes used once), which
// answers with an RS256-signed ID token. Tests choose who is signed in (SignIn) and
// may change the claims of the next ID token (TamperNext).
type OIDC struct {
	*httptest.Server
	opts OIDCOptions
	key  *rsa.PrivateKey
	kid  string

	mu       sync.Mutex
	person   *Person
	codes    map[string]oidcCode
	tamper   []func(claims map[string]any)
	forge    bool
	requests []Request
}

type oidcCode struct {
	person    Person
	nonce     string
	challenge string
	redirect  string
	used      bool
}

// NewOIDC starts an OpenID provider; it stops when the test ends.
func NewOIDC(t testing.TB, o OIDCOptions) *OIDC {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	if o.TokenTTL == 0 {
		o.TokenTTL = time.Hour
	}
	p := &OIDC{opts: o, key: key, kid: "k-" + randomString(8), codes: map[string]oidcCode{}}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

// Issuer is the provider's issuer identifier.
func (p *OIDC) Issuer() string { return p.URL }

// SignIn makes who the person signed in at the provider is; nil signs them out (the
// authorization endpoint then answers login_required).
func (p *OIDC) SignIn(person *Person) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.person = person
}

// TamperNext changes the claims of the next ID token the token endpoint issues (for
// tests of tokens a relying party must refuse).
func (p *OIDC) TamperNext(f func(claims map[string]any)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tamper = append(p.tamper, f)
}

// Requests returns every request received so far.
func (p *OIDC) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.requests...)
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (p *OIDC) serve(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	p.mu.Lock()
	p.requests = append(p.requests, Request{Method: r.Method, Path: r.URL.Path, Form: r.Form, Auth: r.Header.Get("Authorization")})
	p.mu.Unlock()
	switch {
	case r.URL.Path == "/.well-known/openid-configuration" && r.Method == http.MethodGet:
		writeJSONBody(w, http.StatusOK, map[string]any{
			"issuer": p.URL, "authorization_endpoint": p.URL + "/authorize", "token_endpoint": p.URL + "/token",
			"jwks_uri": p.URL + "/jwks", "response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256"}, "scopes_supported": []string{"openid", "email", "profile"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
			"code_challenge_methods_supported":      []string{"S256"}, "grant_types_supported": []string{"authorization_code"},
		})
	case r.URL.Path == "/jwks" && r.Method == http.MethodGet:
		writeJSONBody(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: p.kid, Algorithm: "RS256", Use: "sig"}}})
	case r.URL.Path == "/authorize" && r.Method == http.MethodGet:
		p.authorize(w, r)
	case r.URL.Path == "/token" && r.Method == http.MethodPost:
		p.token(w, r)
	default:
		writeJSONBody(w, http.StatusNotFound, map[string]string{"error": "not_found"})
	}
}

// authorize answers an authorization request as a provider whose person is signed
// in: errors it cannot send back are shown (400); the others go to the redirect URI.
func (p *OIDC) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != p.opts.ClientID || q.Get("redirect_uri") != p.opts.RedirectURI {
		http.Error(w, "unknown client or redirect_uri mismatch", http.StatusBadRequest)
		return
	}
	back := func(v url.Values) {
		u, _ := url.Parse(p.opts.RedirectURI)
		if s := q.Get("state"); s != "" {
			v.Set("state", s)
		}
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
	switch {
	case q.Get("response_type") != "code":
		back(url.Values{"error": {"unsupported_response_type"}})
		return
	case !slices.Contains(strings.Fields(q.Get("scope")), "openid"):
		back(url.Values{"error": {"invalid_scope"}, "error_description": {"openid is required"}})
		return
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		back(url.Values{"error": {"invalid_request"}, "error_description": {"PKCE S256 is required"}})
		return
	}
	p.mu.Lock()
	person := p.person
	code := randomString(24)
	if person != nil {
		p.codes[code] = oidcCode{person: *person, nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
	}
	p.mu.Unlock()
	if person == nil {
		back(url.Values{"error": {"login_required"}})
		return
	}
	back(url.Values{"code": {code}})
}

func tokenError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSONBody(w, status, map[string]string{"error": code, "error_description": desc})
}

// token exchanges a code: the client authenticates, the code is used once, the
// redirect URI and the PKCE verifier match.
func (p *OIDC) token(w http.ResponseWriter, r *http.Request) {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	}
	if id != p.opts.ClientID || subtle.ConstantTimeCompare([]byte(secret), []byte(p.opts.ClientSecret)) != 1 {
		tokenError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	if r.PostFormValue("grant_type") != "authorization_code" {
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type", "only authorization_code")
		return
	}
	p.mu.Lock()
	c, ok := p.codes[r.PostFormValue("code")]
	if ok {
		delete(p.codes, r.PostFormValue("code"))
	}
	var tamper func(map[string]any)
	if ok && len(p.tamper) > 0 {
		tamper, p.tamper = p.tamper[0], p.tamper[1:]
	}
	forge := ok && p.forge
	if forge {
		p.forge = false
	}
	p.mu.Unlock()
	if !ok {
		tokenError(w, http.StatusBadRequest, "invalid_grant", "unknown or used code")
		return
	}
	if r.PostFormValue("redirect_uri") != c.redirect {
		tokenError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request's")
		return
	}
	sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
	if base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge {
		tokenError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge")
		return
	}
	var err error
	now := time.Now()
	claims := map[string]any{
		"iss": p.URL, "sub": c.person.Subject, "aud": p.opts.ClientID, "iat": now.Unix(), "exp": now.Add(p.opts.TokenTTL).Unix(),
		"email": c.person.Email, "email_verified": c.person.EmailVerified,
	}
	if c.nonce != "" {
		claims["nonce"] = c.nonce
	}
	if tamper != nil {
		tamper(claims)
	}
	key := p.key
	if forge {
		if key, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			tokenError(w, http.StatusInternalServerError, "server_error", err.Error())
			return
		}
	}
	idToken, err := p.sign(key, claims)
	if err != nil {
		tokenError(w, http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSONBody(w, http.StatusOK, map[string]any{"access_token": randomString(24), "token_type": "Bearer", "expires_in": 3600, "id_token": idToken})
}

// sign makes a compact JWS of claims with key, under the provider's key id.
func (p *OIDC) sign(key *rsa.PrivateKey, claims map[string]any) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: p.kid}}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

// ForgeNext makes the next ID token signed by a key the provider never published,
// under the published key's id, as a forger would.
func (p *OIDC) ForgeNext() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.forge = true
}

func writeJSONBody(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
