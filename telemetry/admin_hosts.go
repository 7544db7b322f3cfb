package telemetry

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// AdminHostsEnv is the variable that names the host names, besides IP addresses and
// localhost, the admin listener answers to.
const AdminHostsEnv = "SWITCHBOARD_ADMIN_HOSTS"

// adminHosts is the Host check of the admin listener: a page a browser loaded from an
// attacker's name that resolves to the listener's address (DNS rebinding) sends that
// name as its Host, so only names the listener is known by are answered.
type adminHosts map[string]bool

// CheckAdminHost reports what is wrong with a name given for the admin listener's
// Host check, or nil: it must be a DNS name (letters, digits, hyphens and dots),
// without a scheme, port or path.
func CheckAdminHost(name string) error {
	if !isHostName(strings.TrimSuffix(name, ".")) {
		return fmt.Errorf("%q is not a host name; give names such as metrics.internal, without a scheme or port", name)
	}
	return nil
}

// isHostName reports whether name is a DNS name of letters, digits and hyphens.
func isHostName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// allows reports whether the admin listener answers a request whose Host header is
// host: an IP address, localhost, or one of the configured names, with any port.
func (a adminHosts) allows(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	host = strings.ToLower(host)
	return host == "localhost" || a[host]
}

// checkHost refuses, with 421 Misdirected Request, a request whose Host the listener
// is not known by.
func (a adminHosts) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.allows(r.Host) {
			http.Error(w, "this admin listener answers only an IP address, localhost or a name in "+AdminHostsEnv+" as the Host", http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}
