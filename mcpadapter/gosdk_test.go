package mcpadapter

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// keyTransport adds an API key to every request of the official Go SDK's client.
type keyTransport struct{ key string }

func (b keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// TestGoSDKClient drives the tenant URL with the official Go SDK (v1.8.0) on both
// protocol eras: list, call with structured output, and a call cancelled through its
// context. On 2026-07-28 the SDK cancels with a notification without _meta; a 400
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
		})
	}
}
