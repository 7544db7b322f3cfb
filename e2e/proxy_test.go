package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// rrProxy is a load balancer as plain as they come: every request goes to the next
// backend in turn (round robin per request, no stickiness of any kind), responses
// stream through as they are written (server-sent events included), and a backend that
// refuses the connection (a killed node) is passed over for the next, as a load
// balancer's health check would soon do.
type rrProxy struct {
	*httptest.Server
	backends []*url.URL
	tr       *http.Transport

	mu   sync.Mutex
	next int
	log  []proxied
	// answerAway, when set, sends a JSON-RPC response (a client's answer to a server's
	// request, such as an elicitation) to another backend than the one that served the
	// last tools/call: the answer must cross nodes.
	answerAway bool
	// hold keeps the connection to the backend when the client leaves, until passing on
	// what the backend writes fails, as HAProxy does in tunnel mode (an SSE stream):
	// the node learns that the client is gone only when it writes.
	hold bool
}

// proxied is one request the proxy forwarded: to which backend, and what it was (the
// JSON-RPC method, "response" for a client's answer, or the HTTP method).
type proxied struct {
	Backend int
	Kind    string
}

func newRRProxy(t testing.TB, l net.Listener, backends []string) *rrProxy {
	t.Helper()
	p := &rrProxy{tr: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64}}
	for _, b := range backends {
		u, err := url.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		p.backends = append(p.backends, u)
	}
	p.Server = httptest.NewUnstartedServer(p)
	p.Server.Listener = l
	p.Start()
	t.Cleanup(func() {
		p.Close()
		p.tr.CloseIdleConnections()
	})
	return p
}

// kind names a request for the log.
func kind(r *http.Request, body []byte) string {
	if r.Method != http.MethodPost {
		return r.Method
	}
	var msg struct {
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return "POST"
	}
	if msg.Method == "" && (msg.Result != nil || msg.Error != nil) {
		return "response"
	}
	return msg.Method
}

// pick chooses the first backend to try.
func (p *rrProxy) pick(k string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if k == "response" && p.answerAway {
		for i := len(p.log) - 1; i >= 0; i-- {
			if p.log[i].Kind == "tools/call" {
				return (p.log[i].Backend + 1) % len(p.backends)
			}
		}
	}
	b := p.next % len(p.backends)
	p.next++
	return b
}

// served lists what the proxy forwarded so far.
func (p *rrProxy) served() []proxied {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]proxied(nil), p.log...)
}

func (p *rrProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		http.Error(w, "read request: "+err.Error(), http.StatusBadGateway)
		return
	}
	k := kind(r, body)
	first := p.pick(k)
	for i := range p.backends {
		b := (first + i) % len(p.backends)
		ctx := r.Context()
		if p.hold {
			ctx = context.WithoutCancel(ctx)
		}
		out := r.Clone(ctx)
		out.RequestURI = ""
		out.URL.Scheme, out.URL.Host = p.backends[b].Scheme, p.backends[b].Host
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.ContentLength = int64(len(body))
		resp, err := p.tr.RoundTrip(out)
		var op *net.OpError
		if err != nil && errors.As(err, &op) && op.Op == "dial" {
			continue // a dead node: nothing was sent to it
		}
		if err != nil {
			http.Error(w, "proxy: "+err.Error(), http.StatusBadGateway)
			return
		}
		p.mu.Lock()
		p.log = append(p.log, proxied{Backend: b, Kind: k})
		p.mu.Unlock()
		defer resp.Body.Close()
		for name, vs := range resp.Header {
			w.Header()[name] = vs
		}
		w.WriteHeader(resp.StatusCode)
		_ = http.NewResponseController(w).Flush() // the headers go at once, as the backend sent them
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					return
				}
				if err := http.NewResponseController(w).Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	http.Error(w, "proxy: no backend answers", http.StatusBadGateway)
}
