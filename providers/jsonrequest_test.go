package providers

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestJSONRequestSend: Send returns the successful answer's status and headers (GitHub's
// Link pagination and its 202 against 205), decodes a body, and leaves out as it is for
// a 202, 204 or 205 without one; an empty 200 or 201 is not JSON.
func TestJSONRequestSend(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		status   int
		body     string
		want     map[string]any
		wantCode switchboard.Code
	}{
		{name: "200 with a body is decoded", status: http.StatusOK, body: `{"id":7}`, want: map[string]any{"id": float64(7)}},
		{name: "201 with a body is decoded", status: http.StatusCreated, body: `{"id":8}`, want: map[string]any{"id": float64(8)}},
		{name: "204 without a body", status: http.StatusNoContent, want: map[string]any{"kept": true}},
		{name: "202 without a body", status: http.StatusAccepted, want: map[string]any{"kept": true}},
		{name: "205 without a body", status: http.StatusResetContent, want: map[string]any{"kept": true}},
		{name: "empty 200 is not JSON", status: http.StatusOK, wantCode: switchboard.CodeUpstream},
		{name: "empty 201 is not JSON", status: http.StatusCreated, wantCode: switchboard.CodeUpstream},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := make(chan string, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				got <- r.Method + " " + r.URL.RequestURI() + " " + r.Header.Get("Content-Type") + " " + string(b)
				w.Header().Set("Link", `<https://api.test/items?page=2>; rel="next"`)
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}))
			t.Cleanup(srv.Close)
			out := map[string]any{"kept": true}
			if tt.body != "" {
				out = map[string]any{}
			}
			a, err := JSONRequest{Provider: "desk", Title: "Desk", Method: http.MethodPost, Path: "/items", Body: map[string]int{"n": 1}, MaxBytes: 1 << 10}.
				Send(context.Background(), &Call{BaseURL: srv.URL, HTTP: srv.Client()}, &out, func(*http.Response) error { t.Error("a 2xx answer failed"); return nil })
			if diff := cmp.Diff("POST /items application/json {\"n\":1}", testwait.Recv(t, got, "the upstream to receive the request")); diff != "" {
				t.Errorf("request sent (-want +got):\n%s", diff)
			}
			if tt.wantCode != "" {
				if switchboard.CodeOf(err) != tt.wantCode {
					t.Fatalf("error = %v, want code %s", err, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Status != tt.status || a.Header.Get("Link") == "" {
				t.Errorf("answer = status %d, Link %q; want status %d with its Link header", a.Status, a.Header.Get("Link"), tt.status)
			}
			if diff := cmp.Diff(tt.want, out); diff != "" {
				t.Errorf("out (-want +got):\n%s", diff)
			}
		})
	}
}

// failingTransport fails every request with err, as a client's token source or limiter
// does before anything is sent.
type failingTransport struct{ err error }

func (f failingTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

// TestJSONRequestTransportFailures: a failure that carries a code of its own (a refresh
// token the provider refused, a token endpoint's rate limit, the connection's rate
// limit) keeps it; only a failure without one is "could not be reached".
func TestJSONRequestTransportFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		err      error
		wantCode switchboard.Code
		wantMsg  string
	}{
		{name: "refresh token refused", err: &switchboard.Error{Code: switchboard.CodeReconnect, Message: "the desk connection needs to be reconnected"},
			wantCode: switchboard.CodeReconnect, wantMsg: "needs to be reconnected"},
		{name: "token endpoint rate limited", err: &switchboard.Error{Code: switchboard.CodeRateLimited, Message: "Desk refused to refresh the token: slow_down"},
			wantCode: switchboard.CodeRateLimited, wantMsg: "slow_down"},
		{name: "connection's rate limit", err: &UpstreamError{Provider: "desk", Status: http.StatusTooManyRequests, Code: switchboard.CodeRateLimited, Message: "nothing was sent"},
			wantCode: switchboard.CodeRateLimited, wantMsg: "nothing was sent"},
		{name: "no reason of its own", err: io.ErrUnexpectedEOF, wantCode: switchboard.CodeUpstream, wantMsg: "Desk could not be reached; try again shortly"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &Call{BaseURL: "https://desk.test", HTTP: &http.Client{Transport: failingTransport{tt.err}}}
			err := JSONRequest{Provider: "desk", Title: "Desk", Method: http.MethodGet, Path: "/items", MaxBytes: 1 << 10}.
				Do(context.Background(), c, nil, func(*http.Response) error { t.Error("no answer was received"); return nil })
			if got := switchboard.CodeOf(err); got != tt.wantCode {
				t.Fatalf("error = %v (code %s), want code %s", err, got, tt.wantCode)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error = %v, want it to say %q", err, tt.wantMsg)
			}
		})
	}
}

// bodyTransport answers every request with body, declaring contentLength (-1 for none).
type bodyTransport struct {
	body          string
	contentLength int64
}

func (t bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, ContentLength: t.contentLength,
		Body: io.NopCloser(strings.NewReader(t.body)), Request: r}, nil
}

// TestJSONRequestReadsTheWholeAnswer: an answer is read in full, and one over MaxBytes
// refused, whether it declares its length, declares none, or declares less or more
// than it holds (Send reads a declared length into one buffer of that size).
func TestJSONRequestReadsTheWholeAnswer(t *testing.T) {
	t.Parallel()
	small := `{"title":"` + strings.Repeat("x", 600) + `"}`
	large := `{"title":"` + strings.Repeat("x", 2000) + `"}`
	tests := []struct {
		name          string
		body          string
		contentLength int64
		tooLarge      bool
	}{
		{name: "declared", body: small, contentLength: int64(len(small))},
		{name: "undeclared", body: small, contentLength: -1},
		{name: "declared short", body: small, contentLength: 10},
		{name: "declared long", body: small, contentLength: int64(len(small)) + 100},
		{name: "declared, over the limit", body: large, contentLength: int64(len(large)), tooLarge: true},
		{name: "undeclared, over the limit", body: large, contentLength: -1, tooLarge: true},
		{name: "declared short, over the limit", body: large, contentLength: 10, tooLarge: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out struct{ Title string }
			_, err := JSONRequest{Provider: "desk", Title: "Desk", Method: http.MethodGet, Path: "/items", MaxBytes: 1 << 10}.
				Send(context.Background(), &Call{BaseURL: "https://desk.test", HTTP: &http.Client{Transport: bodyTransport{tt.body, tt.contentLength}}}, &out,
					func(*http.Response) error { t.Error("a 2xx answer failed"); return nil })
			if tt.tooLarge {
				if err == nil || !strings.Contains(err.Error(), "larger than 1024 bytes") {
					t.Fatalf("error = %v, want the answer refused as larger than 1024 bytes", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Title != strings.Repeat("x", 600) {
				t.Errorf("title has %d bytes, want 600", len(out.Title))
			}
		})
	}
}
