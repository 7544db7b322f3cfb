package identity

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
)

// Token endpoint authentication methods (RFC 7591).
const (
	authNone        = "none"
	authSecretPost  = "client_secret_post"
	authSecretBasic = "client_secret_basic"
)

// clientInfo is what the server knows of a client, however it was registered.
type clientInfo struct {
	ID           string
	Name         string
	RedirectURIs []string
	AuthMethod   string
	secretHash   string
	ClientURI    string
	LogoURI      string
	// Verified is true for clients identified by a metadata document at their own
	// https URL; a dynamically registered client says what it likes about itself.
	Verified bool
}

// errUnknownClient is the answer for a client id the server does not know.
func errUnknownClient() error {
	return &switchboard.Error{Code: switchboard.CodeNotFound, Message: "unknown client_id: register the client first (dynamic client registration) or use its metadata document URL"}
}

// client returns a registered client.
func (s *Server) client(ctx context.Context, id string) (clientInfo, error) {
	if id == "" || len(id) > 2048 {
		return clientInfo{}, errUnknownClient()
	}
	if isDocumentClientID(id) {
		return s.documentClient(ctx, id)
	}
	var row client
	err := s.o.DB.WithContext(ctx).Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return clientInfo{}, errUnknownClient()
	}
	if err != nil {
		return clientInfo{}, switchboard.Internal(fmt.Errorf("read client: %w", err))
	}
	c := clientInfo{ID: row.ID, Name: row.Name, AuthMethod: row.AuthMethod, secretHash: row.SecretHash, ClientURI: row.ClientURI, LogoURI: row.LogoURI}
	if err := json.Unmarshal([]byte(row.RedirectURIs), &c.RedirectURIs); err != nil {
		return clientInfo{}, switchboard.Internal(fmt.Errorf("read client %s redirect URIs: %w", row.ID, err))
	}
	return c, nil
}

// allowsRedirect reports whether uri is one of the client's redirect URIs, exactly.
func (c clientInfo) allowsRedirect(uri string) bool {
	for _, r := range c.RedirectURIs {
		if r == uri {
			return true
		}
	}
	return false
}

// secretMatches checks a confidential client's secret in constant time.
func (c clientInfo) secretMatches(secret string) bool {
	if c.secretHash == "" || secret == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(hashSecret(secret)), []byte(c.secretHash)) == 1
}

// checkRedirectURI says why a redirect URI may not be registered, or "" if it may:
// https; http only to this machine's loopback (native apps, RFC 8252); or a
// private-use scheme with a dot in it (com.example.app:/cb). No fragment, no
// credentials in it.
func checkRedirectURI(raw string) string {
	if raw == "" || len(raw) > 2000 || !utf8.ValidString(raw) {
		return "must be a URL of at most 2000 characters"
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "must be an absolute URL"
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return "must not have a fragment"
	}
	if u.User != nil {
		return "must not carry a user name or password"
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		if u.Host == "" {
			return "must name a host"
		}
	case "http":
		if !loopbackHost(u.Hostname()) {
			return "may use http only for localhost, 127.0.0.1 or [::1]; use https"
		}
	default:
		if !strings.Contains(u.Scheme, ".") {
			return "must be https, http on localhost, or a private-use scheme such as com.example.app"
		}
	}
	return ""
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// checkWebURL says why an optional client_uri or logo_uri is not acceptable.
func checkWebURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || len(raw) > 2000 {
		return "must be an https URL of at most 2000 characters"
	}
	return ""
}
