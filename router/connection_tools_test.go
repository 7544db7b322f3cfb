package router

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers"
)

type searchIn struct {
	Query string `json:"query"`
}

type searchOut struct {
	Hits []string `json:"hits"`
}

// remoteCall is what a remote server's tool was asked: on which connection of which
// tenant, with what.
type remoteCall struct {
	Tenant     switchboard.TenantID
	Connection string
	Query      string
}

// fakeRemote is a provider whose tools exist per connection (as a remote MCP server's
// do): each connection of provider "mcp" brings
// docs_search, and con_m1 also a tool named like the registry's fake_greet (which must
// never shadow it). con_m4's server is down and con_m5's answers nonsense: their tools
// cannot be listed.
type fakeRemote struct {
	spec  *providers.Spec
	mu    sync.Mutex
	calls []remoteCall
}

func (d *fakeRemote) connectionTools(_ context.Context, c providers.Connection) ([]*providers.Tool, error) {
	switch c.ID {
	case "con_m4": // as remotemcp says of a server it cannot reach
		return nil, &switchboard.Error{Code: switchboard.CodeUpstream, Message: "the remote MCP server could not be reached; try again shortly"}
	case "con_m5":
		return nil, errors.New("tools/list of con_m5: a tool without a name")
	}
	search := &providers.Operation[searchIn, searchOut]{Name: "search", Title: "Search", Description: "Search the docs.",
		Run: func(_ context.Context, call *providers.Call, in searchIn) (searchOut, error) {
			d.mu.Lock()
			d.calls = append(d.calls, remoteCall{Tenant: call.Tenant, Connection: call.ConnectionID, Query: in.Query})
			d.mu.Unlock()
			if in.Query == "busy" {
				return searchOut{}, &providers.UpstreamError{Provider: "mcp", Status: http.StatusTooManyRequests, Code: switchboard.CodeRateLimited,
					Reason: "rate_limited", Message: "the server is busy", RetryAfter: 7 * time.Second}
			}
			return searchOut{Hits: []string{in.Query + "@" + call.ConnectionID}}, nil
		}}
	schema := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"],"additionalProperties":false}`)
	t, err := providers.NewConnectionTool(d.spec, "docs_search", search, schema, nil)
	if err != nil {
		return nil, err
	}
	tools := []*providers.Tool{t}
	if c.ID == "con_m1" {
		shadow, err := providers.NewConnectionTool(d.spec, "fake_greet", search, schema, nil)
		if err != nil {
			return nil, err
		}
		tools = append(tools, shadow)
	}
	return tools, nil
}

func (d *fakeRemote) got() []remoteCall {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]remoteCall(nil), d.calls...)
}

// newDynamicFixture is newFixture with remote MCP connections: con_m1 alice's private,
// con_m2 alice's needing reconnect, con_m3 bob's (tenant B), con_m4 and con_m5
// alice's whose tools cannot be listed. Without the provider (remote false) in the
// registry, the router knows no tools but the registry's.
func newDynamicFixture(t *testing.T, remote bool) (*fixture, *fakeRemote) {
	t.Helper()
	f := newFixture(t)
	src := &fakeRemote{}
	src.spec = &providers.Spec{Name: "mcp", Title: "Remote MCP", RateLimit: providers.RateLimit{PerSecond: 100, Burst: 10}, Tools: src.connectionTools}
	f.conns.add(connections.Connection{ID: "con_m1", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "mcp", AccountLabel: "docs", Status: connections.StatusActive}, "")
	f.conns.add(connections.Connection{ID: "con_m2", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "mcp", AccountLabel: "stale", Status: connections.StatusNeedsReconnect}, "")
	f.conns.add(connections.Connection{ID: "con_m3", TenantID: "ten_b", OwnerUserID: "usr_bob", Provider: "mcp", AccountLabel: "bob-docs", Status: connections.StatusActive}, "")
	f.conns.add(connections.Connection{ID: "con_m4", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "mcp", AccountLabel: "down", Status: connections.StatusActive}, "")
	f.conns.add(connections.Connection{ID: "con_m5", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "mcp", AccountLabel: "odd", Status: connections.StatusActive}, "")
	o := Options{Registry: f.router.registry, Connections: f.conns, Audit: f.audit, Logger: slog.New(slog.DiscardHandler)}
	if remote {
		reg := providers.NewRegistry()
		for _, n := range []string{"fake", "other"} {
			spec, _ := f.router.registry.Provider(n)
			if err := reg.Register(*spec); err != nil {
				t.Fatal(err)
			}
			_ = reg.SetBaseURL(n, f.upstream.URL)
		}
		if err := reg.Register(*src.spec); err != nil {
			t.Fatal(err)
		}
		o.Registry = reg
	}
	f.router = New(o)
	return f, src
}

// TestExecuteDynamicTools: a tool a connection brings itself (a remote MCP server's)
// runs through the same checks as the registry's: the connection's tenant and owner,
// the tool's existence on that connection, its arguments against the server's schema,
// the connection's status; the upstream's refusal reaches the caller classified, and
// every call leaves its audit row.
func TestExecuteDynamicTools(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		noSource     bool // the registry has no provider whose tools exist per connection
		who          switchboard.Principal
		req          Request
		want         any
		wantCode     switchboard.Code
		wantField    string
		wantCall     *remoteCall // what the remote server must have been asked; nil: nothing
		wantUpstream int         // the audit row's upstream status
	}{
		{name: "own connection's tool runs on it", who: alice, req: Request{Tool: "docs_search", ConnectionID: "con_m1", Args: json.RawMessage(`{"query":"mcp"}`)},
			want: searchOut{Hits: []string{"mcp@con_m1"}}, wantCall: &remoteCall{Tenant: "ten_a", Connection: "con_m1", Query: "mcp"}},
		{name: "another tenant's connection is not found", who: bob, req: Request{Tool: "docs_search", ConnectionID: "con_m1", Args: json.RawMessage(`{"query":"x"}`)},
			wantCode: switchboard.CodeNotFound},
		{name: "a colleague's private connection is not found", who: carol, req: Request{Tool: "docs_search", ConnectionID: "con_m1", Args: json.RawMessage(`{"query":"x"}`)},
			wantCode: switchboard.CodeNotFound},
		{name: "a connection that does not exist", who: alice, req: Request{Tool: "docs_search", ConnectionID: "con_zz", Args: json.RawMessage(`{"query":"x"}`)},
			wantCode: switchboard.CodeNotFound},
		{name: "a tool the connection does not bring", who: alice, req: Request{Tool: "docs_nope", ConnectionID: "con_m1", Args: json.RawMessage(`{}`)},
			wantCode: switchboard.CodeNotFound},
		{name: "a remote tool on a registry provider's connection", who: alice, req: Request{Tool: "docs_search", ConnectionID: "con_a1", Args: json.RawMessage(`{"query":"x"}`)},
			wantCode: switchboard.CodeNotFound},
		{name: "a remote tool named like a registry tool never shadows it", who: alice, req: Request{Tool: "fake_greet", ConnectionID: "con_m1", Args: json.RawMessage(`{"name":"x"}`)},
			wantCode: switchboard.CodeInvalid, wantField: "connection"},
		{name: "arguments checked against the server's schema", who: alice, req: Request{Tool: "docs_search", ConnectionID: "con_m1", Args: json.RawMessage(`{"query":5}`)},
			wantCode: switchboard.CodeInvalid, wantField: "query"},
		{name: "connection is required", who: alice, req: Request{Tool: "docs_search", Args: json.RawMessage(`{"query":"x"}`)},
			wantCode: switchboard.CodeInvalid, wantField: "connection"},
		{name: "connection needing reconnect", who: alice, req: Request{Tool: "docs_search", ConnectionID: "con_m2", Args: json.RawMessage(`{"query":"x"}`)},
			wantCode: switchboard.CodeReconnect},
		{name: "server that cannot be reached says so", who: alice, req: Request{Tool: "docs_search", ConnectionID: "con_m4", Args: json.RawMessage(`{"query":"x"}`)},
			wantCode: switchboard.CodeUpstream},
		{name: "server whose tool list is nonsense is an internal error", who: alice, req: Request{Tool: "docs_search", ConnectionID: "con_m5", Args: json.RawMessage(`{"query":"x"}`)},
			wantCode: switchboard.CodeInternal},
		{name: "upstream refusal is classified and audited with its status", who: alice, req: Request{Tool: "docs_search", ConnectionID: "con_m1", Args: json.RawMessage(`{"query":"busy"}`)},
			wantCode: switchboard.CodeRateLimited, wantCall: &remoteCall{Tenant: "ten_a", Connection: "con_m1", Query: "busy"}, wantUpstream: http.StatusTooManyRequests},
		{name: "other tenant's own connection runs for it", who: bob, req: Request{Tool: "docs_search", ConnectionID: "con_m3", Args: json.RawMessage(`{"query":"b"}`)},
			want: searchOut{Hits: []string{"b@con_m3"}}, wantCall: &remoteCall{Tenant: "ten_b", Connection: "con_m3", Query: "b"}},
		{name: "without a per-connection provider no such tool", noSource: true, who: alice, req: Request{Tool: "docs_search", ConnectionID: "con_m1", Args: json.RawMessage(`{"query":"x"}`)},
			wantCode: switchboard.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, src := newDynamicFixture(t, !tt.noSource)
			out, err := f.router.Execute(context.Background(), tt.who, tt.req)
			if got := switchboard.CodeOf(err); tt.wantCode != "" && got != tt.wantCode || tt.wantCode == "" && err != nil {
				t.Fatalf("error = %v (code %s), want code %q", err, got, tt.wantCode)
			}
			if e := switchboard.AsError(err); err != nil && e.Field != tt.wantField {
				t.Errorf("field = %q, want %q", e.Field, tt.wantField)
			}
			if diff := cmp.Diff(tt.want, out); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			var want []remoteCall
			if tt.wantCall != nil {
				want = []remoteCall{*tt.wantCall}
			}
			if diff := cmp.Diff(want, src.got()); diff != "" {
				t.Errorf("remote server was asked (-want +got):\n%s", diff)
			}
			if tt.wantCode == switchboard.CodeRateLimited {
				var ue *providers.UpstreamError
				if !errors.As(err, &ue) || ue.RetryAfter != 7*time.Second {
					t.Errorf("error = %v, want the upstream's refusal with its retry after 7 s", err)
				}
			}
			outcome := "ok"
			if tt.wantCode != "" {
				outcome = string(tt.wantCode)
			}
			ev := f.audit.last(t)
			wantEv := audit.Event{TenantID: tt.who.TenantID, Kind: audit.KindToolCall, Principal: tt.who.ID(), KeyID: tt.who.KeyID,
				Tool: tt.req.Tool, ConnectionID: tt.req.ConnectionID, Outcome: outcome, UpstreamStatus: tt.wantUpstream}
			got := audit.Event{TenantID: ev.TenantID, Kind: ev.Kind, Principal: ev.Principal, KeyID: ev.KeyID,
				Tool: ev.Tool, ConnectionID: ev.ConnectionID, Outcome: ev.Outcome, UpstreamStatus: ev.UpstreamStatus}
			if diff := cmp.Diff(wantEv, got); diff != "" {
				t.Errorf("audit row (-want +got):\n%s", diff)
			}
			if n := len(f.audit.events); n != 1 {
				t.Errorf("%d audit rows, want 1", n)
			}
		})
	}
}

// TestPrepareDynamicTool: Prepare checks a remote tool's call as Execute would without
// running it; a prepared call leaves no audit row (its execution will), a refused one
// leaves its row.
func TestPrepareDynamicTool(t *testing.T) {
	t.Parallel()
	f, src := newDynamicFixture(t, true)
	pc, err := f.router.Prepare(context.Background(), alice, Request{Tool: "docs_search", ConnectionID: "con_m1", Args: json.RawMessage(`{"query":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if pc.Tool == nil || pc.Tool.Name != "docs_search" || pc.Tool.Provider.Name != "mcp" || pc.NeedsConfirm {
		t.Errorf("prepared = %+v, want docs_search of mcp without confirmation", pc)
	}
	if n := len(f.audit.events); n != 0 {
		t.Errorf("a prepared call left %d audit rows, want 0", n)
	}
	_, err = f.router.Prepare(context.Background(), bob, Request{Tool: "docs_search", ConnectionID: "con_m1", Args: json.RawMessage(`{"query":"x"}`)})
	if switchboard.CodeOf(err) != switchboard.CodeNotFound {
		t.Fatalf("another tenant's prepare = %v, want not_found", err)
	}
	if ev := f.audit.last(t); ev.Outcome != "not_found" || ev.TenantID != "ten_b" || ev.Tool != "docs_search" {
		t.Errorf("refused prepare's audit row = %+v", ev)
	}
	if got := src.got(); len(got) != 0 {
		t.Errorf("Prepare ran the remote tool: %+v", got)
	}
}
