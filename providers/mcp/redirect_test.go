package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
)

// seen records the Authorization header of every request a test server received, by
// path.
type seen struct {
	mu    sync.Mutex
	auths map[string][]string
}

func (s *seen) record(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.auths == nil {
		s.auths = map[string][]string{}
	}
	s.auths[r.URL.Path] = append(s.auths[r.URL.Path], r.Header.Get("Authorization"))
}

func (s *seen) at(path string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.auths[path])
}

// redirectingServer is an MCP server (mcp-go) at /mcp that answers every request to
// /old with a 307 to where(r), recording what it receives.
func redirectingServer(t *testing.T, where func(srv *httptest.Server, r *http.Request) string) (*httptest.Server, *seen) {
	t.Helper()
	rec := &seen{}
	h := server.NewStreamableHTTPServer(newMCPServer(t, "").mcp)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(r)
		if r.URL.Path == "/old" {
			http.Redirect(w, r, where(srv, r), http.StatusTemporaryRedirect)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		testwait.CloseServer(t, srv)
	})
	return srv, rec
}

// TestBearerStaysAtOrigin registers servers whose URL redirects: the bearer token goes
// with a redirect to another path of the registered origin, and never with one to
// another origin (here another port of the same host, which Go's own rule would let
// through).
func TestBearerStaysAtOrigin(t *testing.T) {
	t.Parallel()
	const token = "Bearer remote-secret"
	other, otherSeen := redirectingServer(t, nil) // serves /mcp without auth
	tests := []struct {
		name       string
		where      func(srv *httptest.Server, r *http.Request) string
		target     func(own *seen) []string // what the redirect target received
		wantTarget string
	}{
		{
			name:       "same origin keeps the token",
			where:      func(srv *httptest.Server, _ *http.Request) string { return srv.URL + "/mcp" },
			target:     func(own *seen) []string { return own.at("/mcp") },
			wantTarget: token,
		},
		{
			name:       "another origin gets none",
			where:      func(*httptest.Server, *http.Request) string { return other.URL + "/mcp" },
			target:     func(*seen) []string { return otherSeen.at("/mcp") },
			wantTarget: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, own := redirectingServer(t, tt.where)
			r := newRig(t, testdb.SQLite(t))
			reg, err := r.remote.Register(context.Background(), r.a, remotemcp.RegisterInput{Name: "docs", URL: srv.URL + "/old", Auth: remotemcp.AuthBearer, Token: "remote-secret"})
			if err != nil {
				t.Fatalf("register: %v", err)
			}
			if diff := cmp.Diff([]string{"docs_shout"}, reg.Tools); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			first := own.at("/old")
			if len(first) == 0 || first[0] != token {
				t.Errorf("the registered URL received %q, want the token first", first)
			}
			got := tt.target(own)
			if len(got) == 0 {
				t.Fatal("the redirect target received nothing")
			}
			for i, a := range got {
				if a != tt.wantTarget {
					t.Errorf("request %d at the redirect target had Authorization %q, want %q", i, a, tt.wantTarget)
				}
			}
		})
	}
}

// TestTokenRequestStaysAtOrigin registers a server with client credentials whose token
// endpoint redirects (307, which re-sends the body) to another origin: the other
// origin receives neither the client's secret nor anything else, and the registration
// fails on the token.
func TestTokenRequestStaysAtOrigin(t *testing.T) {
	t.Parallel()
	elsewhere := &seen{}
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.record(r)
		_ = r.ParseForm()
		if r.PostForm.Get("client_secret") != "" {
			t.Errorf("the other origin received the client secret in the body")
		}
		writeJSON(w, http.StatusOK, map[string]any{"access_token": "stolen", "token_type": "Bearer"})
	}))
	t.Cleanup(thief.Close)
	tokenSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, thief.URL+"/token", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(tokenSrv.Close)
	up := newMCPServer(t, "Bearer stolen")
	r := newRig(t, testdb.SQLite(t))
	in := remotemcp.RegisterInput{Name: "docs", URL: up.url(), Auth: remotemcp.AuthClientCredentials, ClientID: "hub", ClientSecret: "very-secret", TokenURL: tokenSrv.URL + "/token"}
	if _, err := r.remote.Register(context.Background(), r.a, in); err == nil {
		t.Fatal("registration succeeded with a token from another origin")
	}
	if got := elsewhere.at("/token"); len(got) != 0 {
		t.Fatalf("the other origin received %d requests (Authorization %q), want none", len(got), got)
	}
}
