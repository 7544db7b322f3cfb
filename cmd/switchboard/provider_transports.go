package main

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/providers"
)

// providerTransports makes each provider's shared transport dial through the egress
// guard, past which only the hosts this deployment's configuration names for that
// provider are dialled: its API base URL and its OAuth app's endpoints, when an operator
// pointed them at a private address (GitHub Enterprise Server, a test double). A
// redirect or a provider's answer that leads anywhere else private is refused.
func providerTransports(guard *egress.Guard, reg *providers.Registry, apps map[string]connections.OAuthApp) func(provider string) http.RoundTripper {
	return func(provider string) http.RoundTripper {
		configured := []string{reg.BaseURL(provider)}
		if app, ok := apps[provider]; ok {
			configured = append(configured, app.AuthURL, app.TokenURL)
		}
		var trusted []string
		for _, raw := range configured {
			if h := hostPort(raw); h != "" {
				trusted = append(trusted, h)
			}
		}
		return egress.NewTransport(egress.Options{Guard: guard, Trusted: trusted, MaxIdleConnsPerHost: 256, ResponseHeaderTimeout: 60 * time.Second})
	}
}

// hostPort is the address a URL dials, "host:port" with the scheme's default port, or
// "" for anything that is not an http(s) URL.
func hostPort(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if strings.EqualFold(u.Scheme, "https") {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}
