package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboard-hub/switchboard"
)

// JSONRequest is one call to a JSON REST API through a Call's client: the request
// encoding, the transport failure, the size bound and the decoding every JSON provider
// needs, so a provider package keeps only what is its own (paths, its error envelope).
type JSONRequest struct {
	Provider string // the provider's name, as errors carry it: "notion"
	Title    string // the provider's name as people write it: "Notion"
	Method   string
	Path     string // joined to the Call's base URL; starts with "/"
	Query    url.Values
	Body     any // encoded as JSON when not nil
	// Form, when set, is sent as an application/x-www-form-urlencoded body instead.
	Form url.Values
	// Header holds more request headers (an API's own parameters in headers); a
	// Content-Type here replaces the one the body would set.
	Header http.Header
	// MaxBytes bounds a successful answer; TooLarge tells the caller what to ask for
	// instead when an answer is larger ("ask for a smaller page (limit)").
	MaxBytes int
	TooLarge string
}

// Do sends the request and decodes a successful answer into out (nil discards it). A
// non-2xx answer becomes the error fail returns, classified from the provider's own
// error envelope.
func (r JSONRequest) Do(ctx context.Context, c *Call, out any, fail func(*http.Response) error) error {
	_, err := r.Send(ctx, c, out, fail)
	return err
}

// Answer is what a successful answer says besides its body: its status (202 against
// 205 can carry meaning) and its headers (Link pagination, granted scopes).
type Answer struct {
	Status int
	Header http.Header
}

// Send is Do, returning the successful answer's status and headers too. A 202, 204 or
// 205 answer without a body leaves out as it is; an empty 200 or 201 is not the JSON
// the provider documents. An out of type *[]byte receives the answer's bytes undecoded.
func (r JSONRequest) Send(ctx context.Context, c *Call, out any, fail func(*http.Response) error) (Answer, error) {
	u := c.URL(r.Path)
	if len(r.Query) > 0 {
		u += "?" + r.Query.Encode()
	}
	var body io.Reader
	switch {
	case r.Form != nil:
		body = strings.NewReader(r.Form.Encode())
	case r.Body != nil:
		b, err := json.Marshal(r.Body)
		if err != nil {
			return Answer{}, fmt.Errorf("encode %s %s %s: %w", r.Provider, r.Method, r.Path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u, body)
	if err != nil {
		return Answer{}, fmt.Errorf("build %s %s %s: %w", r.Provider, r.Method, r.Path, err)
	}
	for name, values := range r.Header {
		req.Header[http.CanonicalHeaderKey(name)] = values
	}
	switch {
	case req.Header.Get("Content-Type") != "": // the caller's (an API's own JSON media type)
	case r.Form != nil:
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	case r.Body != nil:
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		if switchboard.CodeOf(err) != switchboard.CodeInternal || ctx.Err() != nil {
			// A failure with a reason of its own (the limiter's rate_limited, a refresh
			// token the provider refused, an upstream window) says more than "could not
			// be reached", and "try again" is wrong for a refused refresh.
			return Answer{}, fmt.Errorf("%s %s %s: %w", r.Provider, r.Method, r.Path, err)
		}
		// The cause stays in the chain: the router tells a write whose connection broke
		// after it was sent (its outcome unknown) from one that never left.
		return Answer{}, &switchboard.Error{Code: switchboard.CodeUpstream, Message: r.Title + " could not be reached; try again shortly",
			Err: fmt.Errorf("%s %s %s: %w", r.Provider, r.Method, r.Path, err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Answer{}, fail(resp)
	}
	data, err := readBody(resp, r.MaxBytes)
	if err != nil {
		return Answer{}, &switchboard.Error{Code: switchboard.CodeUpstream, Message: r.Title + "'s answer was cut off; try again shortly",
			Err: fmt.Errorf("read %s %s %s: %w", r.Provider, r.Method, r.Path, err)}
	}
	if len(data) > r.MaxBytes {
		return Answer{}, &UpstreamError{Provider: r.Provider, Status: resp.StatusCode, Code: switchboard.CodeUpstream,
			Message: fmt.Sprintf("the answer is larger than %d bytes; %s", r.MaxBytes, r.TooLarge)}
	}
	a := Answer{Status: resp.StatusCode, Header: resp.Header}
	if out == nil || len(bytes.TrimSpace(data)) == 0 && resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return a, nil
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = data // the caller decodes (an answer that may not be JSON)
		return a, nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return Answer{}, &UpstreamError{Provider: r.Provider, Status: resp.StatusCode, Code: switchboard.CodeUpstream,
			Reason: "invalid_response", Message: "the answer is not the JSON " + r.Title + " documents: " + err.Error()}
	}
	return a, nil
}

// readBody reads at most max+1 bytes of the answer (one more than max tells a larger
// answer). An answer that declares its length within max is read into one buffer of
// that size: io.ReadAll starts at 512 bytes and grows by copying, three allocations
// for a 600-byte issue.
func readBody(resp *http.Response, max int) ([]byte, error) {
	body := io.LimitReader(resp.Body, int64(max)+1)
	n := resp.ContentLength
	if n < 0 || n > int64(max) {
		return io.ReadAll(body)
	}
	buf := make([]byte, 0, n+1) // the extra byte's read sees EOF without growing
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // longer than declared: grow as ReadAll would
		}
		m, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
