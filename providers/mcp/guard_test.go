package mcp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
)

// refusedHosts are URL hosts the guard must refuse, and the address it names for each:
// the plain private ranges, every IPv6 form that embeds or maps one, and the same
// addresses with a zone (netip.Prefix.Contains is false for a zoned address, so a
// guard that forgets to strip the zone lets them through).
var refusedHosts = []struct {
	name string
	host string // as in a URL: IPv6 in brackets, its zone escaped as %25
	want string // the address the refusal names
}{
	{name: "loopback", host: "127.0.0.1", want: "127.0.0.1"},
	{name: "private 10/8", host: "10.1.2.3", want: "10.1.2.3"},
	{name: "cloud metadata", host: "169.254.169.254", want: "169.254.169.254"},
	{name: "IPv6 loopback", host: "[::1]", want: "::1"},
	{name: "IPv4-mapped IPv6 loopback", host: "[::ffff:127.0.0.1]", want: "127.0.0.1"},
	{name: "NAT64 cloud metadata", host: "[64:ff9b::a9fe:a9fe]", want: "64:ff9b::a9fe:a9fe"},
	{name: "6to4 loopback", host: "[2002:7f00:1::]", want: "2002:7f00:1::"},
	{name: "IPv6 loopback with zone", host: "[::1%25lo]", want: "::1"},
	{name: "IPv6 cloud metadata with zone", host: "[fd00:ec2::254%25eth0]", want: "fd00:ec2::254"},
	{name: "link-local with zone", host: "[fe80::1%25eth0]", want: "fe80::1"},
	{name: "unique-local with numeric zone", host: "[fc00::1%251]", want: "fc00::1"},
	{name: "NAT64 cloud metadata with zone", host: "[64:ff9b::a9fe:a9fe%25eth0]", want: "64:ff9b::a9fe:a9fe"},
	{name: "IPv4-mapped loopback with zone", host: "[::ffff:127.0.0.1%25lo]", want: "127.0.0.1"},
	{name: "IPv4-compatible loopback", host: "[::127.0.0.1]", want: "::7f00:1"},
	{name: "IPv4-compatible cloud metadata", host: "[::a9fe:a9fe]", want: "::a9fe:a9fe"},
	{name: "IPv4-translated cloud metadata", host: "[::ffff:0:a9fe:a9fe]", want: "::ffff:0:a9fe:a9fe"},
	{name: "IPv4-translated loopback with zone", host: "[::ffff:0:7f00:1%25eth0]", want: "::ffff:0:7f00:1"},
	{name: "unspecified", host: "[::]", want: "::"},
	{name: "Teredo", host: "[2001:0:4136:e378:8000:63bf:3fff:fdd2]", want: "2001:0:4136:e378:8000:63bf:3fff:fdd2"},
}

// TestGuardRefusesEveryForm registers a server at, and dials, every refused address:
// registration refuses the url naming the address and how an operator allows it, and
// the dial hook refuses the connection before it is made.
func TestGuardRefusesEveryForm(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	r := newRig(t, db)
	guarded, err := remotemcp.New(remotemcp.Options{Connections: r.conns})
	if err != nil {
		t.Fatal(err)
	}
	g, err := egress.NewGuard(false, nil)
	if err != nil {
		t.Fatal(err)
	}
	dialer := &http.Client{Transport: g.Transport()}
	for _, tt := range refusedHosts {
		t.Run(tt.name+"/registration", func(t *testing.T) {
			t.Parallel()
			_, err := guarded.Register(context.Background(), r.a, remotemcp.RegisterInput{Name: "docs", URL: "http://" + tt.host + "/mcp"})
			e := switchboard.AsError(err)
			if e == nil || e.Code != switchboard.CodeInvalid || e.Field != "url" || !strings.Contains(e.Message, tt.want+", a private, loopback") || !strings.Contains(e.Message, egress.AllowPrivateEnv) {
				t.Fatalf("Register = %v, want invalid url naming %s and %s", err, tt.want, egress.AllowPrivateEnv)
			}
		})
		t.Run(tt.name+"/dial", func(t *testing.T) {
			t.Parallel()
			resp, err := dialer.Get("http://" + tt.host + ":1/")
			if err == nil {
				resp.Body.Close()
				t.Fatal("the request went through, want it refused")
			}
			var re *egress.RefusedError
			if !errors.As(err, &re) || re.Addr != netip.MustParseAddr(tt.want) {
				t.Fatalf("dial error = %v, want the guard's refusal of %s", err, tt.want)
			}
		})
	}
	list, err := r.conns.List(context.Background(), r.a)
	if err != nil || len(list) != 0 {
		t.Fatalf("connections after refusals = %v, %v; want none", list, err)
	}
}

// TestGuardOAuthEndpoints registers a server that wants OAuth whose authorization
// server (or one of its endpoints) is at a refused address, zoned: each is refused on
// the url, naming the endpoint, before anything is sent there.
func TestGuardOAuthEndpoints(t *testing.T) {
	t.Parallel()
	const bad = "http://[fd00:ec2::254%25eth0]"
	tests := []struct {
		name     string
		issuer   bool // the authorization server itself is at bad
		endpoint string
		want     string
	}{
		{name: "authorization server", issuer: true, want: "fd00:ec2::254"},
		{name: "authorization_endpoint", endpoint: "authorization_endpoint", want: "authorization_endpoint: fd00:ec2::254%eth0 is fd00:ec2::254"},
		{name: "token_endpoint", endpoint: "token_endpoint", want: "token_endpoint: fd00:ec2::254%eth0 is fd00:ec2::254"},
		{name: "registration_endpoint", endpoint: "registration_endpoint", want: "registration_endpoint: fd00:ec2::254%eth0 is fd00:ec2::254"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var registered, others atomic.Int32
			as := httptest.NewServer(nil)
			t.Cleanup(as.Close)
			as.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/.well-known/oauth-authorization-server":
					meta := map[string]any{
						"issuer": as.URL, "authorization_endpoint": as.URL + "/authorize", "token_endpoint": as.URL + "/token",
						"registration_endpoint": as.URL + "/register", "response_types_supported": []string{"code"},
						"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
					}
					if tt.endpoint != "" {
						meta[tt.endpoint] = bad + "/" + tt.endpoint
					}
					writeJSON(w, http.StatusOK, meta)
				case "/register":
					registered.Add(1)
					writeJSON(w, http.StatusCreated, map[string]any{"client_id": "c1", "token_endpoint_auth_method": "none"})
				default:
					others.Add(1)
					http.NotFound(w, r)
				}
			})
			asURL := as.URL
			if tt.issuer {
				asURL = bad
			}
			var mcpSrv *httptest.Server
			mcpSrv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
					writeJSON(w, http.StatusOK, map[string]any{"resource": mcpSrv.URL + "/mcp", "authorization_servers": []string{asURL}})
					return
				}
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+mcpSrv.URL+`/.well-known/oauth-protected-resource/mcp"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
			}))
			t.Cleanup(mcpSrv.Close)

			db := testdb.SQLite(t)
			r := newRig(t, db)
			g, err := egress.NewGuard(false, []string{"127.0.0.0/8"}) // the test servers only
			if err != nil {
				t.Fatal(err)
			}
			svc, err := remotemcp.New(remotemcp.Options{Connections: r.conns, Guard: g})
			if err != nil {
				t.Fatal(err)
			}
			_, err = svc.Register(context.Background(), r.a, remotemcp.RegisterInput{Name: "docs", URL: mcpSrv.URL + "/mcp", Auth: remotemcp.AuthOAuth})
			e := switchboard.AsError(err)
			if e == nil || e.Code != switchboard.CodeInvalid || e.Field != "url" || !strings.Contains(e.Message, tt.want) || !strings.Contains(e.Message, egress.AllowPrivateEnv) {
				t.Fatalf("Register = %v, want invalid url containing %q", err, tt.want)
			}
			if registered.Load() != 0 || others.Load() != 0 {
				t.Errorf("the hub registered %d clients and sent %d other requests to the authorization server, want none", registered.Load(), others.Load())
			}
		})
	}
}
