// Package egress is the hub's one way out: every request it sends to a provider, a
// remote MCP server, a tenant's API, an OAuth or OIDC endpoint or a document it fetches
// dials through its address guard and follows redirects by its policy, so credentials
// never reach an origin they were not given for.
//
// Start from [Guard] (the address guard, from [Options]), [NewTransport] and [Client],
// which dial through it, and [CheckRedirect] for the redirect policy; a refusal is a
// [RefusedError].
package egress

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// AllowPrivateEnv and AllowCIDRsEnv are the operator's settings that let the hub's
// outgoing requests (remote MCP servers, tenants' APIs, their OAuth endpoints) reach
// private addresses (cmd/switchboard reads them).
const (
	AllowPrivateEnv = "SWITCHBOARD_REMOTE_MCP_ALLOW_PRIVATE"
	AllowCIDRsEnv   = "SWITCHBOARD_REMOTE_MCP_ALLOW_CIDRS"
)

// refusedPrefixes are the ranges an outgoing request may not reach unless an operator
// allows them: loopback, private, shared (CGNAT), link-local (cloud metadata at
// 169.254.169.254), unique-local (fd00:ec2::254), "this network", documentation,
// benchmarking, multicast and reserved, and the IPv6 ranges that embed an IPv4 address
// a gateway or the host reaches: IPv4-compatible (::/96, which holds :: and ::1),
// IPv4-translated (::ffff:0:0:0/96), NAT64, 6to4 and Teredo. IPv4-mapped IPv6 addresses
// are checked as IPv4. Addresses are checked without their zone (see normalize).
var refusedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("224.0.0.0/4"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (::7f00:1 is 127.0.0.1), :: and ::1
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated (RFC 2765): ::ffff:0:a9fe:a9fe
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64: 64:ff9b::a9fe:a9fe reaches 169.254.169.254
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"),      // discard-only
	netip.MustParsePrefix("2001::/32"),     // Teredo: embeds an IPv4 address
	netip.MustParsePrefix("2001:db8::/32"), // documentation
	netip.MustParsePrefix("2002::/16"),     // 6to4: 2002:7f00:1:: embeds 127.0.0.1
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("fec0::/10"), // site-local (deprecated, still routed by some hosts)
	netip.MustParsePrefix("ff00::/8"),
}

// normalize is the address the guard checks: without its zone (netip.Prefix.Contains
// is false for every zoned address, so fe80::1%eth0 would otherwise pass) and with an
// IPv4-mapped address as the IPv4 address it maps.
func normalize(addr netip.Addr) netip.Addr {
	return addr.WithZone("").Unmap()
}

// Guard refuses connections to private, loopback, link-local and metadata addresses
// (SSRF), unless the operator allows all private addresses or some ranges. It checks a
// URL's host when a server is registered, and every address again when it is dialled
// (a name may resolve elsewhere later), including the addresses of OAuth endpoints that
// a server's metadata names.
type Guard struct {
	allowPrivate bool
	allow        []netip.Prefix
	resolver     *net.Resolver
}

// NewGuard returns a guard. allowPrivate lets every address through; allowCIDRs are
// ranges allowed although private ("10.1.0.0/16", "127.0.0.1/32").
func NewGuard(allowPrivate bool, allowCIDRs []string) (*Guard, error) {
	g := &Guard{allowPrivate: allowPrivate, resolver: net.DefaultResolver}
	for _, c := range allowCIDRs {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a CIDR range: %w", AllowCIDRsEnv, c, err)
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 { // ::ffff:10.0.0.0/104 is 10.0.0.0/8: addresses are checked unmapped
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		g.allow = append(g.allow, p.Masked())
	}
	return g, nil
}

// RefusedError says which address a host resolved to that the guard refused. Host is the name or address as given (with its zone, if any); Addr is
// the address checked (without a zone, IPv4-mapped addresses unmapped).
type RefusedError struct {
	Host string
	Addr netip.Addr
}

func (e *RefusedError) Error() string {
	host := ""
	if e.Host != "" && e.Host != e.Addr.String() {
		host = e.Host + " resolves to "
		if _, err := netip.ParseAddr(strings.Trim(e.Host, "[]")); err == nil {
			host = e.Host + " is "
		}
	}
	return fmt.Sprintf("%s%s, a private, loopback, link-local or reserved address, which outgoing requests may not reach; an operator can allow it with %s=true or %s=%s",
		host, e.Addr, AllowPrivateEnv, AllowCIDRsEnv, netip.PrefixFrom(e.Addr, e.Addr.BitLen()))
}

// allowed reports whether the guard lets a connection to addr through.
func (g *Guard) allowed(addr netip.Addr) bool {
	addr = normalize(addr)
	if !addr.IsValid() {
		return false
	}
	if g.allowPrivate {
		return true
	}
	for _, p := range g.allow {
		if p.Contains(addr) {
			return true
		}
	}
	for _, p := range refusedPrefixes {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}

// CheckHost resolves host and refuses it when any of its addresses is refused.
func (g *Guard) CheckHost(ctx context.Context, host string) error {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if !g.allowed(a) {
			return &RefusedError{Host: host, Addr: normalize(a)}
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addrs, err := g.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", host, err)
	}
	for _, a := range addrs {
		if !g.allowed(a) {
			return &RefusedError{Host: host, Addr: normalize(a)}
		}
	}
	return nil
}

// control is the net.Dialer hook that checks the address actually dialled. The dialer
// may hand it an IPv4 address with the zone of the IPv6 form it came from
// ("127.0.0.1%lo:443" for [::ffff:127.0.0.1%lo]), so the zone is cut off by hand;
// anything that is not an address is refused.
func (g *Guard) control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: not an IP address and port", address)
	}
	ip, _, _ := strings.Cut(host, "%")
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return fmt.Errorf("dial %s: not an IP address", address)
	}
	if !g.allowed(a) {
		return &RefusedError{Host: host, Addr: normalize(a)}
	}
	return nil
}

// Transport returns an HTTP transport that dials through the guard, for requests to
// hosts a tenant named (remote MCP servers, tenants' APIs, their OAuth endpoints).
func (g *Guard) Transport() *http.Transport {
	return NewTransport(Options{Guard: g})
}
