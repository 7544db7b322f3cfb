// Package openapi makes a provider of any API with an OpenAPI description (3.0, 3.1, or
// Swagger 2.0): each operation becomes a tool {name}_{operation} with an input schema
// from its parameters and request body, an output schema from its success answer, hints
// from its method, and the credential put where the description's securitySchemes say.
// Its requests go through the provider SDK's client (rate limit, retries, size bound,
// upstream errors) like any provider's.
//
// Start from [New] and [FromDocument] (a provider from a description, by [Options]) and
// [LoadDir] (the operator's directory, by [FileOptions]).
package openapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// Options say how a description becomes a provider.
type Options struct {
	// Name is the provider's name and its tools' prefix: lower-case snake_case.
	Name string
	// Title is the API's name as people write it; "" takes the description's title.
	Title string
	// BaseURL overrides the description's servers; it is required when they give no
	// absolute URL.
	BaseURL string
	// Auth names the securitySchemes entry to use; "" takes the one the description
	// asks for first (its global security, else its operations').
	Auth string
	// Operations and Tags choose the operations that become tools (by operationId, or by
	// tag); both empty expose them all.
	Operations []string
	Tags       []string
	// Tools rename and redescribe operations, by operationId: a catalog's curated
	// tools. The operations they name are chosen like Operations'.
	Tools map[string]Tool
	// Credential are where the connection's credential goes besides the places the
	// description's securitySchemes name (a catalog preset's own placement): like
	// those, a parameter there is no tool's input.
	Credential []Place
}

// Place is a header, query parameter or cookie (In) of that Name that carries a
// connection's credential, or one part of it.
type Place struct {
	In, Name string
}

// Tool is what a curated tool says of its operation instead of the description: its
// name (without the provider's prefix), its description, and the OAuth scopes it needs.
// Empty fields keep what the description gives.
type Tool struct {
	Name        string
	Description string
	Scopes      []string
}

var providerName = regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9]+)*$`)

// methods in the order an operation's tools are listed, per path.
var methods = []string{http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodOptions, http.MethodHead, http.MethodPatch, http.MethodTrace}

// New builds a provider from a description (see Load). Bad input is an invalid error
// naming the field: name, base_url, auth, operations, or the description itself. It
// stops when ctx ends, returning its error.
func New(ctx context.Context, data []byte, o Options) (providers.Spec, error) {
	doc, err := Load(ctx, data)
	if err != nil {
		return providers.Spec{}, err
	}
	return FromDocument(ctx, doc, o)
}

// FromDocument builds a provider from a loaded description. It stops when ctx ends,
// returning its error.
func FromDocument(ctx context.Context, doc *openapi3.T, o Options) (providers.Spec, error) {
	if !providerName.MatchString(o.Name) || len(o.Name) > 32 {
		return providers.Spec{}, switchboard.Invalid("name", "must be lower-case snake_case ([a-z0-9_]), at most 32 characters")
	}
	spec := providers.Spec{Name: o.Name, Title: o.Title, RateLimit: providers.RateLimit{PerSecond: 10, Burst: 20}}
	if doc.Info != nil {
		if spec.Title == "" {
			spec.Title = strings.TrimSpace(doc.Info.Title)
		}
		spec.Description = firstLine(doc.Info.Description)
	}
	if spec.Title == "" {
		spec.Title = o.Name
	}
	if spec.Description == "" {
		spec.Description = spec.Title + "'s API, from its OpenAPI description."
	}
	if doc.ExternalDocs != nil {
		spec.DocsURL = LinkURL(doc.ExternalDocs.URL)
	}
	base, err := baseURL(doc, o.BaseURL)
	if err != nil {
		return providers.Spec{}, err
	}
	spec.BaseURL = base
	if err := setAuth(&spec, doc, o.Auth); err != nil {
		return providers.Spec{}, err
	}
	ops, err := operations(ctx, doc, &spec, o)
	if err != nil {
		return providers.Spec{}, err
	}
	spec.Operations = ops
	spec.Verify = verifyAs(spec.Title)
	return spec, nil
}

// verifyAs accepts the credential as it is: an arbitrary API has no standard "who am
// I", so the first call is what proves it, and whose account it is stays unknown (a
// reconnect renews the connection in place). Each connection is an account of its
// own, named for the API (title) until the person names it: an OAuth connection,
// which the person names no other way, needs a name.
func verifyAs(title string) func(context.Context, *providers.Call) (providers.Account, error) {
	return func(context.Context, *providers.Call) (providers.Account, error) {
		return providers.Account{ID: switchboard.NewID("acct"), Label: title, Unknown: true}, nil
	}
}

// baseURL is the override, or the description's first server with its variables set to
// their defaults. It must be an absolute http(s) URL.
func baseURL(doc *openapi3.T, override string) (string, error) {
	field, raw := "base_url", override
	if raw == "" {
		field = "description"
		if len(doc.Servers) > 0 && doc.Servers[0] != nil {
			s := doc.Servers[0]
			raw = serverURL(s)
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(raw, "{}") {
		if field == "description" {
			return "", switchboard.Invalid("base_url", fmt.Sprintf("is required: the description's servers give no absolute URL (%q)", raw))
		}
		return "", switchboard.Invalid("base_url", "must be an absolute http or https URL")
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// serverURL is a server's URL with its variables set to their defaults.
func serverURL(s *openapi3.Server) string {
	raw := s.URL
	for name, v := range s.Variables {
		if v != nil {
			raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
		}
	}
	return raw
}

// operationServer is the server an operation names for itself, or its path item does
// (OpenAPI 3's per-operation and per-path servers, which win over the description's):
// the first, variables at their defaults, without a trailing slash; "" when neither
// names one, or when the one it names is no http(s) URL (a variable without a default):
// the base URL serves it then. A relative URL is kept as it is, to resolve against the
// base URL.
func operationServer(item *openapi3.PathItem, op *openapi3.Operation) string {
	servers := item.Servers
	if op.Servers != nil && len(*op.Servers) > 0 {
		servers = *op.Servers
	}
	if len(servers) == 0 || servers[0] == nil {
		return ""
	}
	raw := serverURL(servers[0])
	u, err := url.Parse(raw)
	if err != nil || strings.ContainsAny(raw, "{}") || (u.IsAbs() && (u.Scheme != "http" && u.Scheme != "https" || u.Host == "")) {
		return ""
	}
	return strings.TrimRight(raw, "/")
}

// operations turns the chosen operations into Ops, in path order, until ctx ends.
func operations(ctx context.Context, doc *openapi3.T, spec *providers.Spec, o Options) ([]providers.Op, error) {
	if doc.Paths == nil || doc.Paths.Len() == 0 {
		return nil, switchboard.Invalid("description", "has no paths, so no operations")
	}
	paths := doc.Paths.Keys()
	sort.Strings(paths)
	names := newNamer(spec.Name)
	wantIDs := map[string]bool{}
	for _, id := range o.Operations {
		wantIDs[id] = true
	}
	for id := range o.Tools {
		wantIDs[id] = true
	}
	seen := map[string]bool{}
	var out []providers.Op
	for _, path := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		item := doc.Paths.Value(path)
		if item == nil {
			continue
		}
		for _, method := range methods {
			op := item.GetOperation(method)
			if op == nil || !chosen(op, wantIDs, o.Tags) {
				continue
			}
			seen[op.OperationID] = true
			built, err := buildOperation(spec, names, method, path, item, op, o.Tools[op.OperationID], credentialPlaces(doc, op, o))
			if err != nil {
				return nil, switchboard.Invalid("description", fmt.Sprintf("operation %s %s: %v", method, path, err))
			}
			out = append(out, built)
		}
	}
	for _, id := range o.Operations {
		if !seen[id] {
			return nil, switchboard.Invalid("operations", fmt.Sprintf("%q is not an operationId of the description", id))
		}
	}
	for id := range o.Tools {
		if !seen[id] {
			return nil, switchboard.Invalid("tools", fmt.Sprintf("%q is not an operationId of the description", id))
		}
	}
	if len(out) == 0 {
		return nil, switchboard.Invalid("operations", "choose no operation of the description")
	}
	return out, nil
}

// operationScopes are the OAuth scopes an operation's own security requirement names:
// those of its first requirement that names any (only OAuth 2.0 and OpenID Connect
// schemes take scopes).
func operationScopes(op *openapi3.Operation) []string {
	if op.Security == nil {
		return nil
	}
	for _, req := range *op.Security {
		var out []string
		for _, sc := range req {
			out = append(out, sc...)
		}
		if len(out) > 0 {
			slices.Sort(out)
			return slices.Compact(out)
		}
	}
	return nil
}

// chosen reports whether an operation is among those asked for.
func chosen(op *openapi3.Operation, ids map[string]bool, tags []string) bool {
	if len(ids) == 0 && len(tags) == 0 {
		return true
	}
	if ids[op.OperationID] {
		return true
	}
	for _, t := range op.Tags {
		if slices.Contains(tags, t) {
			return true
		}
	}
	return false
}

// buildOperation builds one operation's tool: its name, description, hints, schemas and
// where each argument goes. A parameter in one of creds is no input: the connection
// fills it.
func buildOperation(spec *providers.Spec, names *namer, method, path string, item *openapi3.PathItem, op *openapi3.Operation, curated Tool, creds []Place) (*operation, error) {
	id := op.OperationID
	if id == "" {
		id = strings.ToLower(method) + " " + path
	}
	if curated.Name != "" {
		id = curated.Name
	}
	name := strings.TrimPrefix(names.name(id), spec.Name+"_")
	title := strings.TrimSpace(op.Summary)
	if title == "" {
		title = method + " " + path
	}
	desc := strings.TrimSpace(strings.TrimSpace(op.Summary) + "\n\n" + strings.TrimSpace(op.Description))
	if desc == "" {
		desc = fmt.Sprintf("%s %s of %s.", method, path, spec.Title)
	}
	if curated.Description != "" {
		desc = curated.Description
	}
	scopes := curated.Scopes
	if len(scopes) == 0 {
		scopes = operationScopes(op)
	}
	info := providers.Info{Name: name, Title: title, Description: desc, Hints: hints(method, op), Scopes: scopes}
	if op.ExternalDocs != nil {
		info.DocsURL = LinkURL(op.ExternalDocs.URL)
	}
	// A path key may carry what tells operations on one URL apart after a "#" or "?"
	// (AWS's "/#X-Amz-Target=…"): the request's path is what comes before it.
	reqPath, _, _ := strings.Cut(path, "#")
	reqPath, _, _ = strings.Cut(reqPath, "?")
	o := &operation{provider: spec.Name, title: spec.Title, info: info, method: method, path: reqPath, server: operationServer(item, op)}
	props := map[string]any{}
	var required []string
	for _, p := range parameters(item, op) {
		if carriesCredential(p, creds) {
			continue
		}
		prop := p.Name
		if _, taken := props[prop]; taken || prop == "" {
			prop = p.In + "_" + p.Name
		}
		schema := map[string]any{}
		switch {
		case p.Schema != nil:
			schema = jsonSchema(p.Schema, forInput)
		case len(p.Content) > 0:
			schema = jsonSchema(sortedContent(p.Content)[0].Schema, forInput)
		}
		if p.Description != "" {
			schema["description"] = p.Description
		}
		props[prop] = schema
		if p.Required || p.In == "path" {
			required = append(required, prop)
		}
		explode := p.Explode == nil || *p.Explode
		if p.Style != "" && p.Style != "form" {
			explode = false
		}
		pm := param{name: p.Name, in: p.In, prop: prop, explode: explode}
		if p.Schema != nil && p.Schema.Value != nil && p.Schema.Value.Type != nil {
			pm.numeric = p.Schema.Value.Type.Includes("integer") || p.Schema.Value.Type.Includes("number")
			if d, ok := number(p.Schema.Value.Default); ok {
				pm.def = d
			}
		}
		o.params = append(o.params, pm)
	}
	o.contentType = contentTypeParam(item, op)
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		rb := op.RequestBody.Value
		if mt, form := bodyMedia(rb.Content); mt != nil {
			o.mediaType = mediaTypeName(rb.Content, mt)
			o.bodyProp = "body"
			if _, taken := props["body"]; taken {
				o.bodyProp = "request_body"
			}
			o.form = form
			schema := jsonSchema(mt.Schema, forInput)
			if rb.Description != "" {
				schema["description"] = rb.Description
			}
			props[o.bodyProp] = schema
			if rb.Required {
				required = append(required, o.bodyProp)
			}
		}
	}
	input := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		input["required"] = required
	}
	output := map[string]any{"type": "object", "properties": map[string]any{"body": successSchema(op)}}
	if o.paging = detectPaging(o, op); o.paging != nil {
		o.info.Description += "\n\n" + o.paging.describe()
		output["properties"].(map[string]any)["next"] = map[string]any{"type": "object",
			"description": "The arguments of the call that gets the next page; absent on the last page"}
	}
	var err error
	if o.input, err = json.Marshal(input); err != nil {
		return nil, err
	}
	if o.output, err = json.Marshal(output); err != nil {
		return nil, err
	}
	return o, nil
}

// hints follow the method (GET and HEAD read only; PUT and DELETE idempotent; DELETE
// destructive), unless the operation says otherwise with x-readonly, x-idempotent or
// x-destructive.
func hints(method string, op *openapi3.Operation) providers.Hints {
	h := providers.Hints{
		ReadOnly:    method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions,
		Idempotent:  method == http.MethodPut || method == http.MethodDelete,
		Destructive: method == http.MethodDelete,
	}
	for key, set := range map[string]*bool{"x-readonly": &h.ReadOnly, "x-idempotent": &h.Idempotent, "x-destructive": &h.Destructive} {
		if b, ok := op.Extensions[key].(bool); ok {
			*set = b
		}
	}
	return h
}

// parameters are the path item's parameters overridden by the operation's (by name
// and location), leaving out the headers HTTP itself sets.
func parameters(item *openapi3.PathItem, op *openapi3.Operation) []*openapi3.Parameter {
	var out []*openapi3.Parameter
	index := map[string]int{}
	for _, list := range []openapi3.Parameters{item.Parameters, op.Parameters} {
		for _, ref := range list {
			if ref == nil || ref.Value == nil {
				continue
			}
			p := ref.Value
			if p.In == "header" && slices.Contains([]string{"accept", "content-type", "authorization"}, strings.ToLower(p.Name)) {
				continue
			}
			key := p.In + "\x00" + p.Name
			if i, ok := index[key]; ok {
				out[i] = p
				continue
			}
			index[key] = len(out)
			out = append(out, p)
		}
	}
	return out
}

// contentTypeParam is the value to send for a Content-Type header parameter the
// operation requires (some descriptions list it although HTTP sets it, and their
// servers refuse a request without it): its default, else its first enum value, else
// the media type of the body, else JSON; "" when no such parameter is required.
func contentTypeParam(item *openapi3.PathItem, op *openapi3.Operation) string {
	for _, list := range []openapi3.Parameters{op.Parameters, item.Parameters} {
		for _, ref := range list {
			if ref == nil || ref.Value == nil || ref.Value.In != "header" || !strings.EqualFold(ref.Value.Name, "content-type") {
				continue
			}
			p := ref.Value
			if !p.Required {
				return ""
			}
			if p.Schema != nil && p.Schema.Value != nil {
				if v, ok := p.Schema.Value.Default.(string); ok && v != "" {
					return v
				}
				for _, e := range p.Schema.Value.Enum {
					if v, ok := e.(string); ok && v != "" {
						return v
					}
				}
			}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				if mt, _ := bodyMedia(op.RequestBody.Value.Content); mt != nil {
					return mediaTypeName(op.RequestBody.Value.Content, mt)
				}
			}
			return "application/json"
		}
	}
	return ""
}

// mediaTypeName is the name content gives mt.
func mediaTypeName(content openapi3.Content, mt *openapi3.MediaType) string {
	for name, m := range content {
		if m == mt {
			return name
		}
	}
	return ""
}

// bodyMedia picks the request body's media type: JSON first, then a form, then a
// wildcard that admits JSON (a Swagger 2.0 body with no consumes becomes "*/*").
func bodyMedia(content openapi3.Content) (*openapi3.MediaType, bool) {
	var form, any *openapi3.MediaType
	for _, name := range sortedKeys(content) {
		switch {
		case isJSON(name):
			return content[name], false
		case strings.HasPrefix(strings.ToLower(name), "application/x-www-form-urlencoded"):
			form = content[name]
		case name == "*/*" || name == "application/*":
			any = content[name]
		}
	}
	if form != nil {
		return form, true
	}
	if any != nil {
		return any, false
	}
	return nil, false
}

// successSchema is the schema of the operation's first success answer with JSON
// content; any value when it documents none.
func successSchema(op *openapi3.Operation) map[string]any {
	if op.Responses == nil {
		return map[string]any{}
	}
	codes := op.Responses.Keys()
	sort.Strings(codes)
	for _, code := range codes {
		if !strings.HasPrefix(code, "2") {
			continue
		}
		r := op.Responses.Value(code)
		if r == nil || r.Value == nil {
			continue
		}
		for _, name := range sortedKeys(r.Value.Content) {
			if isJSON(name) && r.Value.Content[name].Schema != nil {
				return jsonSchema(r.Value.Content[name].Schema, forOutput)
			}
		}
	}
	return map[string]any{}
}

func sortedKeys(content openapi3.Content) []string {
	keys := make([]string, 0, len(content))
	for k := range content {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedContent(content openapi3.Content) []*openapi3.MediaType {
	var out []*openapi3.MediaType
	for _, k := range sortedKeys(content) {
		out = append(out, content[k])
	}
	return out
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
