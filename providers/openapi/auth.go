package openapi

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// setAuth sets how connections authenticate, from the description's securitySchemes:
// an API key in a header, the query or a cookie; HTTP bearer or basic ("user:password"
// pasted as the token); OAuth 2.0's authorization code flow (through the hub's OAuth
// connect flow, with the deployment's or tenant's OAuth app), or a pasted access token
// for its other flows and OpenID Connect. A description with no scheme takes any token
// pasted and sends it as a bearer token, which a public API ignores.
func setAuth(spec *providers.Spec, doc *openapi3.T, name string) error {
	schemes := openapi3.SecuritySchemes{}
	if doc.Components != nil && doc.Components.SecuritySchemes != nil {
		schemes = doc.Components.SecuritySchemes
	}
	if name == "" {
		name = wantedScheme(doc, schemes)
	}
	spec.AuthKinds = []providers.AuthKind{providers.AuthAPIKey}
	if name == "" {
		spec.TokenHelp = fmt.Sprintf("%s's description asks for no credential: paste the token its API takes, if any.", spec.Title)
		return nil
	}
	ref, ok := schemes[name]
	if !ok || ref == nil || ref.Value == nil {
		return switchboard.Invalid("auth", fmt.Sprintf("%q is not one of the description's securitySchemes (%s)", name, strings.Join(schemeNames(schemes), ", ")))
	}
	s := ref.Value
	switch strings.ToLower(s.Type) {
	case "apikey":
		key := s.Name
		spec.TokenHelp = fmt.Sprintf("Paste your %s API key (sent as the %s %s %q).", spec.Title, s.In, map[bool]string{true: "parameter", false: "header"}[s.In != "header"], key)
		switch s.In {
		case "header":
			spec.AuthHeader = func(token string) (string, string) { return key, token }
		case "query":
			spec.Authorize = func(r *http.Request, token string) {
				q := r.URL.Query()
				q.Set(key, token)
				r.URL.RawQuery = q.Encode()
			}
		case "cookie":
			spec.Authorize = func(r *http.Request, token string) { r.AddCookie(&http.Cookie{Name: key, Value: token}) }
		default:
			return switchboard.Invalid("auth", fmt.Sprintf("the API key scheme %q puts its key in %q; header, query and cookie are supported", name, s.In))
		}
	case "http":
		switch scheme := strings.ToLower(s.Scheme); scheme {
		case "bearer":
			spec.TokenHelp = fmt.Sprintf("Paste a %s bearer token.", spec.Title)
		case "basic":
			spec.TokenHelp = fmt.Sprintf("Paste your %s user name and password as user:password.", spec.Title)
			spec.Authorize = func(r *http.Request, token string) {
				user, pass, _ := strings.Cut(token, ":")
				r.SetBasicAuth(user, pass)
			}
		default:
			spec.TokenHelp = fmt.Sprintf("Paste a %s %s credential.", spec.Title, s.Scheme)
			spec.AuthHeader = func(token string) (string, string) { return "Authorization", s.Scheme + " " + token }
		}
	case "oauth2":
		spec.TokenHelp = fmt.Sprintf("Paste a %s OAuth access token, or connect with OAuth.", spec.Title)
		if f := s.Flows; f != nil && f.AuthorizationCode != nil && LinkURL(f.AuthorizationCode.AuthorizationURL) != "" && LinkURL(f.AuthorizationCode.TokenURL) != "" {
			f := s.Flows.AuthorizationCode
			scopes := make([]string, 0, len(f.Scopes))
			for sc := range f.Scopes {
				scopes = append(scopes, sc)
			}
			sort.Strings(scopes)
			spec.OAuth = &providers.OAuth2{AuthURL: f.AuthorizationURL, TokenURL: f.TokenURL, Scopes: scopes, PKCE: true}
			spec.AuthKinds = []providers.AuthKind{providers.AuthOAuth2, providers.AuthAPIKey}
		}
	case "openidconnect":
		spec.TokenHelp = fmt.Sprintf("Paste a %s access token.", spec.Title)
	default:
		return switchboard.Invalid("auth", fmt.Sprintf("the scheme %q is of type %q, which is not supported", name, s.Type))
	}
	return nil
}

// wantedScheme is the scheme the description asks for first: in its global security
// requirements, else in its operations'; "" when it asks for none.
func wantedScheme(doc *openapi3.T, schemes openapi3.SecuritySchemes) string {
	first := func(reqs openapi3.SecurityRequirements) string {
		for _, req := range reqs {
			names := make([]string, 0, len(req))
			for n := range req {
				if _, ok := schemes[n]; ok {
					names = append(names, n)
				}
			}
			sort.Strings(names)
			if len(names) > 0 {
				return names[0]
			}
		}
		return ""
	}
	if n := first(doc.Security); n != "" {
		return n
	}
	if doc.Paths != nil {
		paths := doc.Paths.Keys()
		sort.Strings(paths)
		for _, p := range paths {
			item := doc.Paths.Value(p)
			for _, m := range methods {
				if op := item.GetOperation(m); op != nil && op.Security != nil {
					if n := first(*op.Security); n != "" {
						return n
					}
				}
			}
		}
	}
	return ""
}

func schemeNames(schemes openapi3.SecuritySchemes) []string {
	names := make([]string, 0, len(schemes))
	for n := range schemes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Scheme is the securitySchemes entry a provider built with auth uses (see
// Options.Auth): its name and value, or "" and nil when the description asks for none.
func Scheme(doc *openapi3.T, auth string) (string, *openapi3.SecurityScheme) {
	schemes := openapi3.SecuritySchemes{}
	if doc.Components != nil && doc.Components.SecuritySchemes != nil {
		schemes = doc.Components.SecuritySchemes
	}
	if auth == "" {
		auth = wantedScheme(doc, schemes)
	}
	if ref, ok := schemes[auth]; ok && ref != nil && ref.Value != nil {
		return auth, ref.Value
	}
	return "", nil
}

// credentialPlaces are where a request of op carries the connection's credential, so
// that no tool takes them as arguments: the places of the apiKey schemes its security
// requirements name (the description's when it names none), every alternative and
// every part, that of the scheme the provider uses (o.Auth, or the one the description
// asks for first), and o.Credential.
func credentialPlaces(doc *openapi3.T, op *openapi3.Operation, o Options) []Place {
	schemes := openapi3.SecuritySchemes{}
	if doc.Components != nil && doc.Components.SecuritySchemes != nil {
		schemes = doc.Components.SecuritySchemes
	}
	names := map[string]bool{}
	reqs := doc.Security
	if op.Security != nil {
		reqs = *op.Security
	}
	for _, req := range reqs {
		for n := range req {
			names[n] = true
		}
	}
	if name, _ := Scheme(doc, o.Auth); name != "" {
		names[name] = true
	}
	out := slices.Clone(o.Credential)
	for n := range names {
		if ref, ok := schemes[n]; ok && ref != nil && ref.Value != nil && strings.EqualFold(ref.Value.Type, "apiKey") {
			out = append(out, Place{In: ref.Value.In, Name: ref.Value.Name})
		}
	}
	return out
}

// carriesCredential reports whether p is one of the places in creds (a header's name
// in any case).
func carriesCredential(p *openapi3.Parameter, creds []Place) bool {
	for _, c := range creds {
		if p.In == c.In && (p.Name == c.Name || p.In == "header" && strings.EqualFold(p.Name, c.Name)) {
			return true
		}
	}
	return false
}
