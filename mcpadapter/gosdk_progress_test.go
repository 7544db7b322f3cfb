package mcpadapter

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
)

// TestGoSDKClientProgress: the official Go SDK's client (v1.8.0), with its standalone
// stream open where its version has one, gets every progress notification of a call
// that reports one per upstream page, under its token and in order, on every protocol
// version. (The SDK hands notifications to its handler apart from the result, so the
// test waits for them rather than checking them at the result; before the hub sent a
// call's notifications on the call's stream, some left on the GET stream and arrived
// out of order.)
func TestGoSDKClientProgress(t *testing.T) {
	t.Parallel()
	const pages = 150
	// On 2026-07-28 (no session) a call lost one of its progress notifications in about
	// two runs of ten under the race detector, before stateless calls had a mcptransport.CallStream.
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) }))
			t.Cleanup(func() { testwait.CloseServer(t, upstream) })
			reg := providers.NewRegistry()
			if err := reg.Register(pagesSpec()); err != nil {
				t.Fatal(err)
			}
			_ = reg.SetBaseURL("pages", upstream.URL)
			e := newEnvWith(t, nil, func(o *router.Options) { o.Registry = reg })
			e.conns.set(connections.Connection{ID: "con_p", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "pages", AccountLabel: "alice@pages", Status: connections.StatusActive})

			var mu sync.Mutex
			got := map[string][]string{}
			client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-progress", Version: "1"}, &sdk.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
					mu.Lock()
					defer mu.Unlock()
					token := fmt.Sprint(req.Params.ProgressToken)
					got[token] = append(got[token], fmt.Sprint(req.Params.Progress))
				}})
			ctx := context.Background()
			cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
				Endpoint: e.srv.URL + "/mcp/acme", HTTPClient: &http.Client{Transport: keyTransport{key: "key-alice"}},
			}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			if version < "2026-07-28" {
				waitStream(t, e, alice, "") // the SDK's GET stream is open
			}
			want := make([]string, pages)
			for i := range want {
				want[i] = fmt.Sprint(i + 1)
			}
			for i := range 3 {
				token := fmt.Sprintf("sdk-%d", i)
				params := &sdk.CallToolParams{Name: "pages_read_all", Arguments: map[string]any{"pages": pages}}
				params.SetProgressToken(token)
				res, err := cs.CallTool(ctx, params)
				if err != nil || res.IsError {
					t.Fatalf("tools/call: %v %+v", err, res)
				}
				testwait.Until(t, "the call's progress notifications", func() bool {
					mu.Lock()
					defer mu.Unlock()
					return len(got[token]) >= pages
				})
				mu.Lock()
				seen := strings.Join(got[token], ",")
				mu.Unlock()
				if seen != strings.Join(want, ",") {
					t.Fatalf("%s: progress %s, want 1 to %d once each in order", token, seen, pages)
				}
			}
		})
	}
}
