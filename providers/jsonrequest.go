package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

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
	// MaxBytes bounds a successful answer; TooLarge tells the caller what to ask for
	// instead when an answer is larger ("ask for a smaller page (limit)").
	MaxBytes int
	TooLarge string
}

// Do sends the request and decodes a successful answer into out (nil discards it). A
// non-2xx answer becomes the error fail returns, classified from the provider's own
// error envelope.
func (r JSONRequest) Do(ctx context.Context, c *Call, out any, fail func(*http.Response) error) error {
	u := c.URL(r.Path)
	if len(r.Query) > 0 {
		u += "?" + r.Query.Encode()
	}
	var body io.Reader
	if r.Body != nil {
		b, err := json.Marshal(r.Body)
		if err != nil {
			return fmt.Errorf("encode %s %s %s: %w", r.Provider, r.Method, r.Path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u, body)
	if err != nil {
		return fmt.Errorf("build %s %s %s: %w", r.Provider, r.Method, r.Path, err)
	}
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		var ue *UpstreamError
		if errors.As(err, &ue) || ctx.Err() != nil {
			return fmt.Errorf("%s %s %s: %w", r.Provider, r.Method, r.Path, err)
		}
		return &switchboard.Error{Code: switchboard.CodeUpstream, Message: r.Title + " could not be reached; try again shortly",
			Err: fmt.Errorf("%s %s %s: %w", r.Provider, r.Method, r.Path, err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fail(resp)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(r.MaxBytes)+1))
	if err != nil {
		return &switchboard.Error{Code: switchboard.CodeUpstream, Message: r.Title + "'s answer was cut off; try again shortly",
			Err: fmt.Errorf("read %s %s %s: %w", r.Provider, r.Method, r.Path, err)}
	}
	if len(data) > r.MaxBytes {
		return &UpstreamError{Provider: r.Provider, Status: resp.StatusCode, Code: switchboard.CodeUpstream,
			Message: fmt.Sprintf("the answer is larger than %d bytes; %s", r.MaxBytes, r.TooLarge)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &UpstreamError{Provider: r.Provider, Status: resp.StatusCode, Code: switchboard.CodeUpstream,
			Reason: "invalid_response", Message: "the answer is not the JSON " + r.Title + " documents: " + err.Error()}
	}
	return nil
}
