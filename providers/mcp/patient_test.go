package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/mcpadapter"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/tenants"
)

// bearer adds an API key to the official Go SDK client's requests.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// TestRelayedRequestWaitsForTheCaller: a remote server's elicitation that the person
// answers after longer than mcp-go's client waits for its own handling of a server's
// request (30 s), and than the hub's timeout for a remote call (20 s here), still
// reaches the remote, which returns the answer. The time the calling client takes is
// the caller's: the relayed request lasts as long as the call. (The calling client is
// the official Go SDK's, which gives its handler the time it takes.)
func TestRelayedRequestWaitsForTheCaller(t *testing.T) {
	t.Parallel()
	const answerAfter = 35 * time.Second
	ctx := context.Background()
	db := testdb.SQLite(t)
	r := newRig(t, db)
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	if _, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "up", URL: sdkAsker(t)}); err != nil {
		t.Fatal(err)
	}
	key, _, err := ts.CreateKey(ctx, r.a.TenantID, r.a.UserID, "slow person", false)
	if err != nil {
		t.Fatal(err)
	}
	hub := httptest.NewServer(mcpadapter.New(mcpadapter.Options{Router: r.router, Auth: ts}))
	t.Cleanup(func() { testwait.CloseServer(t, hub) })

	asked := make(chan time.Time, 1)
	client := sdk.NewClient(&sdk.Implementation{Name: "slow-person", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked <- time.Now()
			select { // the person reads the form, and takes their time
			case <-time.After(answerAfter):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}})
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint: hub.URL + mcpadapter.Prefix + r.a.TenantSlug, HTTPClient: &http.Client{Transport: bearer(key)}, DisableStandaloneSSE: true,
	}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	cctx, cancel := context.WithTimeout(ctx, 3*time.Minute) // a bound for the test, not a timing condition
	defer cancel()
	res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "up_ask", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("up_ask: %v", err)
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	if got := strings.Join(texts, "\n"); res.IsError || got != "accept Ada" {
		t.Errorf("up_ask = %q (error %v), want the person's late answer relayed back", got, res.IsError)
	}
	select {
	case <-asked:
	default:
		t.Error("the person was never asked")
	}
}
