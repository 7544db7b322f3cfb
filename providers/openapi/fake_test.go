package openapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// describedUpstream is a fake upstream generated from a description: it routes each
// request to the description's operation and checks it against the operation's
// parameters, request body and security (openapi3filter), records what it found, and
// answers with the handler.
type describedUpstream struct {
	*providertest.Upstream

	mu       sync.Mutex
	problems []string // requests the description refuses, with why
	matched  []string // the operationIds (or "METHOD path") of the requests it accepted
}

// newDescribedUpstream serves doc's operations at base path prefix (the servers' path,
// "/v1"); doc's servers are replaced by the fake's own URL.
func newDescribedUpstream(t testing.TB, doc *openapi3.T, prefix string, answer http.HandlerFunc) *describedUpstream {
	t.Helper()
	d := &describedUpstream{}
	var router routers.Router
	var once sync.Once
	var routerErr error
	d.Upstream = providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() {
			router, routerErr = gorillamux.NewRouter(doc)
		})
		if routerErr != nil {
			d.problem("route the description: " + routerErr.Error())
			http.Error(w, routerErr.Error(), http.StatusInternalServerError)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		route, params, err := router.FindRoute(r)
		if err != nil {
			d.problem(r.Method + " " + r.URL.Path + ": " + err.Error())
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: credentialPresent}}
		if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
			d.problem(r.Method + " " + r.URL.Path + ": " + err.Error())
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		id := route.Operation.OperationID
		if id == "" {
			id = r.Method + " " + route.Path
		}
		d.mu.Lock()
		d.matched = append(d.matched, id)
		d.mu.Unlock()
		answer(w, r)
	})
	doc.Servers = openapi3.Servers{{URL: d.URL + prefix}}
	for _, item := range doc.Paths.Map() { // the tools use the description's first server
		item.Servers = nil
		for _, op := range item.Operations() {
			op.Servers = nil
		}
	}
	return d
}

func (d *describedUpstream) problem(p string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.problems = append(d.problems, p)
}

// check fails t when a request did not match the description.
func (d *describedUpstream) check(t testing.TB) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.problems {
		t.Errorf("the description refuses a request: %s", p)
	}
}

// credentialPresent accepts a request that carries the credential a security scheme
// asks for, where the scheme says.
func credentialPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	s, r := in.SecurityScheme, in.RequestValidationInput.Request
	present := true
	switch s.Type {
	case "apiKey":
		switch s.In {
		case "header":
			present = r.Header.Get(s.Name) != ""
		case "query":
			present = r.URL.Query().Get(s.Name) != ""
		case "cookie":
			_, err := r.Cookie(s.Name)
			present = err == nil
		}
	case "http":
		if strings.EqualFold(s.Scheme, "basic") {
			_, _, present = r.BasicAuth()
		} else {
			present = strings.HasPrefix(strings.ToLower(r.Header.Get("Authorization")), strings.ToLower(s.Scheme)+" ")
		}
	case "oauth2", "openIdConnect":
		present = strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	if !present {
		return fmt.Errorf("no %s credential (%s %s)", s.Type, s.In, s.Name)
	}
	return nil
}
