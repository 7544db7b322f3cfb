package identity

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-hub/switchboard/egress"
)

// documentHost serves client metadata documents over https, by path, and records the
// requests it got.
type documentHost struct {
	*httptest.Server
	mu   sync.Mutex
	docs map[string]func(w http.ResponseWriter)
	got  []*http.Request
}

func newDocumentHost(t *testing.T) *documentHost {
	h := &documentHost{docs: map[string]func(http.ResponseWriter){}}
	h.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.got = append(h.got, r)
		serve := h.docs[r.URL.Path]
		h.mu.Unlock()
		if serve == nil {
			http.NotFound(w, r)
			return
		}
		serve(w)
	}))
	t.Cleanup(h.Close)
	return h
}

// put serves body as JSON at path.
func (h *documentHost) put(path, body string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.docs[path] = func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}
	return h.URL + path
}

func (h *documentHost) requests() []*http.Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*http.Request(nil), h.got...)
}

// TestClientMetadataDocument runs the flow for a client whose id is the URL of its
// metadata document: no registration; the consent page says who vouches for it; the
// document is fetched once (with Accept: application/json) and then cached.
func TestClientMetadataDocument(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	host := newDocumentHost(t)
	r.srv.o.Fetch = host.Client().Transport
	redirect := "http://127.0.0.1:4567/callback"
	id := host.URL + "/client.json"
	host.put("/client.json", `{"client_id":"`+id+`","client_name":"Doc client","redirect_uris":["`+redirect+`"],"token_endpoint_auth_method":"none"}`)
	verifier, challenge := pkce()
	session := r.signIn(r.acme, r.ada)
	q := r.authParams(id, redirect, challenge, ResourceURL(r.base, "acme", ""))
	res := r.get(q, session)
	page := readAll(t, res)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "Allow Doc client to use Switchboard?") ||
		!strings.Contains(page, "described by a document at <strong>"+strings.TrimPrefix(host.URL, "https://")+"</strong>") || strings.Contains(page, "has not verified") {
		t.Fatalf("consent page: %d %s", res.StatusCode, page)
	}
	code := r.consent(q, session).Get("code")
	status, body := r.token(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "client_id": {id}, "code_verifier": {verifier}})
	if status != http.StatusOK {
		t.Fatalf("token: %d %v", status, body)
	}
	got := host.requests()
	if len(got) != 1 || got[0].Method != http.MethodGet || got[0].Header.Get("Accept") != "application/json" {
		t.Errorf("document fetched %d times (want once, then cached): %v", len(got), got)
	}
	var n int64
	r.db.Table("oauth_clients").Count(&n)
	if n != 0 {
		t.Errorf("%d clients stored for a metadata document client", n)
	}
}

// TestClientMetadataDocumentRefused checks the documents the server will not use, each
// shown to the person with the reason and never redirected to the client.
func TestClientMetadataDocumentRefused(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	host := newDocumentHost(t)
	r.srv.o.Fetch = host.Client().Transport
	redirect := "http://127.0.0.1:4567/callback"
	doc := func(path, extra string) string {
		return host.put(path, `{"client_id":"`+host.URL+path+`","redirect_uris":["`+redirect+`"]`+extra+`}`)
	}
	host.mu.Lock()
	host.docs["/moved.json"] = func(w http.ResponseWriter) {
		w.Header().Set("Location", host.URL+"/ok.json")
		w.WriteHeader(http.StatusFound)
	}
	host.docs["/text.json"] = func(w http.ResponseWriter) { _, _ = io.WriteString(w, "{}") }
	host.mu.Unlock()
	doc("/ok.json", "")
	tests := map[string]struct{ id, want string }{
		"another client_id":  {host.put("/other.json", `{"client_id":"https://elsewhere.example/c.json","redirect_uris":["`+redirect+`"]}`), "names another client_id"},
		"a secret":           {doc("/secret.json", `,"client_secret":"s"`), "carries a client_secret"},
		"private_key_jwt":    {doc("/jwt.json", `,"token_endpoint_auth_method":"private_key_jwt"`), "only none is offered"},
		"a bad redirect URI": {host.put("/badredirect.json", `{"client_id":"`+host.URL+`/badredirect.json","redirect_uris":["http://evil.example/cb"]}`), "redirect_uris[0] may use http only"},
		"too large":          {doc("/big.json", `,"client_name":"`+strings.Repeat("a", 6000)+`"`), "larger than 5120 bytes"},
		"a redirect":         {host.URL + "/moved.json", "HTTP 302"},
		"not JSON":           {host.URL + "/text.json", "not application/json"},
		"missing":            {host.URL + "/missing.json", "HTTP 404"},
		"no path":            {host.URL + "/", "must have a path"},
		"dot segments":       {host.URL + "/a/../ok.json", "must not have . or .. path segments"},
	}
	session := r.signIn(r.acme, r.ada)
	_, challenge := pkce()
	for name, tc := range tests {
		res := r.get(r.authParams(tc.id, redirect, challenge, ResourceURL(r.base, "acme", "")), session)
		page := readAll(t, res)
		if res.StatusCode != http.StatusBadRequest || res.Header.Get("Location") != "" || !strings.Contains(page, tc.want) {
			t.Errorf("%s: %d %q; want a 400 page saying %q", name, res.StatusCode, res.Header.Get("Location"), tc.want)
		}
	}
	for _, req := range host.requests() {
		if req.URL.Path == "/ok.json" {
			t.Error("a redirect to another document was followed")
		}
	}
}

// TestClientMetadataDocumentSSRF checks that documents are fetched through the SSRF
// guard: a client id at a loopback address is refused before any request reaches it.
func TestClientMetadataDocumentSSRF(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	host := newDocumentHost(t)
	guard, err := egress.NewGuard(false, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := guard.Transport()
	tr.TLSClientConfig = host.Client().Transport.(*http.Transport).TLSClientConfig
	r.srv.o.Fetch = tr
	redirect := "http://127.0.0.1:4567/callback"
	id := host.put("/client.json", `{"client_id":"`+host.URL+`/client.json","redirect_uris":["`+redirect+`"]}`)
	_, challenge := pkce()
	res := r.get(r.authParams(id, redirect, challenge, ResourceURL(r.base, "acme", "")), r.signIn(r.acme, r.ada))
	page := readAll(t, res)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(page, "private, loopback, link-local or reserved address") {
		t.Errorf("loopback document: %d %s", res.StatusCode, page)
	}
	if got := host.requests(); len(got) != 0 {
		t.Errorf("the guard let %d requests through to a loopback address", len(got))
	}
}
