package openapis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/providers"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/providers/openapi"
)

// AddInput is a tenant's request to add an API: its description, given inline (a JSON
// object, or JSON or YAML text) or by the URL to fetch it from, and how it becomes a
// provider.
type AddInput struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description json.RawMessage `json:"description,omitempty"`
	URL         string          `json:"url,omitempty"`
	BaseURL     string          `json:"base_url,omitempty"`
	Auth        string          `json:"auth,omitempty"`
	Operations  []string        `json:"operations,omitempty"`
	Tags        []string        `json:"tags,omitempty"`
	// ClientID and ClientSecret are the API's OAuth app at its authorization server, for
	// a scheme of OAuth 2.0's authorization code or client credentials flow.
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
}

// View is a tenant's API as the API answers it.
type View struct {
	Name        string               `json:"name"`
	Title       string               `json:"title"`
	Description string               `json:"description"`
	BaseURL     string               `json:"base_url"`
	SourceURL   string               `json:"source_url,omitempty"`
	Auth        string               `json:"auth,omitempty"`
	AuthKinds   []providers.AuthKind `json:"auth_kinds"`
	TokenHelp   string               `json:"token_help,omitempty"`
	DocsURL     string               `json:"docs_url,omitempty"`
	Operations  []string             `json:"operations,omitempty"`
	Tags        []string             `json:"tags,omitempty"`
	ClientID    string               `json:"client_id,omitempty"`
	Tools       []string             `json:"tools"`
	CreatedAt   time.Time            `json:"created_at"`
}

// Add adds an API for p's tenant (p an admin): the description is read (or fetched
// through the SSRF guard, bounded in size and time), made into a provider with the
// options, and each host its requests would reach is checked by the guard; then it is
// stored and every node is told. Bad input is an invalid error naming the field, and
// nothing is stored.
func (s *Service) Add(ctx context.Context, p switchboard.Principal, in AddInput) (View, error) {
	if err := admin(p); err != nil {
		return View{}, err
	}
	in.Name, in.URL, in.BaseURL, in.Auth = strings.TrimSpace(in.Name), strings.TrimSpace(in.URL), strings.TrimSpace(in.BaseURL), strings.TrimSpace(in.Auth)
	in.Operations, in.Tags, in.ClientID = trimmed(in.Operations), trimmed(in.Tags), strings.TrimSpace(in.ClientID)
	if in.Name == "" {
		return View{}, switchboard.Invalid("name", "is required: the API's name, the prefix of its tools (lower-case snake_case)")
	}
	if with, reserved := s.reg.ReservedPrefix(in.Name); reserved || in.Name == Provider {
		if with == "" {
			with = Provider
		}
		return View{}, switchboard.Invalid("name", fmt.Sprintf("%q would name its tools like the hub's own %s (%s_…); pick another name", in.Name, with, with))
	}
	if err := s.checkRemoteNames(ctx, p, in.Name); err != nil {
		return View{}, err
	}
	if len(in.Title) > 255 {
		return View{}, switchboard.Invalid("title", "must be at most 255 characters")
	}
	doc, source, err := s.description(ctx, in)
	if err != nil {
		return View{}, err
	}
	opts := openapi.Options{Name: in.Name, Title: in.Title, BaseURL: in.BaseURL, Auth: in.Auth, Operations: in.Operations, Tags: in.Tags}
	parsed, spec, err := parse(ctx, doc, opts)
	if source != "" && errors.Is(err, openapi.ErrNotDescription) {
		// What the URL answered is not repeated: it could be any service's.
		s.log.WarnContext(ctx, "an API description fetched is none", "url", redacted(source), "err", err)
		return View{}, switchboard.Invalid("url", "the description could not be fetched: what it answered is not an OpenAPI or Swagger description")
	}
	if err != nil {
		return View{}, err
	}
	if err := s.checkHosts(ctx, spec, in.BaseURL != ""); err != nil {
		return View{}, err
	}
	f, err := s.checkApp(ctx, parsed, in)
	if err != nil {
		return View{}, err
	}
	stored, err := compress(doc)
	if err != nil {
		return View{}, switchboard.Internal(err)
	}
	a := API{ID: switchboard.NewID("oas"), Name: in.Name, Title: in.Title, BaseURL: in.BaseURL, SourceURL: source, Auth: in.Auth, Operations: in.Operations, Tags: in.Tags,
		Document: stored, CreatedBy: p.UserID, OAuthClientID: in.ClientID}
	if in.ClientSecret != "" {
		if s.kr == nil {
			return View{}, switchboard.Internal(errors.New("openapis: no keyring to seal an OAuth client secret"))
		}
		if a.OAuthSecretSealed, a.OAuthSecretKeyID, err = s.kr.Seal(ctx, []byte(in.ClientSecret), secretAAD(p.TenantID, a.ID)); err != nil {
			return View{}, switchboard.Internal(fmt.Errorf("seal the OAuth client secret: %w", err))
		}
	}
	if err := s.store.create(ctx, p.TenantID, &a); err != nil {
		return View{}, err
	}
	spec.AuthKinds = authKinds(f, a.OAuthClientID != "")
	s.record(p, "added API "+a.Name+" ("+spec.Title+")")
	s.changed(ctx, p.TenantID, a.Name)
	return view(a, spec), nil
}

// checkRemoteNames refuses a name that would name its tools like a remote MCP server's
// of the tenant (docs and docs_v2 both make docs_v2_…): equal, or one the other and "_".
func (s *Service) checkRemoteNames(ctx context.Context, p switchboard.Principal, name string) error {
	servers, err := s.conns.AccountIDs(ctx, p, remotemcp.Provider)
	if err != nil {
		return err
	}
	for _, other := range servers {
		if name == other || strings.HasPrefix(name, other+"_") || strings.HasPrefix(other, name+"_") {
			return &switchboard.Error{Code: switchboard.CodeConflict, Field: "name", Message: fmt.Sprintf(
				"%q clashes with the tenant's remote MCP server %q: a tool named %s_… could belong to either; pick another name", name, other, min(name, other))}
		}
	}
	return nil
}

// NameClash refuses, for a remote MCP server's registration, a name that would name
// its tools like one of the tenant's APIs' (equal, or one the other and "_"): set it as
// remotemcp.Service.SetNameCheck.
func (s *Service) NameClash(ctx context.Context, p switchboard.Principal, name string) error {
	apis, err := s.store.list(ctx, p.TenantID)
	if err != nil {
		return err
	}
	for _, a := range apis {
		if name == a.Name || strings.HasPrefix(name, a.Name+"_") || strings.HasPrefix(a.Name, name+"_") {
			return &switchboard.Error{Code: switchboard.CodeConflict, Field: "name", Message: fmt.Sprintf(
				"%q clashes with the tenant's API %q (added by its OpenAPI description): a tool named %s_… could belong to either; pick another name", name, a.Name, min(name, a.Name))}
		}
	}
	return nil
}

// checkApp checks the OAuth app given for an API: only for a scheme of OAuth 2.0's
// authorization code or client credentials flow, whose token endpoint the guard lets
// through, and with a client id. It returns the scheme's flow.
func (s *Service) checkApp(ctx context.Context, doc *openapi3.T, in AddInput) (*flow, error) {
	in.ClientID = strings.TrimSpace(in.ClientID)
	f := flowOf(doc, in.Auth)
	switch {
	case in.ClientID == "" && in.ClientSecret != "":
		return nil, switchboard.Invalid("client_id", "is required with a client_secret")
	case in.ClientID == "":
		return f, nil
	case f == nil:
		return nil, switchboard.Invalid("client_id", "is for an API whose scheme is OAuth 2.0's authorization code or client credentials flow; this one's is not (its connections paste a token)")
	case f.clientCredentials && in.ClientSecret == "":
		return nil, switchboard.Invalid("client_secret", "is required for the client credentials flow")
	case len(in.ClientID) > 255:
		return nil, switchboard.Invalid("client_id", "must be at most 255 characters")
	}
	if err := s.checkHost(ctx, "description", f.tokenURL); err != nil {
		return nil, err
	}
	return f, nil
}

// description is the input's description: inline (a JSON object, or a string of JSON
// or YAML) or fetched from its URL; exactly one of them.
func (s *Service) description(ctx context.Context, in AddInput) ([]byte, string, error) {
	inline := len(in.Description) > 0 && string(in.Description) != "null"
	switch {
	case inline && in.URL != "":
		return nil, "", switchboard.Invalid("url", "give the description inline or by its URL, not both")
	case len(in.Description) > MaxDescription:
		return nil, "", switchboard.Invalid("description", fmt.Sprintf("is larger than %d MB", MaxDescription>>20))
	case inline:
		var text string
		if json.Unmarshal(in.Description, &text) == nil {
			return []byte(text), "", nil
		}
		if t := strings.TrimSpace(string(in.Description)); !strings.HasPrefix(t, "{") {
			return nil, "", switchboard.Invalid("description", "must be the description: a JSON object, or a string of JSON or YAML")
		}
		return in.Description, "", nil
	case in.URL != "":
		data, err := s.fetchDescription(ctx, in.URL)
		return data, in.URL, err
	}
	return nil, "", switchboard.Invalid("description", "is required: give the OpenAPI description inline, or its url")
}

// fetchDescription fetches a description by its URL through the SSRF guard, bounded in
// size and time. Its errors say that the description could not be fetched, and the
// HTTP status when there was one, never why the connection failed, the address it
// went to or what was answered (which would make it a port scanner): the server's log
// has them.
func (s *Service) fetchDescription(ctx context.Context, raw string) ([]byte, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, switchboard.Invalid("url", "must be an absolute http or https URL")
	}
	if err := s.checkHost(ctx, "url", raw); err != nil {
		return nil, err
	}
	failed := func(reason string, err error) error {
		s.log.WarnContext(ctx, "fetch an API description", "url", u.Redacted(), "err", err)
		return &switchboard.Error{Code: switchboard.CodeInvalid, Field: "url", Message: "the description could not be fetched" + reason, Err: err}
	}
	request := ctx
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, switchboard.Invalid("url", "is not a URL that can be fetched")
	}
	req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.5")
	req.Header.Set("User-Agent", "Switchboard/1.0")
	resp, err := s.fetch.Do(req)
	if err != nil {
		var re *egress.RefusedError
		if errors.As(err, &re) { // a redirect to a private address, or a name that now resolves to one
			s.log.WarnContext(ctx, "fetch an API description", "url", u.Redacted(), "err", err)
			return nil, &switchboard.Error{Code: switchboard.CodeInvalid, Field: "url", Message: refused(raw), Err: err}
		}
		if request.Err() != nil {
			return nil, request.Err() // the client left: nobody reads an answer
		}
		if ctx.Err() != nil {
			return nil, failed(fmt.Sprintf(": it did not arrive within %s", s.timeout), err)
		}
		return nil, failed("", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, failed(fmt.Sprintf(": the URL answered HTTP %d", resp.StatusCode), fmt.Errorf("HTTP %d", resp.StatusCode))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxDescription+1))
	if err != nil {
		if request.Err() != nil {
			return nil, request.Err()
		}
		if ctx.Err() != nil {
			return nil, failed(fmt.Sprintf(": it did not arrive within %s", s.timeout), err)
		}
		return nil, failed(": the answer was cut off", err)
	}
	if len(data) > MaxDescription {
		return nil, switchboard.Invalid("url", fmt.Sprintf("the description is larger than %d MB", MaxDescription>>20))
	}
	return data, nil
}

// redacted is a URL without its password, for the log.
func redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Redacted()
}

// List returns p's tenant's APIs (any user of the tenant may see them).
func (s *Service) List(ctx context.Context, p switchboard.Principal) ([]View, error) {
	if p.TenantID == "" {
		return nil, switchboard.Errorf(switchboard.CodeUnauthorized, "no tenant")
	}
	apis, err := s.store.list(ctx, p.TenantID)
	if err != nil {
		return nil, err
	}
	out := make([]View, 0, len(apis))
	for _, a := range apis {
		b, err := s.build(ctx, p.TenantID, a.Name, a.ID)
		if err != nil {
			s.log.WarnContext(ctx, "build a tenant's API", "api", a.Name, "err", err)
			continue
		}
		out = append(out, view(a, b.spec))
	}
	return out, nil
}

// Tools returns the tools of p's tenant's API of that name, as a connection offers them:
// for the catalog. Not found when the tenant has no API of that name.
func (s *Service) Tools(ctx context.Context, p switchboard.Principal, name string) ([]*providers.Tool, error) {
	if p.TenantID == "" {
		return nil, switchboard.Errorf(switchboard.CodeUnauthorized, "no tenant")
	}
	b, err := s.build(ctx, p.TenantID, name, "")
	if err != nil {
		return nil, err
	}
	return slices.Clone(b.tools), nil
}

// Delete deletes p's tenant's API of that name (p an admin) and disconnects its
// connections; every node is told.
func (s *Service) Delete(ctx context.Context, p switchboard.Principal, name string) error {
	if err := admin(p); err != nil {
		return err
	}
	conns, err := s.connectionsOf(ctx, p, name)
	if err != nil {
		return err
	}
	if err := s.store.delete(ctx, p.TenantID, name); err != nil {
		return err
	}
	for _, c := range conns {
		if err := s.conns.Delete(ctx, p, c.ID); err != nil && switchboard.CodeOf(err) != switchboard.CodeNotFound {
			s.log.WarnContext(ctx, "disconnect a deleted API's connection", "api", name, "connection", c.ID, "err", err)
		}
	}
	s.record(p, "deleted API "+name)
	s.changed(ctx, p.TenantID, name)
	return nil
}

// view is a stored API as answered.
func view(a API, spec providers.Spec) View {
	tools := make([]string, 0, len(spec.Operations))
	for _, op := range spec.Operations {
		tools = append(tools, spec.Name+"_"+op.Info().Name)
	}
	base := a.BaseURL
	if base == "" {
		base = spec.BaseURL
	}
	return View{Name: a.Name, Title: spec.Title, Description: spec.Description, BaseURL: base, SourceURL: a.SourceURL, Auth: a.Auth,
		AuthKinds: spec.AuthKinds, TokenHelp: spec.TokenHelp, DocsURL: spec.DocsURL, Operations: a.Operations, Tags: a.Tags, ClientID: a.OAuthClientID, Tools: tools, CreatedAt: a.CreatedAt}
}

// admin refuses anyone but an admin user of the tenant.
func admin(p switchboard.Principal) error {
	if !p.IsAdmin() {
		return switchboard.Errorf(switchboard.CodeForbidden, "only an admin of the tenant can add or delete its APIs")
	}
	return nil
}

// record audits a change to the tenant's APIs.
func (s *Service) record(p switchboard.Principal, detail string) {
	if s.rec == nil {
		return
	}
	s.rec.Record(audit.Event{TenantID: p.TenantID, Kind: audit.KindOpenAPIChanged, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok", Detail: detail})
}
