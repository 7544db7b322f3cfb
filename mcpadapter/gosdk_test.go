package mcpadapter

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/router"
)

// keyTransport adds an API key to every request of the official Go SDK's client.
type keyTransport struct{ key string }

func (b keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// TestGoSDKClient drives the tenant URL with the official Go SDK (v1.8.0) on both
// protocol eras: list, call with structured output, a call cancelled through its
// context, and tools/list_changed at a listening session. On 2026-07-28 the SDK cancels with a notification without _meta; a 400
// for it made the SDK close its session ("client is closing"), so the session must
// still answer afterwards.
func TestGoSDKClient(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			blocked := make(chan struct{})
			cancelled := make(chan struct{})
			e.onUpstream(func(r *http.Request) bool {
				if !strings.Contains(readBody(r), "slow") {
					return false
				}
				close(blocked)
				<-r.Context().Done()
				close(cancelled)
				return true
			})
			ctx := context.Background()
			client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-test", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
				Endpoint: e.srv.URL + "/mcp/acme", HTTPClient: &http.Client{Transport: keyTransport{key: "key-alice"}}, DisableStandaloneSSE: true,
			}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Errorf("negotiated %s, want %s", got, version)
			}
			list := func() []string {
				t.Helper()
				res, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatalf("tools/list: %v", err)
				}
				var names []string
				for _, tool := range res.Tools {
					names = append(names, tool.Name)
				}
				return sortedCopy(names)
			}
			if diff := cmp.Diff([]string{"notes_create_note", "notes_last_note"}, list()); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "notes_create_note", Arguments: map[string]any{"text": "hello"}})
			if err != nil || res.IsError {
				t.Fatalf("tools/call: %v %+v", err, res)
			}
			raw, _ := json.Marshal(res.StructuredContent)
			if !strings.Contains(string(raw), `"text":"hello"`) || !strings.Contains(string(raw), `"tags":[]`) {
				t.Errorf("structuredContent = %s", raw)
			}

			callCtx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(callCtx, &sdk.CallToolParams{Name: "notes_create_note", Arguments: map[string]any{"text": "slow"}})
				done <- err
			}()
			wait := func(c <-chan struct{}, what string) {
				t.Helper()
				select {
				case <-c:
				case <-time.After(30 * time.Second):
					t.Fatal(what)
				}
			}
			wait(blocked, "the call never reached the upstream")
			cancel()
			wait(cancelled, "cancelling the call's context did not cancel the upstream request")
			select {
			case err := <-done:
				if err == nil {
					t.Error("the cancelled call returned no error")
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the cancelled call never returned")
			}
			// The session outlives the cancellation.
			if got := list(); len(got) != 2 {
				t.Errorf("tools after the cancellation = %v", got)
			}

			// list_changed: a session that listens (the GET stream before 2026-07-28,
			// subscriptions/listen on it) hears that the tenant's tools changed.
			changed := make(chan struct{}, 4)
			listener := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-listener", Version: "1"}, &sdk.ClientOptions{
				ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
					select {
					case changed <- struct{}{}:
					default:
					}
				}})
			ls, err := listener.Connect(ctx, &sdk.StreamableClientTransport{
				Endpoint: e.srv.URL + "/mcp/acme", HTTPClient: &http.Client{Transport: keyTransport{key: "key-alice"}},
			}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect the listener: %v", err)
			}
			t.Cleanup(func() { _ = ls.Close() })
			waitStream(t, e, alice, "")
			e.conns.set(connections.Connection{ID: "con_a", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "notes", AccountLabel: "alice@notes", Status: connections.StatusNeedsReconnect})
			e.adapter.ConnectionChanged("ten_a", "con_a")
			testwait.Recv(t, changed, "tools/list_changed at the Go SDK's listening session")
		})
	}
}

// TestGoSDKClientConfirms: under a destructive confirm policy, the official Go SDK's
// client (v1.8.0) is asked to confirm a destructive call through its elicitation
// handler on every protocol version (a server request before 2026-07-28, an
// input_required result that the SDK answers and retries on it), and the accepted
// call runs once; a declined one runs nothing.
func TestGoSDKClientConfirms(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			e := newRunsEnv(t, testdb.SQLite(t))
			e.policy.set(e.ann, router.ConfirmDestructive)
			var mu sync.Mutex
			var asked []string
			action := "accept"
			c := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-test", Version: "1"}, &sdk.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, req.Params.Message)
					return &sdk.ElicitResult{Action: action, Content: map[string]any{"confirm": true}}, nil
				}})
			ctx := context.Background()
			cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{
				Endpoint: e.srv.URL + "/mcp/" + e.ann.TenantSlug, HTTPClient: &http.Client{Transport: keyTransport{key: keyAnn}}, DisableStandaloneSSE: true,
			}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			for _, tc := range []struct {
				action string
				kept   bool
			}{{"accept", false}, {"decline", true}} {
				mu.Lock()
				action, asked = tc.action, nil
				mu.Unlock()
				id := e.up.Put("precious " + tc.action)
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "notes_delete_note", Arguments: map[string]any{"id": id}})
				if err != nil {
					t.Fatalf("%s: tools/call: %v", tc.action, err)
				}
				mu.Lock()
				n := len(asked)
				mu.Unlock()
				if n != 1 {
					t.Errorf("%s: the client was asked %d times, want once", tc.action, n)
				}
				if res.IsError != tc.kept || e.up.Has(id) != tc.kept {
					t.Errorf("%s: result error %v, note kept %v; want %v for both", tc.action, res.IsError, e.up.Has(id), tc.kept)
				}
			}
		})
	}
}
