package providers

import (
	"net/http"
	"sync"
)

// Transports hands out one pooled transport per provider, created on first use, so
// every connection of a provider shares its keep-alive connections.
type Transports struct {
	mu sync.Mutex
	m  map[string]http.RoundTripper
	// New makes a provider's transport; nil means NewTransport. Tests set it to reach
	// their fake upstreams through a custom dialer.
	New func(provider string) http.RoundTripper
	// Wrap, when set, wraps each provider's transport once, below the rate limiter and
	// the retries, so it sees every attempt: telemetry's tracing and upstream metrics.
	Wrap func(provider string, next http.RoundTripper) http.RoundTripper
}

// Set gives a provider a transport of its own in place of the one New makes (the
// tenants' APIs dial through the SSRF guard), wrapped as For wraps every transport.
// Call it while wiring, before For.
func (t *Transports) Set(provider string, rt http.RoundTripper) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]http.RoundTripper{}
	}
	if t.Wrap != nil {
		rt = t.Wrap(provider, rt)
	}
	t.m[provider] = &timedTransport{next: rt}
}

// For returns the provider's shared transport.
func (t *Transports) For(provider string) http.RoundTripper {
	t.mu.Lock()
	defer t.mu.Unlock()
	if rt, ok := t.m[provider]; ok {
		return rt
	}
	if t.m == nil {
		t.m = map[string]http.RoundTripper{}
	}
	var rt http.RoundTripper
	if t.New != nil {
		rt = t.New(provider)
	} else {
		rt = NewTransport()
	}
	if t.Wrap != nil {
		rt = t.Wrap(provider, rt)
	}
	rt = &timedTransport{next: rt}
	t.m[provider] = rt
	return rt
}
