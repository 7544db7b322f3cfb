package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/telemetry"
)

// plainInit opens a session as a client that declares neither elicitation nor
// sampling, whose calls may be plain.
const plainInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestPlainCallAnswersAsMCPGo sends each tools/call twice, each time to a new hub: once
// as a plain call (the adapter answers it) and once with an Accept header that sends it
// to mcp-go, and wants the same bytes: a result, a tool error, a validation error, ids of
// every kind, an unknown tool and one the agent does not have (both mcp-go's), with
// and without telemetry.
func TestPlainCallAnswersAsMCPGo(t *testing.T) {
	call := func(id, name, args string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
	}
	cases := []struct {
		name, path, key, body string
		plain                 bool // the adapter answers it
	}{
		{"result", "/mcp/acme", "key-alice", call("2", "notes_create_note", `{"text":"<b>hi</b> & \u2028 é"}`), true},
		{"result with nil collections", "/mcp/acme", "key-alice", call("3", "notes_last_note", `{}`), true},
		{"no arguments", "/mcp/acme", "key-alice", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"notes_last_note"}}`, true},
		{"tool error from upstream", "/mcp/acme", "key-alice", call("5", "notes_create_note", `{"text":"boom"}`), true},
		{"validation error", "/mcp/acme", "key-alice", call("6", "notes_create_note", `{"text":5}`), true},
		{"unknown argument", "/mcp/acme", "key-alice", call("7", "notes_create_note", `{"text":"a","extra":1}`), true},
		{"string id", "/mcp/acme", "key-alice", call(`"req-<1>"`, "notes_last_note", `{}`), true},
		{"float id", "/mcp/acme", "key-alice", call("1.50", "notes_last_note", `{}`), true},
		{"large id", "/mcp/acme", "key-alice", call("123456789012345678901", "notes_last_note", `{}`), true},
		{"exponent id", "/mcp/acme", "key-alice", call("1e3", "notes_last_note", `{}`), true},
		{"_meta without a progress token", "/mcp/acme", "key-alice",
			`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"notes_last_note","arguments":{},"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}`, true},
		{"at an agent URL", "/mcp/acme/agents/agt_triage", "key-triage", call("9", "notes_create_note", `{"text":"t"}`), true},
		{"a handler's error", "/mcp/acme", "key-alice", call("14", "notes_create_note", `{"text":"fail"}`), true},
		{"a handler's panic", "/mcp/acme", "key-alice", call("15", "notes_create_note", `{"text":"panic"}`), true},
		{"a handler's nil result", "/mcp/acme", "key-alice", call("16", "notes_create_note", `{"text":"nil"}`), true},
		// Bodies whose params the adapter reads from the whole body, as mcp-go does.
		{"params twice, the second without arguments", "/mcp/acme", "key-alice",
			`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"notes_create_note","arguments":{"text":"first"}},"params":{"name":"notes_create_note"}}`, true},
		{"params twice, the second spelt with an escape", "/mcp/acme", "key-alice",
			`{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"notes_create_note","arguments":{"text":"first"}},"par\u0061ms":{"name":"notes_create_note"}}`, true},
		{"params twice, the second in capitals", "/mcp/acme", "key-alice",
			`{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"notes_create_note","arguments":{"text":"first"}},"PARAMS":{"name":"notes_create_note"}}`, true},
		{"method twice", "/mcp/acme", "key-alice",
			`{"jsonrpc":"2.0","id":20,"method":"tools/list","method":"tools/call","params":{"name":"notes_last_note","arguments":{}}}`, true},
		{"params as an argument's value", "/mcp/acme", "key-alice", call("21", "notes_create_note", `{"text":"params"}`), true},
		{"unknown tool", "/mcp/acme", "key-alice", call("10", "notes_nope", `{}`), false},
		{"a tool the agent does not have", "/mcp/acme/agents/agt_triage", "key-triage", call("11", "notes_last_note", `{}`), false},
		{"progress token", "/mcp/acme", "key-alice",
			`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"notes_last_note","arguments":{},"_meta":{"progressToken":"p"}}}`, false},
		{"task", "/mcp/acme", "key-alice",
			`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"notes_last_note","arguments":{},"task":{"ttl":1000}}}`, false},
	}
	// Hooks count what they see, which must be the same on both paths.
	var seen sync.Map
	count := func(what string) {
		n, _ := seen.LoadOrStore(what, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
	}
	counts := func() map[string]int64 {
		out := map[string]int64{}
		seen.Range(func(k, v any) bool { out[k.(string)] = v.(*atomic.Int64).Load(); return true })
		return out
	}
	wrap := Extension{Name: "wrap",
		WrapTool: func(_ Scope, next server.ToolHandlerFunc) server.ToolHandlerFunc {
			return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				switch req.GetArguments()["text"] {
				case "fail":
					return nil, errors.New("the handler failed: <b>&</b>")
				case "panic":
					panic("the handler panicked")
				case "nil":
					return nil, nil
				}
				return next(ctx, req)
			}
		},
		ServerOptions: []server.ServerOption{withHooks(func(h *server.Hooks) {
			h.AddBeforeAny(func(_ context.Context, id any, method mcp.MCPMethod, _ any) {
				count(fmt.Sprintf("before %s %v", method, id))
			})
			h.AddBeforeCallTool(func(_ context.Context, id any, req *mcp.CallToolRequest) {
				count(fmt.Sprintf("before call %v %s %v", id, req.Params.Name, req.Header.Get("Mcp-Session-Id") != ""))
			})
			h.AddOnSuccess(func(_ context.Context, id any, method mcp.MCPMethod, _ any, _ any) {
				count(fmt.Sprintf("success %s %v", method, id))
			})
			h.AddAfterCallTool(func(_ context.Context, id any, req *mcp.CallToolRequest, res any) {
				count(fmt.Sprintf("after call %v %s %T", id, req.Params.Name, res))
			})
		})},
	}
	var rec *tracetest.SpanRecorder // the telemetry env's, new with each hub
	envs := map[string]func(*Options){
		"plain":                            nil,
		"an extension's wrapper and hooks": func(o *Options) { o.Extensions = append(o.Extensions, wrap) },
		"telemetry": func(o *Options) {
			rec = tracetest.NewSpanRecorder()
			o.Telemetry = telemetry.New(nil, sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
		},
	}
	for envName, opt := range envs {
		t.Run(envName, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					// Each path in an env of its own, so what the first call leaves (a rate
					// limit an upstream's 429 set) does not change the second's answer.
					spans := map[string][]string{}
					ask := func(accept string) (answer, bool) {
						rec = nil
						e := newEnvWith(t, opt)
						a, session := post(t, e, c.path, c.key, "", plainInit)
						if a.Status != http.StatusOK || session == "" {
							t.Fatalf("initialize: %+v", a)
						}
						s := scopeOf(t, e, e.principalOf(c.key), agentOf(c.path))
						got, _ := postWith(t, e, c.path, c.key, session, accept, c.body)
						spans[accept] = endedSpans(rec, session)
						if rec != nil && c.plain && len(spans[accept]) == 0 {
							t.Error("the call left no span")
						}
						// Event ids start with their scope's own prefix, which differs.
						got.Body = eventIDPrefix.ReplaceAllString(got.Body, "id: ev_")
						return got, s.plain.answered.Load() > 0
					}
					seen.Clear()
					plain, took := ask("application/json, text/event-stream")
					if took != c.plain {
						t.Fatalf("answered by the adapter: %v, want %v", took, c.plain)
					}
					plainHooks := counts()
					seen.Clear()
					mcpgo, took := ask("application/json")
					if diff := cmp.Diff(counts(), plainHooks); diff != "" {
						t.Errorf("the hooks saw otherwise (-mcp-go +adapter):\n%s", diff)
					}
					if took {
						t.Fatal("a call without text/event-stream in Accept was answered by the adapter")
					}
					if diff := cmp.Diff(spans["application/json"], spans["application/json, text/event-stream"]); diff != "" {
						t.Errorf("the spans differ (-mcp-go +adapter):\n%s", diff)
					}
					if diff := cmp.Diff(mcpgo, plain); diff != "" {
						t.Errorf("the adapter's answer differs from mcp-go's (-mcp-go +adapter):\n%s", diff)
					}
					if plain.Status != http.StatusOK || !strings.Contains(plain.Body, `{"jsonrpc":"2.0","id":`) {
						t.Errorf("answer: %+v", plain)
					}
				})
			}
		})
	}
}

// endedSpans describes the spans rec saw end, the session's id (and its digest, which
// spans carry in its place) left out.
func endedSpans(rec *tracetest.SpanRecorder, session string) []string {
	if rec == nil {
		return nil
	}
	var out []string
	for _, sp := range rec.Ended() {
		d := fmt.Sprintf("%s kind=%s status=%s %q links=%d events=%d", sp.Name(), sp.SpanKind(), sp.Status().Code, sp.Status().Description,
			len(sp.Links()), len(sp.Events()))
		for _, a := range sp.Attributes() {
			v := strings.ReplaceAll(a.Value.Emit(), session, "<session>")
			d += " " + string(a.Key) + "=" + strings.ReplaceAll(v, telemetry.SessionDigest(session), "<session>")
		}
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// principalOf is the principal a test key stands for.
func (e *env) principalOf(key string) switchboard.Principal {
	p, err := e.adapter.opts.Auth.Authenticate(context.Background(), key)
	if err != nil {
		panic(err)
	}
	return p
}

func agentOf(path string) string {
	if _, agent, ok := strings.Cut(path, "/agents/"); ok {
		return agent
	}
	return ""
}

// TestPlainCallsSeeTheServer: the plain path is on for the server newScope builds (with
// and without telemetry), runs an extension's hooks as mcp-go would, and is off when an
// extension gives the server an error hook, which it does not run.
func TestPlainCallsSeeTheServer(t *testing.T) {
	var hook atomic.Int64
	for name, c := range map[string]struct {
		opt  func(*Options)
		want bool
		ran  *atomic.Int64
	}{
		"default": {nil, true, nil},
		"telemetry": {func(o *Options) {
			o.Telemetry = telemetry.New(nil, sdktrace.NewTracerProvider())
		}, true, nil},
		"a hook": {func(o *Options) {
			o.Extensions = append(o.Extensions, Extension{Name: "hook", ServerOptions: []server.ServerOption{
				withHooks(func(h *server.Hooks) {
					h.AddBeforeCallTool(func(context.Context, any, *mcp.CallToolRequest) { hook.Add(1) })
				}),
			}})
		}, true, &hook},
		"an error hook": {func(o *Options) {
			o.Extensions = append(o.Extensions, Extension{Name: "hook", ServerOptions: []server.ServerOption{
				withHooks(func(h *server.Hooks) { h.AddOnError(func(context.Context, any, mcp.MCPMethod, any, error) {}) }),
			}})
		}, false, nil},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnvWith(t, c.opt)
			_, session := post(t, e, "/mcp/acme", "key-alice", "", plainInit)
			s := scopeOf(t, e, alice, "")
			if s.plain.ok != c.want {
				t.Fatalf("plain calls on: %v, want %v", s.plain.ok, c.want)
			}
			a, _ := postWith(t, e, "/mcp/acme", "key-alice", session, "application/json, text/event-stream",
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notes_last_note","arguments":{}}}`)
			if want := map[bool]uint64{true: 1, false: 0}[c.want]; a.Status != http.StatusOK || s.plain.answered.Load() != want {
				t.Fatalf("call: %+v, answered by the adapter %d, want %d", a, s.plain.answered.Load(), want)
			}
			if c.ran != nil && c.ran.Load() != 1 {
				t.Errorf("the extension's hook ran %d times on the plain call, want 1", c.ran.Load())
			}
		})
	}
}

// TestPlainCallsKeepTheirSessionHeld makes plain calls for several idle timeouts and
// wants the session held by this node throughout: nothing but the hub's own sweep
// (which counts every request it serves) ends a session's state on a node, and the
// scope's server, which never sees a plain call, does not sweep it as idle.
func TestPlainCallsKeepTheirSessionHeld(t *testing.T) {
	t.Parallel()
	var unregistered atomic.Int64
	e := newEnvWith(t, func(o *Options) {
		o.IdleTimeout = 100 * time.Millisecond
		o.SessionLimits.Idle = time.Hour // the record lives; only this node's state could go
		o.Extensions = append(o.Extensions, Extension{Name: "count", ServerOptions: []server.ServerOption{
			withHooks(func(h *server.Hooks) {
				h.AddOnUnregisterSession(func(context.Context, server.ClientSession) { unregistered.Add(1) })
			}),
		}})
	})
	_, session := post(t, e, "/mcp/acme", "key-alice", "", plainInit)
	call := func() {
		t.Helper()
		a, _ := postWith(t, e, "/mcp/acme", "key-alice", session, "application/json, text/event-stream",
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notes_last_note","arguments":{}}}`)
		if a.Status != http.StatusOK {
			t.Fatalf("call: %+v", a)
		}
	}
	call() // restores the session on this node
	s := scopeOf(t, e, alice, "")
	before := unregistered.Load()
	answered := s.plain.answered.Load()
	// mcp-go's sweeper, were it given the idle timeout, would look every second.
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); time.Sleep(25 * time.Millisecond) {
		call()
	}
	if s.plain.answered.Load() == answered {
		t.Fatal("no call was plain")
	}
	if n := unregistered.Load() - before; n != 0 || !s.ep.Holds(session) {
		t.Errorf("the session was unregistered %d times while plain calls used it (held at the end: %v)", n, s.ep.Holds(session))
	}
}

// eventIDPrefix matches the prefix an event id of a stream starts with, which is each
// event store's own.
var eventIDPrefix = regexp.MustCompile(`(?m)^id: ev[0-9a-z]+_`)
