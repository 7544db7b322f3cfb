package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// maxAnswer bounds an operation's successful answer.
const maxAnswer = 8 << 20

// param is one of an operation's parameters: where it goes in the request and the
// input property that carries it.
type param struct {
	name    string // as the API names it
	in      string // path, query, header or cookie
	prop    string // the input property
	explode bool   // an array in the query is repeated (form, explode), else comma-joined
	numeric bool   // its schema is an integer or a number
	def     int64  // its schema's numeric default, if any
}

// operation is one operation of a description as a providers.Op: its input is its
// parameters and its request body, its output the body of its answer.
type operation struct {
	provider, title string // the provider's name and title, for errors
	info            providers.Info
	method, path    string
	server          string // the operation's (or its path's) own server; "" for the base URL
	params          []param
	bodyProp        string // the input property of the request body; "" when it takes none
	form            bool   // the body is sent as a form, not JSON
	mediaType       string // the body's media type, as the description names it
	contentType     string // the Content-Type a required header parameter asks for; "" for none
	input, output   json.RawMessage
	paging          *paging // how its answers come in pages; nil when the description does not say
	// base and place, set for a connection's tools (ConnectionTools), are its own base URL
	// and where its credential goes, in place of the provider's.
	base  string
	place func(*http.Request, string)
}

var _ providers.Op = (*operation)(nil)

// Info describes the operation.
func (o *operation) Info() providers.Info { return o.info }

// InputSchema is built from the description, not reflected.
func (o *operation) InputSchema() (*jsonschema.Schema, error) { return parseSchema(o.input) }

// OutputSchema is built from the description's success answer.
func (o *operation) OutputSchema() (*jsonschema.Schema, error) { return parseSchema(o.output) }

func parseSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Output is an operation's answer: its body as the API gave it (decoded JSON, or the
// text of another media type), under "body" since an answer need not be an object.
type Output struct {
	Body any `json:"body"`
	// Next holds the arguments of the call that gets the next page, for an operation
	// whose answers come in pages; absent on the last page.
	Next map[string]any `json:"next,omitempty"`
}

// Invoke builds the request from the (validated) arguments, sends it through the
// connection's client (its credential, rate limit, retries of what is safe to retry)
// and returns the decoded answer; a refusal becomes an UpstreamError with the API's
// own message.
func (o *operation) Invoke(ctx context.Context, c *providers.Call, args json.RawMessage) (any, error) {
	var in map[string]any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		return nil, switchboard.Invalid("arguments", "must be a JSON object")
	}
	req := providers.JSONRequest{Provider: o.provider, Title: o.title, Method: o.method, Query: url.Values{}, Header: http.Header{},
		MaxBytes: maxAnswer, TooLarge: "narrow the request (fewer items per page, a filter)"}
	path := o.path
	var cookies []string
	for _, p := range o.params {
		v, ok := in[p.prop]
		if !ok || v == nil {
			continue
		}
		switch p.in {
		case "path":
			seg := scalar(v)
			if dotSegment(seg) {
				return nil, switchboard.Invalid(p.prop, fmt.Sprintf("%q is a path parameter, one segment of the path: it may not be . or .., nor their percent-encoding", seg))
			}
			path = strings.ReplaceAll(path, "{"+p.name+"}", url.PathEscape(seg))
		case "query":
			if l, ok := v.([]any); ok && p.explode {
				for _, x := range l {
					req.Query.Add(p.name, scalar(x))
				}
				continue
			}
			req.Query.Set(p.name, scalar(v))
		case "header":
			req.Header.Set(p.name, scalar(v))
		case "cookie":
			cookies = append(cookies, (&http.Cookie{Name: p.name, Value: scalar(v)}).String())
		}
	}
	if o.contentType != "" {
		req.Header.Set("Content-Type", o.contentType)
	}
	if len(cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(cookies, "; "))
	}
	req.Path = path
	if o.bodyProp != "" {
		if body, ok := in[o.bodyProp]; ok {
			if o.form {
				req.Form = formValues(body)
			} else {
				req.Body = body
			}
			if o.contentType == "" && o.mediaType != "" && !strings.Contains(o.mediaType, "*") {
				req.Header.Set("Content-Type", o.mediaType) // application/merge-patch+json, not plain JSON
			}
		}
	}
	var raw []byte
	a, err := req.Send(o.withPlacement(ctx), o.at(c), &raw, o.failure)
	if err != nil {
		return nil, err
	}
	out := Output{Body: decodeAnswer(raw, a.Header.Get("Content-Type"))}
	if o.paging != nil {
		out.Next = o.paging.next(in, out.Body, a.Header)
	}
	return out, nil
}

// dotSegment reports whether a path parameter's value is "." or "..", as it is or once
// percent-decoded any number of times ("%2e%2e", "%252e."): escaped or not, a server
// that decodes it would take it as a step up the path, out of the operation's.
func dotSegment(v string) bool {
	for {
		if v == "." || v == ".." {
			return true
		}
		u, err := url.PathUnescape(v)
		if err != nil || u == v {
			return false
		}
		v = u
	}
}

// at is the call aimed at the operation's own server, when it names one: an absolute
// URL as it is, a relative one resolved against the connection's base URL.
func (o *operation) at(c *providers.Call) *providers.Call {
	if o.server == "" && o.base == "" {
		return c
	}
	aimed := *c
	if o.base != "" {
		aimed.BaseURL = o.base
	}
	if o.server == "" {
		return &aimed
	}
	base := aimed.BaseURL
	aimed.BaseURL = o.server
	if u, err := url.Parse(o.server); err == nil && !u.IsAbs() {
		if base, err := url.Parse(base + "/"); err == nil {
			aimed.BaseURL = strings.TrimRight(base.ResolveReference(u).String(), "/")
		}
	}
	return &aimed
}

// scalar renders a parameter's value as the request carries it: strings as they are,
// numbers and booleans in JSON, arrays comma-joined (the simple and form styles without
// explode), objects as JSON.
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = scalar(e)
		}
		return strings.Join(parts, ",")
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// formValues encodes an object body as a form: each property a field.
func formValues(body any) url.Values {
	out := url.Values{}
	obj, ok := body.(map[string]any)
	if !ok {
		return out
	}
	for k, v := range obj {
		if l, ok := v.([]any); ok {
			for _, x := range l {
				out.Add(k, scalar(x))
			}
			continue
		}
		out.Set(k, scalar(v))
	}
	return out
}

// decodeAnswer decodes a JSON answer; any other answer is returned as text.
func decodeAnswer(raw []byte, contentType string) any {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var v any
	if isJSON(contentType) || contentType == "" {
		if err := json.Unmarshal(raw, &v); err == nil {
			return v
		}
	}
	return string(raw)
}

// isJSON reports whether a media type is JSON (application/json, application/*+json).
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = contentType
	}
	mt = strings.ToLower(mt)
	return mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "text/json"
}

// failure classifies a refused request by its status and carries the API's own
// message: a JSON error's message (or error, or detail), else the start of the text.
func (o *operation) failure(resp *http.Response) error {
	data := make([]byte, 4096)
	n, _ := resp.Body.Read(data)
	data = data[:n]
	msg, reason := apiMessage(data)
	if msg == "" {
		msg = fmt.Sprintf("%s refused %s %s", o.title, o.method, o.path)
	}
	return providers.StatusError(o.provider, resp, reason, msg)
}

// apiMessage finds what an error answer says: the common fields of JSON error bodies
// ({"message"}, {"error": "…"}, {"error": {"message", "code"}}, RFC 9457's detail).
func apiMessage(data []byte) (msg, reason string) {
	var body map[string]any
	if json.Unmarshal(data, &body) != nil {
		text := strings.TrimSpace(string(data))
		if len(text) > 300 {
			text = text[:300] + "…"
		}
		return text, ""
	}
	str := func(m map[string]any, keys ...string) string {
		for _, k := range keys {
			if s, ok := m[k].(string); ok && s != "" {
				return s
			}
		}
		return ""
	}
	if e, ok := body["error"].(map[string]any); ok {
		return str(e, "message", "detail", "description"), str(e, "code", "type", "status")
	}
	msg = str(body, "message", "detail", "error_description", "error", "title")
	reason = str(body, "code", "error_code", "type")
	if reason == msg {
		reason = ""
	}
	return msg, reason
}
