package openapi

import (
	"context"
	"net/http"
	"net/url"

	"github.com/switchboard-hub/switchboard/providers"
)

// placeKey carries, in a request's context, where its credential goes.
type placeKey struct{}

// Authorize puts a request's credential where its operation's description says (a
// header, the query, a cookie, HTTP basic), for a provider whose client serves several
// descriptions at once (the tenants' APIs): set it as that provider's Spec.Authorize.
// A request without an operation's placement gets the token as a bearer token.
func Authorize(r *http.Request, token string) {
	if place, ok := r.Context().Value(placeKey{}).(func(*http.Request, string)); ok && place != nil {
		place(r, token)
		return
	}
	r.Header.Set("Authorization", "Bearer "+token)
}

// placement is where spec puts the credential, as one function.
func placement(spec *providers.Spec) func(*http.Request, string) {
	switch {
	case spec.Authorize != nil:
		return spec.Authorize
	case spec.AuthHeader != nil:
		header := spec.AuthHeader
		return func(r *http.Request, token string) {
			name, value := header(token)
			r.Header.Set(name, value)
		}
	}
	return func(r *http.Request, token string) { r.Header.Set("Authorization", "Bearer "+token) }
}

// withPlacement is ctx for a request of an operation that puts its credential itself.
func (o *operation) withPlacement(ctx context.Context) context.Context {
	if o.place == nil {
		return ctx
	}
	return context.WithValue(ctx, placeKey{}, o.place)
}

// ConnectionTools returns the operations of spec (built by New or FromDocument) as the
// tools of a connection of provider as, whose tools exist per connection: named
// {spec.Name}_{operation}, sent to spec's base URL (and operations' own servers) and
// authenticated as spec's description says, through as's client (its Spec.Authorize
// must be Authorize).
func ConnectionTools(spec providers.Spec, as *providers.Spec) ([]*providers.Tool, error) {
	place := placement(&spec)
	out := make([]*providers.Tool, 0, len(spec.Operations))
	for _, op := range spec.Operations {
		o, ok := op.(*operation)
		if !ok {
			continue
		}
		c := *o
		c.base, c.place = spec.BaseURL, place
		t, err := providers.NewConnectionTool(as, spec.Name+"_"+o.info.Name, &c, c.input, c.output)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// Hosts are the URLs spec's requests may go to: its base URL and its operations' own
// absolute servers, for a check of each host before a tenant's description is kept.
func Hosts(spec providers.Spec) []string {
	seen := map[string]bool{spec.BaseURL: true}
	out := []string{spec.BaseURL}
	for _, op := range spec.Operations {
		if o, ok := op.(*operation); ok && o.server != "" && !seen[o.server] {
			if u, err := url.Parse(o.server); err == nil && u.IsAbs() {
				seen[o.server] = true
				out = append(out, o.server)
			}
		}
	}
	return out
}
