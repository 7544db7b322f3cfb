package fleet_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/fleet"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testlog"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// clock is a settable time shared by the nodes of a test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func member(db *gorm.DB, clk *clock, node string, s fleet.Settings) *fleet.Membership {
	return fleet.New(fleet.Options{
		DB: db, Node: node, Version: "v1.2.3", Interval: 10 * time.Second, Now: clk.now,
		Settings: func(context.Context) (fleet.Settings, error) { return s, nil },
	})
}

func TestDifferences(t *testing.T) {
	t.Parallel()
	base := fleet.Settings{"public_url": "https://hub.example.com", "keyring.key_ids": "k1,k2", "oauth.github.client_id": "Iv1.abc"}
	with := func(k, v string) fleet.Settings {
		s := fleet.Settings{}
		for n, w := range base {
			s[n] = w
		}
		if v == "" {
			delete(s, k)
		} else {
			s[k] = v
		}
		return s
	}
	tests := []struct {
		name  string
		peer  fleet.Settings
		after time.Duration // since the peer's heartbeat
		want  []fleet.Difference
	}{
		{name: "same settings", peer: base},
		{name: "another key", peer: with("keyring.key_ids", "k1,k2,k3"),
			want: []fleet.Difference{{Node: "node_b", Version: "v1.2.3", Settings: []string{"keyring.key_ids"}}}},
		{name: "no OAuth app", peer: with("oauth.github.client_id", ""),
			want: []fleet.Difference{{Node: "node_b", Version: "v1.2.3", Settings: []string{"oauth.github.client_id"}}}},
		{name: "a setting only the peer has", peer: with("oauth.slack.client_id", "123.456"),
			want: []fleet.Difference{{Node: "node_b", Version: "v1.2.3", Settings: []string{"oauth.slack.client_id"}}}},
		{name: "a silent peer is not compared", peer: with("public_url", "http://10.0.0.5:8080"), after: 31 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testdb.Each(t, func(t *testing.T, db *gorm.DB) {
				t.Parallel()
				ctx := context.Background()
				clk := &clock{t: time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)}
				a, b := member(db, clk, "node_a", base), member(db, clk, "node_b", tt.peer)
				if err := b.Beat(ctx); err != nil {
					t.Fatal(err)
				}
				clk.advance(tt.after)
				if err := a.Beat(ctx); err != nil {
					t.Fatal(err)
				}
				got, err := a.Differences(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("differences seen by node A (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestLeaving: a node that stops deletes its row, so its peers stop comparing with it;
// a row silent for an hour is deleted by the next beat of any node.
func TestLeaving(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		clk := &clock{t: time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)}
		for _, n := range []string{"node_gone", "node_crashed"} {
			if err := member(db, clk, n, fleet.Settings{"v": n}).Beat(ctx); err != nil {
				t.Fatal(err)
			}
		}
		leaver := member(db, clk, "node_gone", fleet.Settings{"v": "gone"})
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { leaver.Run(runCtx); close(done) }()
		stop()
		testwait.Recv(t, done, "Run to return once its context ended")
		clk.advance(time.Hour + time.Second)
		if err := member(db, clk, "node_a", fleet.Settings{"v": "a"}).Beat(ctx); err != nil {
			t.Fatal(err)
		}
		var ids []string
		if err := db.Table("nodes").Order("id").Pluck("id", &ids).Error; err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"node_a"}, ids); diff != "" {
			t.Errorf("nodes rows (-want +got):\n%s", diff)
		}
	})
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	a := fleet.Fingerprint(fleet.Settings{"x": "1", "y": "2"})
	if b := fleet.Fingerprint(fleet.Settings{"y": "2", "x": "1"}); a != b {
		t.Errorf("the same settings give %s and %s", a, b)
	}
	if c := fleet.Fingerprint(fleet.Settings{"x": "1", "y": "3"}); a == c {
		t.Error("other settings give the same fingerprint")
	}
}

// TestLive counts the live nodes at each beat: the shared limits' fallback gives each
// node 1/Live of a limit while Redis is unreachable.
func TestLive(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		clk := &clock{t: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
		s := fleet.Settings{"public_url": "https://hub.example.com"}
		a, b, c := member(db, clk, "node_a", s), member(db, clk, "node_b", s), member(db, clk, "node_c", s)
		if got := a.Live(); got != 1 {
			t.Errorf("before any beat: Live = %d, want 1", got)
		}
		for _, m := range []*fleet.Membership{a, b, c} {
			if err := m.Beat(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Beat(ctx); err != nil {
			t.Fatal(err)
		}
		if got := a.Live(); got != 3 {
			t.Errorf("three nodes beating: Live = %d, want 3", got)
		}
		// Node c falls silent for longer than three intervals.
		clk.advance(31 * time.Second)
		for _, m := range []*fleet.Membership{b, a} {
			if err := m.Beat(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if got := a.Live(); got != 2 {
			t.Errorf("node c silent: Live = %d, want 2", got)
		}
	})
}

// TestDeadNodesPruned: a peer silent for six intervals (killed) loses its row at the
// next beats of the others, and exactly one of them logs its departure; a peer silent
// for less keeps its row.
func TestDeadNodesPruned(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		clk := &clock{t: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
		var logs testlog.Buffer
		log := slog.New(slog.NewJSONHandler(&logs, nil))
		s := fleet.Settings{"public_url": "https://hub.example.com"}
		nodes := map[string]*fleet.Membership{}
		for _, id := range []string{"node_a", "node_b", "node_dead", "node_slow"} {
			nodes[id] = fleet.New(fleet.Options{DB: db, Node: id, Version: "v1", Interval: 10 * time.Second, Now: clk.now, Logger: log,
				Settings: func(context.Context) (fleet.Settings, error) { return s, nil }})
			if err := nodes[id].Beat(ctx); err != nil {
				t.Fatal(err)
			}
		}
		clk.advance(30 * time.Second)
		for _, id := range []string{"node_a", "node_b", "node_slow"} {
			if err := nodes[id].Beat(ctx); err != nil {
				t.Fatal(err)
			}
		}
		clk.advance(31 * time.Second) // node_dead: 61 s silent; node_slow: 31 s
		var wg sync.WaitGroup
		for _, id := range []string{"node_a", "node_b"} {
			wg.Go(func() {
				if err := nodes[id].Beat(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		var ids []string
		if err := db.Table("nodes").Order("id").Pluck("id", &ids).Error; err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"node_a", "node_b", "node_slow"}, ids); diff != "" {
			t.Errorf("nodes rows (-want +got):\n%s", diff)
		}
		var departures []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			var rec map[string]any
			if line == "" || json.Unmarshal([]byte(line), &rec) != nil {
				continue
			}
			if rec["node"] != nil && strings.Contains(rec["msg"].(string), "without leaving") {
				departures = append(departures, rec)
			}
		}
		if len(departures) != 1 || departures[0]["node"] != "node_dead" || departures[0]["last_heartbeat_at"] != "2026-11-24T09:00:00Z" {
			t.Errorf("departures logged = %v, want node_dead's, once", departures)
		}
	})
}
