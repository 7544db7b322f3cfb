package providers

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/switchboard-hub/switchboard/egress"
	"golang.org/x/oauth2"
)

// NewTransport returns the pooled transport one provider's connections share: keep-alive
// connections to the provider's host are reused across tenants' calls, while each
// connection's client adds its own credentials and limits on top. It dials anywhere;
// a deployment wires providers to transports that dial through its egress guard
// (Transports.New).
func NewTransport() *http.Transport {
	return egress.NewTransport(egress.Options{MaxIdleConnsPerHost: 256, ResponseHeaderTimeout: 60 * time.Second})
}

// NewClient returns the HTTP client of one connection: it authenticates every request
// with the token source, sets the provider's headers, waits for the connection's token
// bucket and upstream rate-limit windows, and retries what the operation's hints allow.
// base is the provider's shared transport; lim is the connection's Limiter (nil makes a
// new one, for a client used once, such as a token check). Credentials never follow a
// redirect to another origin, and follow one to the same origin only when the spec
// says so (SameOriginRedirects).
func NewClient(spec *Spec, base http.RoundTripper, tokens oauth2.TokenSource, lim *Limiter) *http.Client {
	if lim == nil {
		lim = NewLimiter(spec)
	}
	var rt http.RoundTripper = &authTransport{next: base, tokens: tokens, headers: spec.Headers, authHeader: spec.AuthHeader, authorize: spec.Authorize}
	rt = &limitTransport{Limiter: lim, next: rt}
	rt = &retrier{next: rt, attempts: 3, base: 200 * time.Millisecond, maxWait: lim.maxWait}
	return &http.Client{Transport: &deadlineTransport{next: rt, timeout: clientTimeout}, CheckRedirect: egress.CheckRedirect(spec.SameOriginRedirects)}
}

// clientTimeout bounds a request, its retries and the reading of its answer when the
// caller's context sets no deadline of its own.
const clientTimeout = 2 * time.Minute

// deadlineTransport gives a request without a deadline one of timeout, which ends when
// the answer's body is closed. It stands in for http.Client.Timeout, which starts a
// timer and a goroutine for every request, even one whose context ends sooner: a tool
// call's always does (the operation's deadline).
type deadlineTransport struct {
	next    http.RoundTripper
	timeout time.Duration
}

func (t *deadlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if _, ok := req.Context().Deadline(); ok {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose is an answer's body that ends its request's context when closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// authTransport sets the credential and the provider's headers on a copy of each request.
type authTransport struct {
	next    http.RoundTripper
	tokens  oauth2.TokenSource
	headers map[string]string
	// authHeader is Spec.AuthHeader; nil sets the token as the oauth2 package does.
	authHeader func(accessToken string) (name, value string)
	// authorize is Spec.Authorize; it takes precedence over authHeader.
	authorize func(r *http.Request, accessToken string)
}

// ContextTokenSource is a token source whose work behind a token (a refresh) takes the
// request's context; authTransport prefers it to Token. Implementations must not keep
// the context.
type ContextTokenSource interface {
	TokenContext(ctx context.Context) (*oauth2.Token, error)
}

func (t *authTransport) token(ctx context.Context) (*oauth2.Token, error) {
	if cts, ok := t.tokens.(ContextTokenSource); ok {
		return cts.TokenContext(ctx)
	}
	return t.tokens.Token()
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !egress.MayCarryCredentials(req) {
		return t.next.RoundTrip(req) // a hop to another origin: the client's policy left it bare
	}
	tok, err := t.token(req.Context())
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	r := req.Clone(req.Context())
	for k, v := range t.headers {
		if r.Header.Get(k) == "" {
			r.Header.Set(k, v)
		}
	}
	if r.Header.Get("User-Agent") == "" {
		r.Header.Set("User-Agent", "Switchboard/1.0")
	}
	switch {
	case t.authorize != nil:
		t.authorize(r, tok.AccessToken) // r is a clone: a credential in its URL stays there
	case t.authHeader != nil:
		name, value := t.authHeader(tok.AccessToken)
		r.Header.Set(name, value)
	default:
		tok.SetAuthHeader(r)
	}
	return t.next.RoundTrip(r)
}
