// Package httpx holds small HTTP helpers that more than one of Switchboard's HTTP
// front ends (the REST API and the MCP adapter) need and that belong to neither.
//
// Start from [AllowOrigin] and [AnswerPreflight] (CORS), [AcceptsGzip], and
// [IsLoopbackHost].
package httpx

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// OnLoopback reports whether the request arrived on a loopback listener.
func OnLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && addr != nil && IsLoopbackHost(addr.String())
}

// IsLoopbackHost reports whether host (with or without a port) is a loopback name.
func IsLoopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
