package events_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// recorder collects the events a subscriber receives.
type recorder struct {
	mu  sync.Mutex
	got []events.Event
	ch  chan events.Event
}

func record(b events.Bus) *recorder {
	r := &recorder{ch: make(chan events.Event, 100)}
	b.Subscribe(func(e events.Event) {
		r.mu.Lock()
		r.got = append(r.got, e)
		r.mu.Unlock()
		r.ch <- e
	})
	return r
}

// next waits for the next event; the deadline only ends a test that would hang.
func (r *recorder) next(t *testing.T) events.Event {
	t.Helper()
	select {
	case e := <-r.ch:
		return e
	case <-time.After(20 * time.Second):
		t.Fatal("no event arrived")
		return events.Event{}
	}
}

func (r *recorder) events() []events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]events.Event(nil), r.got...)
}

// buses opens two nodes' buses on one database: PostgreSQL buses that hear each
// other, or on SQLite one Local bus standing for both (a single node).
func buses(t *testing.T, db *gorm.DB) (a, b events.Bus, shared bool) {
	t.Helper()
	return busesNamed(t, db, "node_a", "node_b")
}

// busesNamed is buses with the nodes named nodeA and nodeB. A test that terminates a
// node's connections by its application_name names its nodes apart: the names are
// the server's, across every test's schema, and tests run in parallel.
func busesNamed(t *testing.T, db *gorm.DB, nodeA, nodeB string) (a, b events.Bus, shared bool) {
	t.Helper()
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	open := func(node string) events.Bus {
		bus, closeBus, err := events.Open(context.Background(), db.Dialector.Name(), sqlDB, testdb.DSN(t, db), node, nil)
		if err != nil {
			t.Fatalf("open bus: %v", err)
		}
		t.Cleanup(closeBus)
		return bus
	}
	if db.Dialector.Name() != "postgres" {
		l := open(nodeA)
		return l, l, false
	}
	return open(nodeA), open(nodeB), true
}

func TestBusDelivers(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		a, b, shared := buses(t, db)
		onA, onB := record(a), record(b)
		ctx := context.Background()
		sent := events.Event{Kind: events.ConnectionRemoved, Tenant: "ten_1", ID: "con_1", Data: json.RawMessage(`{"x":1}`)}
		if err := a.Publish(ctx, sent); err != nil {
			t.Fatalf("publish: %v", err)
		}
		want := sent
		want.Origin = "node_a"
		if diff := cmp.Diff(want, onA.next(t)); diff != "" {
			t.Errorf("publisher's own delivery (-want +got):\n%s", diff)
		}
		if !shared {
			return
		}
		if diff := cmp.Diff(want, onB.next(t)); diff != "" {
			t.Errorf("other node's delivery (-want +got):\n%s", diff)
		}
		// An event meant for node B is delivered there only; a later broadcast marks
		// the point by which it would have arrived on A.
		if err := a.Publish(ctx, events.Event{Kind: "session.relay", ID: "s1", To: "node_b"}); err != nil {
			t.Fatal(err)
		}
		if got := onB.next(t); got.Kind != "session.relay" || got.To != "node_b" {
			t.Errorf("node B got %+v, want the relay", got)
		}
		if err := b.Publish(ctx, events.Event{Kind: events.KeyRevoked, Tenant: "ten_1", ID: "key_1"}); err != nil {
			t.Fatal(err)
		}
		if got := onA.next(t); got.Kind != events.KeyRevoked {
			t.Errorf("node A got %+v, want only the key revocation after the relay meant for B", got)
		}
		var kinds []events.Kind
		for _, e := range onA.events() {
			kinds = append(kinds, e.Kind)
		}
		if diff := cmp.Diff([]events.Kind{events.ConnectionRemoved, events.KeyRevoked}, kinds); diff != "" {
			t.Errorf("node A's deliveries (-want +got):\n%s", diff)
		}
	})
}

func TestBusRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		event events.Event
		field string
	}{
		{"no kind", events.Event{ID: "x"}, "kind"},
		{"gap", events.Event{Kind: events.Gap}, "kind"},
		{"too large", events.Event{Kind: "session.relay", Data: json.RawMessage(`"` + strings.Repeat("a", events.MaxSize) + `"`)}, "data"},
	}
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		a, _, _ := buses(t, db)
		got := record(a)
		for _, tt := range tests {
			err := a.Publish(context.Background(), tt.event)
			if e := switchboard.AsError(err); e == nil || e.Code != switchboard.CodeInvalid || e.Field != tt.field {
				t.Errorf("%s: Publish = %v, want an invalid %q error", tt.name, err, tt.field)
			}
		}
		if n := len(got.events()); n != 0 {
			t.Errorf("%d events delivered, want none", n)
		}
	})
}

func TestBusUnsubscribe(t *testing.T) {
	t.Parallel()
	b := events.NewLocal("")
	var n int
	stop := b.Subscribe(func(events.Event) { n++ })
	_ = b.Publish(context.Background(), events.Event{Kind: events.AgentChanged})
	stop()
	_ = b.Publish(context.Background(), events.Event{Kind: events.AgentChanged})
	if n != 1 {
		t.Errorf("handler called %d times, want 1 (before unsubscribing)", n)
	}
}

func TestPostgresGapAfterReconnect(t *testing.T) {
	t.Parallel()
	testdb.Postgres(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		a, b, _ := busesNamed(t, db, "gap_a", "gap_b")
		onB := record(b)
		// Every connection named for node B is B's (its listener, and one it may be
		// opening at that moment); at least the listener must go.
		var killed int
		if err := db.Raw("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = ?",
			events.ApplicationName(b.Node())).Scan(&killed).Error; err != nil || killed < 1 {
			t.Fatalf("terminate node B's listener: killed %d, %v", killed, err)
		}
		if got := onB.next(t); got.Kind != events.Gap {
			t.Fatalf("after the disconnection node B got %+v, want a gap", got)
		}
		// Once it said gap, it is listening again.
		if err := a.Publish(context.Background(), events.Event{Kind: events.AgentDeleted, Tenant: "ten_1", ID: "agt_1"}); err != nil {
			t.Fatal(err)
		}
		if got := onB.next(t); got.Kind != events.AgentDeleted || got.ID != "agt_1" {
			t.Errorf("after reconnecting node B got %+v, want the agent deletion", got)
		}
	})
}

// TestPostgresListensThroughSilence: a listener that heard nothing for a while checks
// its connection and goes on listening on it (no reconnection, so no gap).
func TestPostgresListensThroughSilence(t *testing.T) {
	t.Parallel()
	testdb.Postgres(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		sqlDB, err := db.DB()
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		quiet, err := events.NewPostgres(ctx, events.PostgresOptions{DSN: testdb.DSN(t, db), DB: sqlDB, Node: "node_quiet", Ping: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(quiet.Close)
		heard := record(quiet)
		a, _, _ := buses(t, db)
		// The other node publishes once the quiet one has checked its connection after a
		// silence: its last statement is then pgx's ping ("-- ping") instead of LISTEN.
		giveUp := time.Now().Add(30 * time.Second) // only ends a test that would hang
		for last := ""; last != "-- ping"; {
			if time.Now().After(giveUp) {
				t.Fatalf("the quiet node never checked its connection; its last statement: %q", last)
			}
			if err := db.Raw("SELECT query FROM pg_stat_activity WHERE application_name = ?", events.ApplicationName("node_quiet")).Scan(&last).Error; err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if err := a.Publish(ctx, events.Event{Kind: events.AgentChanged, Tenant: "ten_1", ID: "agt_1"}); err != nil {
			t.Fatal(err)
		}
		if got := heard.next(t); got.Kind != events.AgentChanged {
			t.Errorf("the quiet node got %+v first, want the agent change (no gap)", got)
		}
		if !quiet.Connected() {
			t.Error("the quiet node says it is not connected")
		}
	})
}
