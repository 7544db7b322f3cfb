// Package testproxy is a loopback reverse proxy for tests that put a front (an
// authenticating proxy, a balancer's stand-in) between a client and a server.
//
// It differs from a bare httputil.ReverseProxy in one way that matters under load: it
// reads a request's body whole before it forwards the request. A bare proxy streams the
// body, and its transport reads the client's body once more after the last byte to see
// it end; when the server has already answered and the proxy has flushed that answer's
// headers, net/http has closed the client's body, that read fails, and the transport
// closes the server's connection under the answer it is copying ("use of closed network
// connection"): the client sees its stream cut. Test bodies are small, so holding them
// costs nothing.
//
// Start from [New].
package testproxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
)

// MaxBody is the largest request body the proxy forwards; a longer one is refused with
// 413.
const MaxBody = 16 << 20

// New is a proxy to target that streams answers (server-sent events) as they come.
// rewrite, when not nil, changes each outgoing request after it is aimed at target.
// The proxy has a transport of its own: other tests' httptest servers close
// http.DefaultTransport's idle connections when they stop.
func New(target *url.URL, rewrite func(*httputil.ProxyRequest)) http.Handler {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	p := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
			if rewrite != nil {
				rewrite(r)
			}
		},
		FlushInterval: -1,
		Transport:     tr,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
			if err != nil {
				http.Error(w, "testproxy: reading the request body: "+err.Error(), http.StatusRequestEntityTooLarge)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			r.TransferEncoding = nil
			if len(body) == 0 {
				r.Body = http.NoBody
			}
		}
		p.ServeHTTP(w, r)
	})
}
