package connections_test

import (
	"context"
	"slices"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestReconnectIsAuditedAsAReconnect: renewing a connection in place, and an attempt
// the provider refuses, are audited as reconnects of that connection (the refusal with
// its error code), never as a new connection.
func TestReconnectIsAuditedAsAReconnect(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		r := newServiceRig(t, db)
		mine, err := r.svc.Connect(ctx, r.a.bob, connections.ConnectInput{Provider: "fake", Token: goodToken})
		if err != nil {
			t.Fatal(err)
		}
		_, refused := r.svc.Reconnect(ctx, r.a.bob, mine.ID, connections.ReconnectInput{Token: "fake_forbidden"})
		if refused == nil {
			t.Fatal("a token the provider refuses reconnected the connection")
		}
		if _, err := r.svc.Reconnect(ctx, r.a.bob, mine.ID, connections.ReconnectInput{Token: "fake good"}); err == nil || switchboard.AsError(err).Field != "token" {
			t.Fatalf("a token not in the provider's form: err = %v, want an invalid token", err)
		}
		if _, err := r.svc.Reconnect(ctx, r.a.bob, mine.ID, connections.ReconnectInput{Token: goodToken}); err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, e := range r.events(t, r.a.id) {
			if e.ConnectionID == mine.ID {
				kinds = append(kinds, string(e.Kind)+" "+e.Outcome)
			}
		}
		want := []string{"connection_created ok", "connection_reconnected ok", "connection_reconnected " + string(switchboard.CodeOf(refused))}
		slices.Sort(kinds)
		slices.Sort(want)
		if !slices.Equal(kinds, want) {
			t.Errorf("the connection's audit events are %q, want %q", kinds, want)
		}
	})
}
