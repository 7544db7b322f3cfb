package mcpadapter

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// headerTransport adds an API key to each request and keeps the Retry-After of each
// POST's answer, in order.
type headerTransport struct {
	key         string
	mu          sync.Mutex
	retryAfters []string
}

func (h *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+h.key)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost {
		h.mu.Lock()
		h.retryAfters = append(h.retryAfters, resp.Header.Get("Retry-After"))
		h.mu.Unlock()
	}
	return resp, err
}

func (h *headerTransport) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.retryAfters...)
}

// A tools/call refused at the door reaches an MCP client as what it can act on: a tool
// result with isError, saying that nothing ran and when to retry, plus Retry-After on
// the answer. The official Go SDK's client, on each protocol era, against the real
// handler; nothing reaches the upstream, and the client's session goes on.
func TestRefusedToolCallIsAToolError(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			e, adm, rec := admissionEnv(t)
			ctx := context.Background()
			tr := &headerTransport{key: "key-alice"}
			client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-test", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
				Endpoint: e.srv.URL + "/mcp/acme", HTTPClient: &http.Client{Transport: tr}, DisableStandaloneSSE: true,
			}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			release := fillTenant(t, adm, alice.TenantID)

			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "notes_create_note", Arguments: map[string]any{"text": "refused"}})
			if err != nil {
				t.Fatalf("tools/call refused at the door: %v; want a tool result", err)
			}
			var text strings.Builder
			for _, c := range res.Content {
				if tc, ok := c.(*sdk.TextContent); ok {
					text.WriteString(tc.Text)
				}
			}
			if !res.IsError || !strings.Contains(text.String(), "nothing was run; retry in 1 s") {
				t.Errorf("refused tools/call = isError %v, %q; want a tool error saying nothing ran and to retry in 1 s", res.IsError, text.String())
			}
			if got := tr.seen(); len(got) == 0 || got[len(got)-1] != "1" {
				t.Errorf("Retry-After of the answers = %q; want the refusal's to be 1", got)
			}
			if got := rec.list(); len(got) != 1 || got[0] != "tenant/queue_full" {
				t.Errorf("refusals counted = %v; want [tenant/queue_full]", got)
			}
			select {
			case r := <-e.seen:
				t.Fatalf("the refused call reached the upstream: %s %s", r.Method, r.URL)
			default:
			}

			release()
			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "notes_create_note", Arguments: map[string]any{"text": "after"}})
			if err != nil || res.IsError {
				t.Fatalf("tools/call once there is room: %v %+v; want it answered", err, res)
			}
		})
	}
}
