package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers"
)

// oauthFlow is what a started authorization code flow keeps (sealed with its state)
// for the callback: the server, the client the hub uses at its authorization server,
// the token endpoint, the resource indicator and the PKCE verifier.
type oauthFlow struct {
	Name         string   `json:"name"`
	URL          string   `json:"url"`
	Transport    string   `json:"transport"`
	Scopes       []string `json:"scopes,omitempty"`
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret,omitempty"`
	AuthMethod   string   `json:"auth_method,omitempty"`
	TokenURL     string   `json:"token_url"`
	Resource     string   `json:"resource,omitempty"`
	Verifier     string   `json:"verifier"`
}

// startOAuth starts the authorization code flow of the MCP authorization spec: the
// server's 401 names its protected resource metadata (or the well-known URL is tried),
// which names the authorization server, whose metadata gives the endpoints; without a
// client id the hub registers a client dynamically, with the hub's callback as its
// redirect URI. The authorization URL carries a PKCE S256 challenge and the resource.
func (s *Service) startOAuth(ctx context.Context, p switchboard.Principal, in RegisterInput) (connections.Authorization, error) {
	redirect := s.conns.RedirectURL()
	if redirect == "" {
		return connections.Authorization{}, switchboard.Errorf(switchboard.CodeUnavailable, "OAuth is not configured on this server (no public URL for its callback)")
	}
	h := transport.NewOAuthHandler(transport.OAuthConfig{
		ClientID: in.ClientID, ClientSecret: in.ClientSecret, RedirectURI: redirect, Scopes: in.Scopes,
		PKCEEnabled: true, HTTPClient: s.oauthHTTP, TokenStore: transport.NewMemoryTokenStore(),
	})
	u, _ := url.Parse(in.URL)
	base := *u
	base.RawQuery, base.Fragment = "", ""
	h.SetBaseURL(base.String())
	if err := s.probe(ctx, in.URL, h); err != nil {
		return connections.Authorization{}, err
	}
	meta, err := h.GetServerMetadata(ctx)
	if err != nil {
		return connections.Authorization{}, s.discoveryError("find the server's authorization server", err)
	}
	endpoints := []struct{ field, url string }{{"authorization_endpoint", meta.AuthorizationEndpoint}, {"token_endpoint", meta.TokenEndpoint}}
	if in.ClientID == "" && meta.RegistrationEndpoint != "" {
		endpoints = append(endpoints, struct{ field, url string }{"registration_endpoint", meta.RegistrationEndpoint})
	}
	for _, e := range endpoints {
		if err := s.checkAddress(ctx, "url", e.url); err != nil {
			return connections.Authorization{}, &switchboard.Error{Code: switchboard.CodeInvalid, Field: "url", Message: "the server's authorization server " + e.field + ": " + switchboard.AsError(err).Message}
		}
	}
	if in.ClientID == "" {
		if meta.RegistrationEndpoint == "" {
			return connections.Authorization{}, switchboard.Invalid("client_id", "is required: the server's authorization server offers no dynamic client registration")
		}
		if err := h.RegisterClient(ctx, "Switchboard"); err != nil {
			return connections.Authorization{}, s.discoveryError("register a client at the server's authorization server", err)
		}
	}
	verifier, err := transport.GenerateCodeVerifier()
	if err != nil {
		return connections.Authorization{}, switchboard.Internal(fmt.Errorf("generate a PKCE verifier: %w", err))
	}
	template, err := h.GetAuthorizationURL(ctx, "STATE", transport.GenerateCodeChallenge(verifier))
	if err != nil {
		return connections.Authorization{}, s.discoveryError("build the authorization URL", err)
	}
	authURL, err := url.Parse(template)
	if err != nil {
		return connections.Authorization{}, switchboard.Internal(fmt.Errorf("parse authorization url: %w", err))
	}
	flow := oauthFlow{
		Name: in.Name, URL: in.URL, Transport: in.Transport, Scopes: in.Scopes, ClientID: h.GetClientID(), ClientSecret: h.GetClientSecret(),
		AuthMethod: authMethod(h.GetTokenEndpointAuthMethod(), h.GetClientSecret(), meta.TokenEndpointAuthMethodsSupported), TokenURL: meta.TokenEndpoint, Resource: authURL.Query().Get("resource"), Verifier: verifier,
	}
	extra, err := json.Marshal(flow)
	if err != nil {
		return connections.Authorization{}, switchboard.Internal(fmt.Errorf("encode oauth flow: %w", err))
	}
	return s.conns.StartExternalOAuth(ctx, p, connections.ExternalStart{
		Provider: Provider, ClientID: flow.ClientID, Shared: in.Shared, Extra: extra,
		AuthURL: func(state string) string {
			q := authURL.Query()
			q.Set("state", state)
			u := *authURL
			u.RawQuery = q.Encode()
			return u.String()
		},
	})
}

// authMethod is how the client authenticates at the token endpoint: as registered
// (dynamic registration answers it), else none for a client without a secret, else
// client_secret_post when the server lists it, else client_secret_basic (RFC 8414's
// default when the server lists nothing).
func authMethod(registered, secret string, supported []string) string {
	switch {
	case registered != "":
		return registered
	case secret == "":
		return "none"
	case slices.Contains(supported, "client_secret_post"):
		return "client_secret_post"
	default:
		return "client_secret_basic"
	}
}

// probe sends the server an initialize without credentials: a server that wants OAuth
// answers 401, naming its protected resource metadata, which the handler then uses.
func (s *Service) probe(ctx context.Context, serverURL string, h *transport.OAuthHandler) error {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + "2025-06-18" + `","capabilities":{},"clientInfo":{"name":"switchboard","version":"` + s.version + `"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL, strings.NewReader(body))
	if err != nil {
		return switchboard.Invalid("url", "is not a URL")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := s.oauthHTTP.Do(req)
	if err != nil {
		if r := refusal(err); r != nil {
			return r
		}
		return &switchboard.Error{Code: switchboard.CodeUpstream, Message: "could not reach the remote MCP server; check the url", Err: err}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode == http.StatusUnauthorized {
		h.HandleUnauthorizedResponse(resp)
	}
	return nil
}

// discoveryError says which step of the OAuth discovery failed, without secrets.
func (s *Service) discoveryError(doing string, err error) error {
	if r := refusal(err); r != nil {
		return r
	}
	if isTransportFailure(err) {
		s.log.Warn("remote MCP authorization server could not be reached", "doing", doing, "err", redactQuery(err))
		return &switchboard.Error{Code: switchboard.CodeUpstream, Field: "auth", Message: fmt.Sprintf("could not %s: the server could not be reached", doing), Err: err}
	}
	msg := err.Error()
	if len(msg) > 300 {
		msg = msg[:300]
	}
	return &switchboard.Error{Code: switchboard.CodeUpstream, Field: "auth", Message: fmt.Sprintf("could not %s: %s", doing, msg), Err: err}
}

// finishOAuth exchanges the callback's code (with the PKCE verifier, the redirect URI
// and the resource), opens a session with the token to prove it and read the tools,
// and returns the connection to store.
func (s *Service) finishOAuth(ctx context.Context, cb providers.OAuthCallback) (providers.NewConnection, providers.Credentials, error) {
	var flow oauthFlow
	if err := json.Unmarshal(cb.Extra, &flow); err != nil {
		return providers.NewConnection{}, providers.Credentials{}, switchboard.Internal(fmt.Errorf("decode oauth flow: %w", err))
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {cb.Code}, "redirect_uri": {cb.RedirectURI}, "code_verifier": {flow.Verifier}}
	if flow.Resource != "" {
		form.Set("resource", flow.Resource)
	}
	tok, err := s.tokenRequest(ctx, flow.TokenURL, flow.ClientID, flow.ClientSecret, flow.AuthMethod, form, "exchange the authorization code")
	if err != nil {
		return providers.NewConnection{}, providers.Credentials{}, err
	}
	meta := map[string]string{metaURL: flow.URL, metaTransport: flow.Transport, metaName: flow.Name, metaAuth: AuthOAuth,
		metaTokenURL: flow.TokenURL, metaAuthMethod: flow.AuthMethod, metaResource: flow.Resource}
	c := providers.NewConnection{AuthKind: providers.AuthOAuth2, AccountID: flow.Name, AccountLabel: flow.Name, Scopes: flow.Scopes, Meta: meta}
	creds := providers.Credentials{AccessToken: tok.AccessToken, TokenType: "Bearer", RefreshToken: tok.RefreshToken, Expiry: tok.expiry(), ClientID: flow.ClientID, ClientSecret: flow.ClientSecret}
	access := tok.AccessToken
	sess, err := s.dial(ctx, endpoint{name: flow.Name, url: flow.URL, transport: flow.Transport, token: func(context.Context) (string, error) { return access, nil }}, nil)
	if err != nil {
		return providers.NewConnection{}, providers.Credentials{}, err
	}
	sess.close()
	return c, creds, nil
}

// refreshOAuth refreshes a connection's token at the token endpoint its flow found.
func (s *Service) refreshOAuth(ctx context.Context, c providers.Connection, creds providers.Credentials) (providers.Credentials, error) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {creds.RefreshToken}}
	if r := c.Meta[metaResource]; r != "" {
		form.Set("resource", r)
	}
	tok, err := s.tokenRequest(ctx, c.Meta[metaTokenURL], creds.ClientID, creds.ClientSecret, c.Meta[metaAuthMethod], form, "refresh the token")
	if e := switchboard.AsError(err); e != nil && e.Code == switchboard.CodeInvalid {
		// This node's address guard refused the authorization server: its own
		// configuration, which its peers may not share, and no verdict on the token.
		// The connection stays as it is; a node that may reach the server refreshes it.
		return connections.Credentials{}, &switchboard.Error{Code: switchboard.CodeUnavailable,
			Message: "this node may not reach the authorization server (" + e.Message + "); another node refreshes the token", Err: err}
	}
	if err != nil {
		return connections.Credentials{}, err
	}
	return connections.Credentials{AccessToken: tok.AccessToken, TokenType: "Bearer", RefreshToken: tok.RefreshToken, Expiry: tok.expiry(), ClientID: creds.ClientID, ClientSecret: creds.ClientSecret}, nil
}

// tokenAnswer is a token endpoint's answer (RFC 6749 sections 5.1 and 5.2).
type tokenAnswer struct {
	AccessToken      string      `json:"access_token"`
	TokenType        string      `json:"token_type"`
	RefreshToken     string      `json:"refresh_token"`
	ExpiresIn        json.Number `json:"expires_in"`
	Error            string      `json:"error"`
	ErrorDescription string      `json:"error_description"`
	at               time.Time
}

func (t *tokenAnswer) expiry() time.Time {
	n, err := strconv.ParseInt(t.ExpiresIn.String(), 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return t.at.Add(time.Duration(n) * time.Second)
}

// tokenRequest posts a grant to a token endpoint, authenticating the client the way it
// was registered (client_secret_basic, client_secret_post, or none for a public
// client). A refused grant is a reconnect error; the answer's body is never shown.
func (s *Service) tokenRequest(ctx context.Context, tokenURL, clientID, secret, method string, form url.Values, doing string) (*tokenAnswer, error) {
	if method == "" {
		method = "client_secret_post"
		if secret == "" {
			method = "none"
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenURL, nil)
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("token request: %w", err))
	}
	switch method {
	case "client_secret_basic":
		req.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(secret))
	case "client_secret_post":
		form.Set("client_id", clientID)
		form.Set("client_secret", secret)
	default:
		form.Set("client_id", clientID)
	}
	body := form.Encode()
	req.Body = io.NopCloser(strings.NewReader(body))
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	start := time.Now()
	resp, err := s.oauthHTTP.Do(req)
	if err != nil {
		if r := refusal(err); r != nil {
			return nil, r
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is fine to keep, the body is not: neither is in ue.Err
		}
		return nil, &switchboard.Error{Code: switchboard.CodeUpstream, Message: fmt.Sprintf("could not reach the authorization server to %s; try again", doing), Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, &switchboard.Error{Code: switchboard.CodeUpstream, Message: fmt.Sprintf("could not read the authorization server's answer to %s", doing), Err: err}
	}
	var tok tokenAnswer
	_ = json.NewDecoder(bytes.NewReader(raw)).Decode(&tok)
	tok.at = start
	if resp.StatusCode/100 != 2 || tok.Error != "" || tok.AccessToken == "" {
		code := switchboard.CodeUpstream
		if tok.Error == "invalid_grant" || tok.Error == "invalid_client" || tok.Error == "unauthorized_client" || resp.StatusCode == http.StatusUnauthorized {
			code = switchboard.CodeReconnect
		}
		msg := fmt.Sprintf("the authorization server refused to %s (HTTP %d)", doing, resp.StatusCode)
		if tok.Error != "" {
			msg += ": " + oauthCode(tok.Error)
		}
		return nil, &switchboard.Error{Code: code, Message: msg}
	}
	return &tok, nil
}
