package mcp_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/providers"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/router"
)

// TestRemoteCallGivesItsPlaceBack: while a remote MCP server works on a call, the
// call holds no place in the node's admission, as a built-in provider's call does not
// while its upstream answers: with the node's only place and only room taken by a call
// the server takes its time over, another call is admitted at once (MaxAdmitted
// leaves it room).
func TestRemoteCallGivesItsPlaceBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t, testdb.SQLite(t))
	up := newMCPServer(t, "")
	entered, release := make(chan struct{}, 1), make(chan struct{})
	up.mcp.AddTool(mcpgo.NewTool("ponder", mcpgo.WithDescription("Take time over nothing.")),
		func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			entered <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return mcpgo.NewToolResultText("done"), nil
		})
	reg, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "slow", URL: up.url()})
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	adm := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 1, MaxAdmitted: 2, MaxWait: 50 * time.Millisecond})
	slot, err := adm.Admit(ctx, r.a.TenantID)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		out any
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := r.router.Execute(limits.WithSlot(ctx, slot), r.a, router.Request{Tool: "slow_ponder", ConnectionID: reg.Connection.ID, Args: json.RawMessage(`{}`)})
		done <- result{out, err}
	}()
	testwait.Recv(t, entered, "the server to start on the call")
	other, err := adm.Admit(ctx, r.b.TenantID)
	if err != nil {
		t.Fatalf("another call, while the only admitted one waits for its remote server: %v", err)
	}
	other.Release()
	close(release)
	res := testwait.Recv(t, done, "the remote call to end")
	if res.err != nil || res.out.(*providers.ContentResult).Text() != "done" {
		t.Fatalf("call = %v, %v", res.out, res.err)
	}
	if adm.Running() != 1 {
		t.Errorf("running = %d after the call came back, want its place held again until it is released", adm.Running())
	}
	slot.Release()
}
