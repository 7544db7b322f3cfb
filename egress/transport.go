package egress

import (
	"context"
	"net"
	"net/http"
	"strings"
	"time"
)

// Options shape an outgoing transport.
type Options struct {
	// Guard checks every address dialled; nil dials anywhere, through the environment's
	// proxy (only for hosts an operator named, and for tests).
	Guard *Guard
	// Trusted are the hosts ("host:port", as a URL the operator configured names them)
	// that are dialled past the guard: a provider's API or OAuth endpoint that an
	// operator pointed at a private address. A redirect to any other private address is
	// still refused.
	Trusted []string
	// MaxIdleConnsPerHost bounds the keep-alive connections kept per host; 0 means 16.
	MaxIdleConnsPerHost int
	// ResponseHeaderTimeout bounds the wait for an answer's headers; 0 means none
	// beyond the request's own deadline.
	ResponseHeaderTimeout time.Duration
}

// NewTransport returns a pooled HTTP transport that dials as the options say.
func NewTransport(o Options) *http.Transport {
	perHost := o.MaxIdleConnsPerHost
	if perHost <= 0 {
		perHost = 16
	}
	plain := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	t := &http.Transport{
		DialContext:           plain.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          max(256, 2*perHost),
		MaxIdleConnsPerHost:   perHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		ResponseHeaderTimeout: o.ResponseHeaderTimeout,
	}
	if o.Guard == nil {
		t.Proxy = http.ProxyFromEnvironment
		return t
	}
	// No proxy: a proxy would dial the host itself, past the guard.
	guarded := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: o.Guard.control}
	t.DialContext = guarded.DialContext
	if len(o.Trusted) > 0 {
		trusted := make(map[string]bool, len(o.Trusted))
		for _, h := range o.Trusted {
			trusted[strings.ToLower(h)] = true
		}
		t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if trusted[strings.ToLower(addr)] {
				return plain.DialContext(ctx, network, addr)
			}
			return guarded.DialContext(ctx, network, addr)
		}
	}
	return t
}
