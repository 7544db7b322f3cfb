package events_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// BenchmarkPublishDelivery measures one change from Publish on node A to its delivery
// to a subscriber on node B: in process (SQLite's single node, where A is B) and
// through PostgreSQL's LISTEN/NOTIFY between two buses (when
// SWITCHBOARD_TEST_DATABASE_URL is set). Changes are sent one at a time, each after the
// previous one arrived, so ns/op is the latency of one change.
func BenchmarkPublishDelivery(b *testing.B) {
	run := func(b *testing.B, a, other events.Bus) {
		got := make(chan struct{}, 1)
		other.Subscribe(func(e events.Event) {
			if e.Kind == events.ConnectionChanged {
				got <- struct{}{}
			}
		})
		ctx := context.Background()
		e := events.Event{Kind: events.ConnectionChanged, Tenant: "ten_0123456789abcdefghjkmnpqrs", ID: "con_0123456789abcdefghjkmnpqrs"}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if err := a.Publish(ctx, e); err != nil {
				b.Fatal(err)
			}
			select {
			case <-got:
			case <-time.After(10 * time.Second):
				b.Fatal("the change did not arrive")
			}
		}
	}
	b.Run("local", func(b *testing.B) {
		l := events.NewLocal("")
		run(b, l, l)
	})
	if db := testdb.OpenPostgres(b); db != nil {
		b.Run("postgres", func(b *testing.B) {
			a, other := openPair(b, db)
			run(b, a, other)
		})
	}
}

// openPair opens two nodes' PostgreSQL buses on db.
func openPair(b *testing.B, db *gorm.DB) (events.Bus, events.Bus) {
	sqlDB, err := db.DB()
	if err != nil {
		b.Fatal(err)
	}
	var buses []events.Bus
	for range 2 {
		bus, closeBus, err := events.Open(context.Background(), "postgres", sqlDB, testdb.DSN(b, db), "", nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(closeBus)
		buses = append(buses, bus)
	}
	return buses[0], buses[1]
}
