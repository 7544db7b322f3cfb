package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/internal/feedtest"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/router"
)

// TestFeedDropsStaleSession: when another node saw a remote server's tools change,
// this node ends its session with that server (so the next list is read afresh); an
// event of its own, or of another tenant's connection, leaves the session alone.
func TestFeedDropsStaleSession(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		event     func(r *rig, id string) events.Event
		wantEnded int
	}{
		{name: "another node saw the change", wantEnded: 1, event: func(r *rig, id string) events.Event {
			return events.Event{Kind: events.RemoteToolsChanged, Tenant: r.a.TenantID, ID: id}
		}},
		{name: "this node's own event", event: func(r *rig, id string) events.Event {
			return events.Event{Kind: events.RemoteToolsChanged, Tenant: r.a.TenantID, ID: id, Origin: "node_self"}
		}},
		{name: "another tenant's id", event: func(r *rig, id string) events.Event {
			return events.Event{Kind: events.RemoteToolsChanged, Tenant: r.b.TenantID, ID: id}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newRig(t, testdb.SQLite(t))
			bus := feedtest.New()
			r.remote.SetFeed(bus)
			up := newMCPServer(t, "")
			reg, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "up", URL: up.url()})
			if err != nil {
				t.Fatal(err)
			}
			call := func() {
				t.Helper()
				if _, err := r.router.Execute(ctx, r.a, router.Request{Tool: "up_shout", ConnectionID: reg.Connection.ID, Args: json.RawMessage(`{"word":"a"}`)}); err != nil {
					t.Fatal(err)
				}
			}
			call() // opens this node's session
			deletes := func() int {
				up.mu.Lock()
				defer up.mu.Unlock()
				return up.deletes
			}
			before := deletes()
			bus.Deliver(tt.event(r, reg.Connection.ID))
			if got := deletes() - before; got != tt.wantEnded {
				t.Errorf("sessions ended: %d, want %d", got, tt.wantEnded)
			}
			call() // works either way
		})
	}
}
