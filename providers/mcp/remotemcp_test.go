package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/router"
)

// TestRegisterRefuses checks bad input and private addresses: each is refused on the
// field at fault, with the reason, and nothing is stored.
func TestRegisterRefuses(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	r := newRig(t, db)
	kr := r.remote // allowed to reach private addresses: for the input checks only
	guarded, err := remotemcp.New(remotemcp.Options{Connections: r.conns})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		svc       *remotemcp.Service
		in        remotemcp.RegisterInput
		wantField string
		wantIn    string
	}{
		{name: "no name", svc: kr, in: remotemcp.RegisterInput{URL: "https://mcp.example.com/mcp"}, wantField: "name", wantIn: "required"},
		{name: "name not snake_case", svc: kr, in: remotemcp.RegisterInput{Name: "My Server", URL: "https://mcp.example.com/mcp"}, wantField: "name", wantIn: "snake_case"},
		{name: "name too long", svc: kr, in: remotemcp.RegisterInput{Name: strings.Repeat("a", 33), URL: "https://mcp.example.com/mcp"}, wantField: "name", wantIn: "at most 32"},
		{name: "no url", svc: kr, in: remotemcp.RegisterInput{Name: "docs"}, wantField: "url", wantIn: "required"},
		{name: "ftp url", svc: kr, in: remotemcp.RegisterInput{Name: "docs", URL: "ftp://mcp.example.com/"}, wantField: "url", wantIn: "http or https"},
		{name: "url with password", svc: kr, in: remotemcp.RegisterInput{Name: "docs", URL: "https://u:p@mcp.example.com/"}, wantField: "url", wantIn: "password"},
		{name: "unknown transport", svc: kr, in: remotemcp.RegisterInput{Name: "docs", URL: "https://mcp.example.com/", Transport: "websocket"}, wantField: "transport", wantIn: `"streamable" or "sse"`},
		{name: "unknown auth", svc: kr, in: remotemcp.RegisterInput{Name: "docs", URL: "https://mcp.example.com/", Auth: "basic"}, wantField: "auth", wantIn: "must be one of"},
		{name: "bearer without token", svc: kr, in: remotemcp.RegisterInput{Name: "docs", URL: "https://mcp.example.com/", Auth: "bearer"}, wantField: "token", wantIn: "required"},
		{name: "client credentials without secret", svc: kr, in: remotemcp.RegisterInput{Name: "docs", URL: "https://mcp.example.com/", Auth: "client_credentials", ClientID: "c", TokenURL: "https://auth.example.com/token"}, wantField: "client_secret", wantIn: "required"},
		{name: "client credentials without token url", svc: kr, in: remotemcp.RegisterInput{Name: "docs", URL: "https://mcp.example.com/", Auth: "client_credentials", ClientID: "c", ClientSecret: "s"}, wantField: "token_url", wantIn: "required"},
		{name: "loopback", svc: guarded, in: remotemcp.RegisterInput{Name: "docs", URL: "http://127.0.0.1:8080/mcp"}, wantField: "url", wantIn: "127.0.0.1, a private, loopback"},
		{name: "private 10/8", svc: guarded, in: remotemcp.RegisterInput{Name: "docs", URL: "http://10.1.2.3/mcp"}, wantField: "url", wantIn: "10.1.2.3"},
		{name: "cloud metadata", svc: guarded, in: remotemcp.RegisterInput{Name: "docs", URL: "http://169.254.169.254/latest/meta-data"}, wantField: "url", wantIn: "169.254.169.254"},
		{name: "IPv6 loopback", svc: guarded, in: remotemcp.RegisterInput{Name: "docs", URL: "http://[::1]:3001/mcp"}, wantField: "url", wantIn: "::1"},
		{name: "IPv4-mapped IPv6 loopback", svc: guarded, in: remotemcp.RegisterInput{Name: "docs", URL: "http://[::ffff:127.0.0.1]/mcp"}, wantField: "url", wantIn: "127.0.0.1"},
		{name: "NAT64 cloud metadata", svc: guarded, in: remotemcp.RegisterInput{Name: "docs", URL: "http://[64:ff9b::a9fe:a9fe]/latest/meta-data"}, wantField: "url", wantIn: "64:ff9b::a9fe:a9fe"},
		{name: "6to4 loopback", svc: guarded, in: remotemcp.RegisterInput{Name: "docs", URL: "http://[2002:7f00:1::]/mcp"}, wantField: "url", wantIn: "2002:7f00:1::"},
		{name: "hostname resolving to loopback", svc: guarded, in: remotemcp.RegisterInput{Name: "docs", URL: "http://localhost:3001/mcp"}, wantField: "url", wantIn: "localhost resolves to"},
		{name: "token endpoint on a private address", svc: guarded, in: remotemcp.RegisterInput{Name: "docs", URL: "https://93.184.215.14/mcp", Auth: "client_credentials", ClientID: "c", ClientSecret: "s", TokenURL: "http://192.168.1.1/token"}, wantField: "token_url", wantIn: "192.168.1.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := tt.svc.Register(context.Background(), r.a, tt.in)
			e := switchboard.AsError(err)
			if e == nil || e.Code != switchboard.CodeInvalid || e.Field != tt.wantField || !strings.Contains(e.Message, tt.wantIn) {
				t.Fatalf("Register = %v, want invalid %s containing %q", err, tt.wantField, tt.wantIn)
			}
			if tt.svc == guarded && !strings.Contains(e.Message, egress.AllowPrivateEnv) {
				t.Errorf("refusal %q does not say how an operator allows it", e.Message)
			}
		})
	}
	list, err := r.conns.List(context.Background(), r.a)
	if err != nil || len(list) != 0 {
		t.Fatalf("connections after refusals = %v, %v; want none", list, err)
	}
}

// TestGuardAtDialTime checks the dial hook: a name that passed registration but now
// leads to a refused address is refused when dialled, and an allowed CIDR lets it through.
func TestGuardAtDialTime(t *testing.T) {
	t.Parallel()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(up.Close)
	tests := []struct {
		name    string
		private bool
		cidrs   []string
		wantErr string
	}{
		{name: "refused", wantErr: "127.0.0.1, a private, loopback"},
		{name: "allowed by CIDR", cidrs: []string{"127.0.0.0/8"}},
		{name: "other CIDR allowed only", cidrs: []string{"10.0.0.0/8"}, wantErr: "SWITCHBOARD_REMOTE_MCP_ALLOW_CIDRS=127.0.0.1/32"},
		{name: "all private allowed", private: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, err := egress.NewGuard(tt.private, tt.cidrs)
			if err != nil {
				t.Fatal(err)
			}
			c := &http.Client{Transport: g.Transport()}
			resp, err := c.Get(up.URL)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("get: %v", err)
				}
				resp.Body.Close()
				return
			}
			if err == nil {
				resp.Body.Close()
				t.Fatal("get went through, want refused")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
	if _, err := egress.NewGuard(false, []string{"not-a-cidr"}); err == nil || !strings.Contains(err.Error(), egress.AllowCIDRsEnv) {
		t.Fatalf("NewGuard with a bad CIDR = %v, want an error naming %s", err, egress.AllowCIDRsEnv)
	}
}

// TestBearerServer registers an mcp-go server that requires a bearer token: a wrong
// token is refused on the token field; the right one lists the server's tools through
// the router as <name>_<tool> with the server's schema, calls run with the token and
// are audited, list_changed updates the list, another tenant sees and runs nothing, and
// deleting the connection drops the tools.
func TestBearerServer(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		r := newRig(t, db)
		up := newMCPServer(t, "Bearer right-token")

		_, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "up", URL: up.url(), Auth: "bearer", Token: "wrong-token"})
		if e := switchboard.AsError(err); e == nil || e.Code != switchboard.CodeInvalid || e.Field != "token" {
			t.Fatalf("register with a wrong token = %v, want invalid token", err)
		}
		if strings.Contains(err.Error(), "wrong-token") {
			t.Fatalf("error %q carries the token", err)
		}
		reg, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "up", URL: up.url(), Auth: "bearer", Token: "right-token"})
		if err != nil {
			t.Fatalf("register: %v", err)
		}
		if diff := cmp.Diff([]string{"up_shout"}, reg.Tools); diff != "" {
			t.Errorf("registered tools (-want +got):\n%s", diff)
		}
		c := reg.Connection
		if c.Provider != remotemcp.Provider || c.AccountLabel != "up" || c.Meta["url"] != up.url() || c.Meta["transport"] != "streamable" {
			t.Errorf("connection = %+v", c)
		}
		if string(c.Sealed) == "" || strings.Contains(string(c.Sealed), "right-token") {
			t.Errorf("credentials are not sealed")
		}
		_, err = r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "up", URL: up.url(), Auth: "bearer", Token: "right-token"})
		if e := switchboard.AsError(err); e == nil || e.Code != switchboard.CodeConflict || e.Field != "name" {
			t.Fatalf("second registration of the name = %v, want conflict on name", err)
		}

		bs, err := r.router.Tools(ctx, r.a)
		if err != nil || len(bs) != 1 {
			t.Fatalf("tools = %v, %v; want one", bs, err)
		}
		var schema map[string]any
		if err := json.Unmarshal(bs[0].Tool.InputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		wantSchema := map[string]any{"type": "object", "properties": map[string]any{"word": map[string]any{"type": "string", "description": "The word"}}, "required": []any{"word"}}
		if diff := cmp.Diff(wantSchema, schema); diff != "" {
			t.Errorf("input schema (-want +got):\n%s", diff)
		}
		if h := bs[0].Tool.Info.Hints; !h.ReadOnly {
			t.Errorf("hints = %+v, want read-only from the server's annotation", h)
		}

		calls := []struct {
			name     string
			p        switchboard.Principal
			tool     string
			args     string
			wantCode switchboard.Code
			wantText string
		}{
			{name: "call", p: r.a, tool: "up_shout", args: `{"word":"hey"}`, wantText: "hey!"},
			{name: "bad argument", p: r.a, tool: "up_shout", args: `{"word":3}`, wantCode: switchboard.CodeInvalid},
			{name: "tool error", p: r.a, tool: "up_shout", args: `{"word":"fail"}`, wantCode: switchboard.CodeUpstream, wantText: "cannot shout fail"},
			{name: "unknown tool", p: r.a, tool: "up_whisper", args: `{}`, wantCode: switchboard.CodeNotFound},
			{name: "another tenant", p: r.b, tool: "up_shout", args: `{"word":"hey"}`, wantCode: switchboard.CodeNotFound},
		}
		for _, tt := range calls {
			out, err := r.router.Execute(ctx, tt.p, router.Request{Tool: tt.tool, ConnectionID: c.ID, Args: json.RawMessage(tt.args)})
			if tt.wantCode != "" {
				if switchboard.CodeOf(err) != tt.wantCode || !strings.Contains(errText(err), tt.wantText) {
					t.Errorf("%s: err = %v, want %s containing %q", tt.name, err, tt.wantCode, tt.wantText)
				}
				continue
			}
			res, ok := out.(*providers.ContentResult)
			if err != nil || !ok || len(res.Content) != 1 || res.Text() != tt.wantText {
				t.Errorf("%s: out = %#v, %v; want %q", tt.name, out, err, tt.wantText)
			}
		}
		if got := r.toolNames(t, r.b); len(got) != 0 {
			t.Errorf("tenant b's tools = %v, want none", got)
		}
		for _, a := range up.authorizations() {
			if a != "Bearer right-token" && a != "Bearer wrong-token" {
				t.Errorf("server got Authorization %q", a)
			}
		}
		var outcomes []string
		for _, e := range r.audit.toolCalls() {
			outcomes = append(outcomes, e.Tool+":"+e.Outcome)
		}
		want := []string{"up_shout:ok", "up_shout:invalid", "up_shout:upstream", "up_whisper:not_found", "up_shout:not_found"}
		if diff := cmp.Diff(want, outcomes); diff != "" {
			t.Errorf("audited calls (-want +got):\n%s", diff)
		}

		// list_changed: the server adds a tool; the hub re-lists and tells subscribers.
		drain(r.changes)
		up.mcp.AddTool(mcpgo.NewTool("whisper", mcpgo.WithDescription("Whisper."), mcpgo.WithString("word", mcpgo.Required())),
			func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
				return mcpgo.NewToolResultText("psst"), nil
			})
		waitChange(t, r.changes, c.ID)
		if diff := cmp.Diff([]string{"up_shout", "up_whisper"}, r.toolNames(t, r.a)); diff != "" {
			t.Errorf("tools after list_changed (-want +got):\n%s", diff)
		}
		out, err := r.router.Execute(ctx, r.a, router.Request{Tool: "up_whisper", ConnectionID: c.ID, Args: json.RawMessage(`{"word":"x"}`)})
		if err != nil || out.(*providers.ContentResult).Text() != "psst" {
			t.Fatalf("whisper = %v, %v", out, err)
		}

		if _, err := r.conns.Disconnect(ctx, r.a, c.ID); err != nil {
			t.Fatalf("disconnect: %v", err)
		}
		if got := r.toolNames(t, r.a); len(got) != 0 {
			t.Errorf("tools after delete = %v, want none", got)
		}
	})
}

// TestClientCredentials registers a server whose tokens come from a token endpoint
// with the client_credentials grant: the endpoint gets the client's credentials and
// scope, the server gets the token; a refused secret is refused on client_secret.
func TestClientCredentials(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t, testdb.SQLite(t))
	up := newMCPServer(t, "Bearer cc-token-1")
	type tokenReq struct{ grant, scope, user, pass string }
	var got []tokenReq
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.URL.Path != "/token" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		_ = req.ParseForm()
		u, p, _ := req.BasicAuth()
		got = append(got, tokenReq{grant: req.PostForm.Get("grant_type"), scope: req.PostForm.Get("scope"), user: u, pass: p})
		w.Header().Set("Content-Type", "application/json")
		if p != "s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		_, _ = w.Write([]byte(`{"access_token":"cc-token-1","token_type":"Bearer","expires_in":3600}`))
	}))
	t.Cleanup(tokens.Close)
	in := remotemcp.RegisterInput{Name: "cc", URL: up.url(), Auth: "client_credentials", ClientID: "hub", ClientSecret: "wrong", TokenURL: tokens.URL + "/token", Scopes: []string{"tools.read"}}
	_, err := r.remote.Register(ctx, r.a, in)
	if e := switchboard.AsError(err); e == nil || e.Field != "client_secret" || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("register with a wrong secret = %v, want invalid client_secret without the secret", err)
	}
	in.ClientSecret = "s3cret"
	reg, err := r.remote.Register(ctx, r.a, in)
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	out, err := r.router.Execute(ctx, r.a, router.Request{Tool: "cc_shout", ConnectionID: reg.Connection.ID, Args: json.RawMessage(`{"word":"cc"}`)})
	if err != nil || out.(*providers.ContentResult).Text() != "cc!" {
		t.Fatalf("call = %v, %v", out, err)
	}
	want := []tokenReq{{"client_credentials", "tools.read", "hub", "wrong"}, {"client_credentials", "tools.read", "hub", "s3cret"}, {"client_credentials", "tools.read", "hub", "s3cret"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(tokenReq{})); diff != "" {
		t.Errorf("token requests (-want +got):\n%s", diff)
	}
	if auths := up.authorizations(); !slices.Contains(auths, "Bearer cc-token-1") {
		t.Errorf("server authorizations = %v", auths)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// drain empties ch of what was already sent.
func drain[T any](ch chan T) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// waitChange waits for subscribers to be told about the connection.
func waitChange(t *testing.T, ch chan string, id string) {
	t.Helper()
	deadline := time.After(testwait.Timeout)
	for {
		select {
		case got := <-ch:
			if got == id {
				return
			}
		case <-deadline:
			t.Fatalf("no change notified for %s in %s", id, testwait.Timeout)
		}
	}
}

// TestSSETransport registers a server of the legacy HTTP+SSE transport (mcp-go's SSE
// server) and runs its tool.
func TestSSETransport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t, testdb.SQLite(t))
	up := newMCPServer(t, "")
	sse := server.NewSSEServer(up.mcp)
	ts := httptest.NewServer(sse)
	t.Cleanup(func() {
		testwait.CloseServer(t, ts)
	})
	reg, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "legacy", URL: ts.URL + "/sse", Transport: "sse"})
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	if diff := cmp.Diff([]string{"legacy_shout"}, reg.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	out, err := r.router.Execute(ctx, r.a, router.Request{Tool: "legacy_shout", ConnectionID: reg.Connection.ID, Args: json.RawMessage(`{"word":"old"}`)})
	if err != nil || out.(*providers.ContentResult).Text() != "old!" {
		t.Fatalf("call = %v, %v", out, err)
	}
}

// TestIdleSessionClosed checks that a session unused for the idle timeout is ended (the
// server gets its DELETE) and that the next call opens a new one by itself.
func TestIdleSessionClosed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t, testdb.SQLite(t))
	guard, err := egress.NewGuard(true, nil)
	if err != nil {
		t.Fatal(err)
	}
	registry := providers.NewRegistry()
	svc, err := remotemcp.New(remotemcp.Options{Connections: r.conns, Guard: guard, IdleTimeout: time.Second, Registry: registry})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.Run(runCtx)
	}()
	t.Cleanup(func() {
		stop()
		testwait.Recv(t, done, "Run to return once its context ended")
	})
	rtr := router.New(router.Options{Registry: registry, Connections: r.conns, ArgsKey: []byte("k")})
	up := newMCPServer(t, "")
	reg, err := svc.Register(ctx, r.a, remotemcp.RegisterInput{Name: "idle", URL: up.url()})
	if err != nil {
		t.Fatal(err)
	}
	call := func() error {
		_, err := rtr.Execute(ctx, r.a, router.Request{Tool: "idle_shout", ConnectionID: reg.Connection.ID, Args: json.RawMessage(`{"word":"a"}`)})
		return err
	}
	if err := call(); err != nil {
		t.Fatal(err)
	}
	deletes := func() int {
		up.mu.Lock()
		defer up.mu.Unlock()
		return up.deletes
	}
	before := deletes() // the registration's check session ended already
	testwait.Until(t, "the idle session to be ended", func() bool { return deletes() != before })
	if err := call(); err != nil {
		t.Fatalf("call after the idle close: %v", err)
	}
}
