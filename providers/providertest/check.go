package providertest

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
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// fakeHost is the host requests are rebuilt on for matching; servers are cleared, so
// only the method and path matter.
const fakeHost = "upstream.test"

func (d *APIDescription) options() *openapi3filter.Options {
	return &openapi3filter.Options{
		AuthenticationFunc:                openapi3filter.NoopAuthenticationFunc,
		MultiError:                        true,
		SkipSettingDefaults:               true,
		IncludeResponseStatus:             true,
		RejectWhenRequestBodyNotSpecified: true,
		SchemaValidationOptions:           []openapi3.SchemaValidationOption{openapi3.DisableSchemaErrorDetails()},
	}
}

// CheckRequest fails t, with one error per problem naming the operation, unless the
// request matches an operation of the description: the method and path template, the
// path, query and header parameters (types, enums, required ones; a query parameter
// the operation does not declare is an error too), and the body against the request
// body schema of its content type (JSON, or form-encoded for Slack). It returns the
// matched operationId, or "" when no operation matches.
func (d *APIDescription) CheckRequest(t testing.TB, r Request) (operationID string) {
	t.Helper()
	req, route, params, err := d.route(r)
	if err != nil {
		t.Errorf("%s API: %s %s matches no operation of %s: %v", d.name, r.Method, r.Path, d.file, err)
		return ""
	}
	id := route.Operation.OperationID
	where := fmt.Sprintf("%s API operation %s (%s %s)", d.name, id, route.Method, route.Path)
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: d.options()}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		for _, msg := range describe(err) {
			t.Errorf("%s: request %s %s: %s", where, r.Method, r.Path, msg)
		}
	}
	for _, msg := range append(d.unknownQuery(route, r.Query), d.unknownBodyFields(route, r)...) {
		t.Errorf("%s: request %s %s: %s", where, r.Method, r.Path, msg)
	}
	if d.bearerToken[id] && !hasToken(r) {
		t.Errorf("%s: request %s %s: no token: send it as Authorization: Bearer <token>", where, r.Method, r.Path)
	}
	return id
}

// route rebuilds the recorded request as an *http.Request and finds its operation,
// with the path as sent or, failing that, without a server base path (Slack's /api).
func (d *APIDescription) route(r Request) (*http.Request, *routers.Route, map[string]string, error) {
	paths := []string{r.Path}
	for _, bp := range d.basePaths {
		if rest, ok := strings.CutPrefix(r.Path, bp); ok && strings.HasPrefix(rest, "/") {
			paths = append(paths, rest)
		}
	}
	var firstErr error
	for _, p := range paths {
		req, err := r.httpRequest(p)
		if err != nil {
			return nil, nil, nil, err
		}
		route, params, err := d.router.FindRoute(req)
		if err == nil {
			return req, route, params, nil
		}
		if firstErr == nil || errors.Is(err, routers.ErrMethodNotAllowed) {
			firstErr = err
		}
		for _, mr := range d.multiSegment {
			if route, params, ok := mr.match(r.Method, p); ok {
				return req, route, params, nil
			}
		}
	}
	if errors.Is(firstErr, routers.ErrMethodNotAllowed) {
		return nil, nil, nil, fmt.Errorf("the path exists but not with method %s", r.Method)
	}
	return nil, nil, nil, firstErr
}

func (r Request) httpRequest(path string) (*http.Request, error) {
	if r.Method == "" {
		return nil, errors.New("the request has no method")
	}
	u := &url.URL{Scheme: "http", Host: fakeHost, Path: path, RawQuery: r.Query.Encode()}
	req, err := http.NewRequestWithContext(context.Background(), r.Method, u.String(), bytes.NewReader(r.Body))
	if err != nil {
		return nil, fmt.Errorf("rebuild request: %w", err)
	}
	req.Header = r.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if req.Header.Get("Content-Type") == "" && r.ContentType != "" {
		req.Header.Set("Content-Type", r.ContentType)
	}
	if len(r.Body) == 0 {
		req.Body = http.NoBody
	}
	return req, nil
}

// unknownQuery names the query parameters the operation does not declare (a typo there
// is silently ignored upstream).
func (d *APIDescription) unknownQuery(route *routers.Route, q url.Values) []string {
	declared := map[string]*openapi3.Parameter{}
	for _, ps := range []openapi3.Parameters{route.PathItem.Parameters, route.Operation.Parameters} {
		for _, p := range ps {
			if p.Value != nil && p.Value.In == openapi3.ParameterInQuery {
				declared[p.Value.Name] = p.Value
			}
		}
	}
	var out []string
	for _, k := range sortedKeys(q) {
		if _, ok := declared[k]; ok {
			continue
		}
		if k == "token" && d.bearerToken[route.Operation.OperationID] {
			continue
		}
		if name, _, ok := strings.Cut(k, "["); ok && declared[name] != nil && declared[name].Style == openapi3.SerializationDeepObject {
			continue
		}
		out = append(out, fmt.Sprintf("query parameter %q is not a parameter of this operation", k))
	}
	return out
}

// unknownBodyFields names the top-level fields of a JSON or form body that the body
// schema does not declare, when it declares its fields and allows no others by
// omission (a misspelt field is silently ignored upstream).
func (d *APIDescription) unknownBodyFields(route *routers.Route, r Request) []string {
	rb := route.Operation.RequestBody
	if rb == nil || rb.Value == nil || len(r.Body) == 0 {
		return nil
	}
	mt := rb.Value.Content.Get(r.ContentType)
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return nil
	}
	s := mt.Schema.Value
	if len(s.Properties) == 0 || s.AdditionalProperties.Schema != nil ||
		(s.AdditionalProperties.Has != nil && *s.AdditionalProperties.Has) {
		return nil
	}
	var keys []string
	switch r.ContentType {
	case "application/json":
		var m map[string]json.RawMessage
		if json.Unmarshal(r.Body, &m) != nil {
			return nil // ValidateRequest reports it
		}
		keys = slices.Sorted(mapKeys(m))
	case "application/x-www-form-urlencoded":
		f, err := url.ParseQuery(string(r.Body))
		if err != nil {
			return nil
		}
		keys = sortedKeys(f)
	}
	var out []string
	for _, k := range keys {
		if s.Properties[k] != nil || (k == "token" && d.bearerToken[route.Operation.OperationID]) {
			continue
		}
		out = append(out, fmt.Sprintf("body field %q is not in the request body schema", k))
	}
	return out
}

// hasToken reports whether a Slack request carries its token: as Authorization: Bearer
// (what we send) or as a token parameter.
func hasToken(r Request) bool {
	if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && strings.TrimSpace(v) != "" {
		return true
	}
	if r.Query.Get("token") != "" {
		return true
	}
	if r.ContentType == "application/x-www-form-urlencoded" {
		if f, err := url.ParseQuery(string(r.Body)); err == nil && f.Get("token") != "" {
			return true
		}
	}
	return false
}

// CheckResponse fails t unless body, a fake answer with the given status to the
// operation, is shaped like the real API's: the operation declares the status (or a
// default response) and the body matches that response's JSON schema.
func (d *APIDescription) CheckResponse(t testing.TB, operationID string, status int, body []byte) {
	t.Helper()
	route, ok := d.byID[operationID]
	if !ok {
		t.Errorf("%s API: no operation %q in %s", d.name, operationID, d.file)
		return
	}
	where := fmt.Sprintf("%s API operation %s (%s %s)", d.name, operationID, route.Method, route.Path)
	resp := route.Operation.Responses.Status(status)
	if d.name == "Slack" && slackNotOK(body) {
		// Slack answers errors with 200 and {"ok": false, "error": …}, which its
		// description puts under the default response.
		if def := route.Operation.Responses.Default(); def != nil {
			resp = def
			op := *route.Operation
			op.Responses = openapi3.NewResponses(openapi3.WithStatus(status, def))
			r := *route
			r.Operation = &op
			route = &r
		}
	}
	if resp == nil {
		resp = route.Operation.Responses.Default()
	}
	if resp == nil || resp.Value == nil {
		t.Errorf("%s: status %d is not a response of this operation (it declares %s)", where, status, strings.Join(statuses(route.Operation), ", "))
		return
	}
	ct := "application/json"
	if c := resp.Value.Content; len(c) > 0 && c.Get(ct) == nil {
		ct = slices.Sorted(mapKeys(c))[0]
	}
	if len(resp.Value.Content) == 0 && len(bytes.TrimSpace(body)) > 0 {
		t.Errorf("%s: status %d has no body upstream, the fake sends %d bytes", where, status, len(body))
		return
	}
	req, err := http.NewRequestWithContext(context.Background(), route.Method, "http://"+fakeHost+route.Path, http.NoBody)
	if err != nil {
		t.Errorf("%s: %v", where, err)
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, Route: route, Options: d.options()},
		Status:                 status,
		Header:                 http.Header{"Content-Type": {ct}},
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                d.options(),
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		for _, msg := range describe(err) {
			t.Errorf("%s: response %d: %s", where, status, msg)
		}
	}
}

// slackNotOK reports whether a Slack answer is an error: {"ok": false, …}.
func slackNotOK(body []byte) bool {
	var v struct {
		OK *bool `json:"ok"`
	}
	return json.Unmarshal(body, &v) == nil && v.OK != nil && !*v.OK
}

func statuses(op *openapi3.Operation) []string {
	return slices.Sorted(mapKeys(op.Responses.Map()))
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func sortedKeys(q url.Values) []string { return slices.Sorted(mapKeys(q)) }

// describe flattens a validation error into one readable line per problem.
func describe(err error) []string {
	var out []string
	var walk func(prefix string, err error)
	walk = func(prefix string, err error) {
		join := func(s string) string {
			if prefix == "" {
				return s
			}
			return prefix + ": " + s
		}
		var me openapi3.MultiError
		if errors.As(err, &me) && isMulti(err) {
			for _, e := range me {
				walk(prefix, e)
			}
			return
		}
		switch e := err.(type) {
		case *openapi3filter.RequestError:
			p := "request"
			switch {
			case e.Parameter != nil:
				p = fmt.Sprintf("%s parameter %q", e.Parameter.In, e.Parameter.Name)
			case e.RequestBody != nil:
				p = "body"
			}
			if e.Err == nil {
				out = append(out, join(p+": "+e.Reason))
				return
			}
			if e.Reason != "" && !isSchemaOrMulti(e.Err) {
				p += ": " + e.Reason
			}
			walk(join(p), e.Err)
		case *openapi3filter.ResponseError:
			if e.Err == nil {
				out = append(out, join(e.Reason))
				return
			}
			walk(join("body"), e.Err)
		case *openapi3.SchemaError:
			at := "/" + strings.Join(e.JSONPointer(), "/")
			reason := e.Reason
			if reason == "" {
				reason = fmt.Sprintf("does not match %q", e.SchemaField)
			}
			if e.Origin != nil {
				reason += ": " + e.Origin.Error()
			}
			if value, err := json.Marshal(e.Value); err == nil && len(value) <= 80 && e.SchemaField != "required" {
				reason += " (got " + string(value) + ")"
			}
			if at != "/" {
				reason = "at " + strconv.Quote(at) + ": " + reason
			}
			out = append(out, join(reason))
		default:
			out = append(out, join(err.Error()))
		}
	}
	walk("", err)
	return out
}

func isMulti(err error) bool {
	_, ok := err.(openapi3.MultiError)
	return ok
}

func isSchemaOrMulti(err error) bool {
	var se *openapi3.SchemaError
	return isMulti(err) || errors.As(err, &se)
}
