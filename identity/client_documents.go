package identity

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/egress"
)

// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, the
// MCP specification's preferred registration): a client's id is an https URL, and
// the document there says its name and redirect URIs. The server fetches it through
// the SSRF guard, never follows a redirect, and keeps it a short while.
const (
	// maxClientDocumentBytes bounds a metadata document (the draft suggests 5 KB).
	maxClientDocumentBytes = 5 << 10
	// clientDocumentTTL is how long a fetched document is used before it is fetched again.
	clientDocumentTTL = 5 * time.Minute
	// clientDocumentTimeout bounds one fetch.
	clientDocumentTimeout = 5 * time.Second
	// maxCachedClientDocuments bounds the cache.
	maxCachedClientDocuments = 1000
)

// clientDocuments caches fetched metadata documents by client id.
type clientDocuments struct {
	mu      sync.Mutex
	entries map[string]clientDocument
}

type clientDocument struct {
	info    clientInfo
	err     error
	fetched time.Time
}

// isDocumentClientID reports whether a client id names a metadata document.
func isDocumentClientID(id string) bool { return strings.HasPrefix(id, "https://") }

// checkDocumentURL says why a client id cannot be a metadata document's URL: https,
// a host, a path other than /, no fragment, credentials or dot segments.
func checkDocumentURL(id string) string {
	if len(id) > 2000 || !utf8.ValidString(id) {
		return "is longer than 2000 characters"
	}
	u, err := url.Parse(id)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return "must be an https URL"
	}
	if u.Path == "" || u.Path == "/" || u.Fragment != "" || strings.Contains(id, "#") || u.User != nil {
		return "must have a path, and no fragment or credentials"
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return "must not have . or .. path segments"
		}
	}
	return ""
}

// documentClient returns the client a metadata document describes, fetched (or from
// the cache). A failure says why in words for the person or the client.
func (s *Server) documentClient(ctx context.Context, id string) (clientInfo, error) {
	now := s.now()
	s.docs.mu.Lock()
	e, ok := s.docs.entries[id]
	s.docs.mu.Unlock()
	if ok && now.Sub(e.fetched) < clientDocumentTTL {
		return e.info, e.err
	}
	info, err := s.fetchClientDocument(ctx, id)
	if err != nil && switchboard.CodeOf(err) != switchboard.CodeInvalid {
		return clientInfo{}, err // not cached: the next try may reach it
	}
	s.docs.mu.Lock()
	if len(s.docs.entries) >= maxCachedClientDocuments {
		clear(s.docs.entries)
	}
	s.docs.entries[id] = clientDocument{info: info, err: err, fetched: now}
	s.docs.mu.Unlock()
	return info, err
}

// errDocument is a metadata document the server cannot use, and why.
func errDocument(id, why string) error {
	return &switchboard.Error{Code: switchboard.CodeInvalid, Field: "client_id", Message: "the app's metadata document " + id + " " + why}
}

// document is what the server reads of a metadata document.
type document struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	ClientURI               string   `json:"client_uri"`
	LogoURI                 string   `json:"logo_uri"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	ClientSecret            string   `json:"client_secret"`
}

func (s *Server) fetchClientDocument(ctx context.Context, id string) (clientInfo, error) {
	if why := checkDocumentURL(id); why != "" {
		return clientInfo{}, errDocument(id, why)
	}
	if s.o.Fetch == nil {
		return clientInfo{}, errDocument(id, "cannot be fetched: this server does not fetch client metadata documents")
	}
	ctx, cancel := context.WithTimeout(ctx, clientDocumentTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return clientInfo{}, errDocument(id, "is not a URL that can be fetched")
	}
	req.Header.Set("Accept", "application/json")
	client := &http.Client{Transport: s.o.Fetch, CheckRedirect: egress.NoRedirect}
	res, err := client.Do(req)
	if err != nil {
		return clientInfo{}, &switchboard.Error{Code: switchboard.CodeUnavailable, Field: "client_id", Message: "the app's metadata document " + id + " could not be fetched: " + err.Error()}
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return clientInfo{}, errDocument(id, fmt.Sprintf("answered HTTP %d, not 200 (redirects are not followed)", res.StatusCode))
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "application/json" {
		return clientInfo{}, errDocument(id, "is not application/json")
	}
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxClientDocumentBytes+1))
	if err != nil {
		return clientInfo{}, errDocument(id, "could not be read: "+err.Error())
	}
	if len(raw) > maxClientDocumentBytes {
		return clientInfo{}, errDocument(id, fmt.Sprintf("is larger than %d bytes", maxClientDocumentBytes))
	}
	var d document
	if err := json.Unmarshal(raw, &d); err != nil {
		return clientInfo{}, errDocument(id, "is not a JSON object of client metadata")
	}
	switch {
	case d.ClientID != id:
		return clientInfo{}, errDocument(id, "names another client_id ("+strings.ToValidUTF8(d.ClientID, "?")+"): it must name its own URL")
	case d.ClientSecret != "":
		return clientInfo{}, errDocument(id, "carries a client_secret, which a public document must not")
	case d.TokenEndpointAuthMethod != "" && d.TokenEndpointAuthMethod != authNone:
		return clientInfo{}, errDocument(id, "asks for token_endpoint_auth_method "+d.TokenEndpointAuthMethod+"; only none is offered to metadata document clients")
	case len(d.RedirectURIs) == 0 || len(d.RedirectURIs) > maxRedirectURIs:
		return clientInfo{}, errDocument(id, fmt.Sprintf("must list 1 to %d redirect_uris", maxRedirectURIs))
	}
	for i, u := range d.RedirectURIs {
		if why := checkRedirectURI(u); why != "" {
			return clientInfo{}, errDocument(id, fmt.Sprintf("redirect_uris[%d] %s", i, why))
		}
	}
	for _, f := range []struct{ name, value string }{{"client_uri", d.ClientURI}, {"logo_uri", d.LogoURI}} {
		if why := checkWebURL(f.value); why != "" {
			return clientInfo{}, errDocument(id, f.name+" "+why)
		}
	}
	name := strings.TrimSpace(d.ClientName)
	if name == "" || utf8.RuneCountInString(name) > 200 {
		u, _ := url.Parse(id)
		name = u.Host
	}
	return clientInfo{ID: id, Name: name, RedirectURIs: d.RedirectURIs, AuthMethod: authNone, ClientURI: d.ClientURI, LogoURI: d.LogoURI, Verified: true}, nil
}
