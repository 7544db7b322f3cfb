package limits

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

type sourceKey struct{}

// WithSource returns ctx carrying the client address a request came from, as Sources
// found it.
func WithSource(ctx context.Context, source string) context.Context {
	return context.WithValue(ctx, sourceKey{}, source)
}

// SourceFrom returns the client address in ctx, or "" when there is none (a request
// that did not pass through Sources.Handler, or work started by the hub itself).
func SourceFrom(ctx context.Context) string {
	s, _ := ctx.Value(sourceKey{}).(string)
	return s
}

// Sources finds the client address of a request: the peer's, or, when the peer is a
// proxy the operator trusts, the nearest address in X-Forwarded-For that is not a
// trusted proxy's (the ones further left are whatever the client wrote). IPv6
// clients are keyed by their /64, the block one host usually holds.
type Sources struct {
	trusted []netip.Prefix
}

// NewSources returns Sources trusting the proxies in these CIDR ranges (an address
// alone is its /32 or /128).
func NewSources(trustedProxies []string) (*Sources, error) {
	s := &Sources{}
	for _, c := range trustedProxies {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		if !strings.Contains(c, "/") {
			a, err := netip.ParseAddr(c)
			if err != nil {
				return nil, fmt.Errorf("%q is neither an IP address nor a CIDR range", c)
			}
			c = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()).String()
		}
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR range: %w", c, err)
		}
		s.trusted = append(s.trusted, p.Masked())
	}
	return s, nil
}

// Of returns the client address of r, keyed as the throttles key it.
func (s *Sources) Of(r *http.Request) string {
	peer := parseHost(r.RemoteAddr)
	if !peer.IsValid() {
		return r.RemoteAddr
	}
	client := peer
	if s.trustedAddr(peer) {
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			a := parseHost(strings.TrimSpace(hops[i]))
			if !a.IsValid() {
				break // a malformed hop: what is left of it cannot be trusted
			}
			client = a
			if !s.trustedAddr(a) {
				break
			}
		}
	}
	return key(client)
}

// Handler puts each request's client address in its context.
func (s *Sources) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(WithSource(r.Context(), s.Of(r))))
	})
}

func (s *Sources) trustedAddr(a netip.Addr) bool {
	for _, p := range s.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseHost parses "host", "host:port" or "[host]:port" into an address without zone,
// IPv4-mapped addresses as IPv4.
func parseHost(s string) netip.Addr {
	if h, _, err := net.SplitHostPort(s); err == nil {
		s = h
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.Addr{}
	}
	return a.WithZone("").Unmap()
}

// key is how a client address is throttled: IPv4 as itself, IPv6 by its /64.
func key(a netip.Addr) string {
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
