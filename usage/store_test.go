package usage_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/usage"
)

func TestPassFillsFromTheOldestCallAndMovesTheWatermark(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		a := addTenant(t, db, "ten_a")
		now := at
		// Calls three days ago, an hour ago and now.
		insert(t, db,
			call(a, now.Add(-72*time.Hour), "agent:agt_1", "con_1", "github_get_issue", "ok", 20*time.Millisecond),
			call(a, now.Add(-time.Hour), "agent:agt_1", "con_1", "github_get_issue", "ok", 20*time.Millisecond),
			call(a, now, "user:usr_1", "con_2", "slack_post_message", "upstream", 200*time.Millisecond),
		)
		r := usage.NewRollup(db, nil)
		r.Now = clock(&now)
		if err := r.Pass(ctx); err != nil {
			t.Fatal(err)
		}
		var settled int64
		if err := db.Table("usage_rollup").Where("name = ?", "hourly").Pluck("settled", &settled).Error; err != nil {
			t.Fatal(err)
		}
		if want := now.Add(-usage.Settle).Truncate(time.Hour).Unix(); settled != want {
			t.Errorf("the watermark is %s, want %s", time.Unix(settled, 0).UTC(), time.Unix(want, 0).UTC())
		}
		s := usage.NewStore(db)
		s.Now = clock(&now)
		o, err := s.Overview(ctx, a, usage.Query{Range: usage.Range7d})
		if err != nil {
			t.Fatal(err)
		}
		if o.Total.Calls != 3 || o.Total.Errors != 1 || len(o.Buckets) != 7 || o.Step != "day" {
			t.Fatalf("7 days: %+v", o)
		}
		// A call made now lands after the pass; a call an hour old completes late. The
		// next pass, an hour on, counts both: it recomputes the hours not settled.
		insert(t, db, call(a, now.Add(time.Minute), "user:usr_1", "con_2", "slack_post_message", "ok", 20*time.Millisecond))
		if err := db.Exec("UPDATE audit_events SET outcome = 'upstream' WHERE at = ?", now.Add(-time.Hour)).Error; err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Hour)
		if err := r.Pass(ctx); err != nil {
			t.Fatal(err)
		}
		if o, err = s.Overview(ctx, a, usage.Query{Range: usage.Range24h}); err != nil {
			t.Fatal(err)
		}
		if o.Total.Calls != 3 || o.Total.Errors != 2 {
			t.Errorf("24 hours after the second pass: %d calls, %d errors, want 3 and 2", o.Total.Calls, o.Total.Errors)
		}
		// The days, summed from the hours, follow.
		if o, err = s.Overview(ctx, a, usage.Query{Range: usage.Range7d}); err != nil {
			t.Fatal(err)
		}
		if o.Total.Calls != 4 || o.Total.Errors != 2 {
			t.Errorf("7 days after the second pass: %d calls, %d errors, want 4 and 2", o.Total.Calls, o.Total.Errors)
		}
	})
}

func TestOverviewKeepsWhatTheQueryAllows(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		a := addTenant(t, db, "ten_a")
		b := addTenant(t, db, "ten_b")
		now := at
		hour := now.Truncate(time.Hour)
		// 100 calls of one agent: 90 at 20 ms, 10 at 3 s, 5 of them errors; 10 of a
		// person on another connection; another tenant's calls.
		for i := range 100 {
			lat, outcome := 20*time.Millisecond, "ok"
			if i >= 90 {
				lat = 3 * time.Second
			}
			if i%20 == 0 {
				outcome = "upstream"
			}
			insert(t, db, call(a, hour.Add(-time.Duration(i%30)*time.Hour), "agent:agt_1", "con_1", "github_get_issue", outcome, lat))
		}
		for range 10 {
			insert(t, db, call(a, hour.Add(-26*time.Hour), "user:usr_1", "con_2", "slack_post_message", "ok", time.Millisecond))
			insert(t, db, call(b, hour, "agent:agt_1", "con_1", "github_get_issue", "ok", time.Millisecond))
		}
		r := usage.NewRollup(db, nil)
		r.Now = clock(&now)
		if err := r.Pass(ctx); err != nil {
			t.Fatal(err)
		}
		s := usage.NewStore(db)
		s.Now = clock(&now)

		o, err := s.Overview(ctx, a, usage.Query{Range: usage.Range7d})
		if err != nil {
			t.Fatal(err)
		}
		if o.Total.Calls != 110 || o.Total.Errors != 5 {
			t.Errorf("the tenant's 7 days: %d calls, %d errors, want 110 and 5", o.Total.Calls, o.Total.Errors)
		}
		if len(o.TopTools) != 2 || o.TopTools[0].Tool != "github_get_issue" || o.TopTools[0].Calls != 100 || o.TopTools[1].Calls != 10 {
			t.Errorf("top tools: %+v", o.TopTools)
		}
		// p50 within the 10–25 ms bucket; p95 within 2.5–5 s (the slowest tenth).
		if p := o.TopTools[0].P50Ms; p == nil || *p <= 10 || *p > 25 {
			t.Errorf("p50 of github_get_issue is %v ms", p)
		}
		if p := o.TopTools[0].P95Ms; p == nil || *p <= 2500 || *p > 5000 {
			t.Errorf("p95 of github_get_issue is %v ms", p)
		}

		agent, err := s.Overview(ctx, a, usage.Query{Range: usage.Range7d, Principals: []string{"agent:agt_1"}})
		if err != nil {
			t.Fatal(err)
		}
		if agent.Total.Calls != 100 || agent.Total.ErrorShare != 0.05 {
			t.Errorf("the agent's 7 days: %+v", agent.Total)
		}
		conn, err := s.Overview(ctx, a, usage.Query{Range: usage.Range7d, ConnectionID: "con_2"})
		if err != nil {
			t.Fatal(err)
		}
		if conn.Total.Calls != 10 || len(conn.TopTools) != 1 || conn.TopTools[0].Tool != "slack_post_message" {
			t.Errorf("con_2's 7 days: %+v", conn)
		}
		none, err := s.Overview(ctx, a, usage.Query{Range: usage.Range30d, Principals: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		if none.Total.Calls != 0 || len(none.Buckets) != 30 {
			t.Errorf("with no principal allowed: %+v", none.Total)
		}
		// 24 hours: hourly buckets ending with the current hour, 82 of the agent's calls
		// (those 0 to 23 hours old); the person's calls 26
		// hours ago are out.
		day, err := s.Overview(ctx, a, usage.Query{Range: usage.Range24h})
		if err != nil {
			t.Fatal(err)
		}
		last := day.Buckets[len(day.Buckets)-1]
		if len(day.Buckets) != 24 || !last.Start.Equal(hour) || day.Total.Calls != 82 || last.Calls != 4 {
			t.Errorf("24 hours: %d buckets, the last at %s with %d calls, %d in all", len(day.Buckets), last.Start, last.Calls, day.Total.Calls)
		}
		if _, err := s.Overview(ctx, a, usage.Query{Range: "1y"}); err == nil || !strings.Contains(err.Error(), "range") {
			t.Errorf("a range of 1y: %v", err)
		}
	})
}

func TestChartDrawsTheFiguresEscaped(t *testing.T) {
	t.Parallel()
	h := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	p50, p95 := 12.5, 300.0
	o := usage.Overview{Range: usage.Range24h, Step: "hour", Buckets: []usage.Bucket{
		{Start: h, Figures: usage.Figures{Calls: 10, Errors: 2, ErrorShare: 0.2, P50Ms: &p50, P95Ms: &p95}},
		{Start: h.Add(time.Hour)},
	}}
	o.Total = o.Buckets[0].Figures
	svg, err := usage.Chart(o, usage.ChartCalls, `agent <"x">`)
	if err != nil {
		t.Fatal(err)
	}
	s := string(svg)
	for _, want := range []string{`<title id="t">Calls per hour of agent &lt;&#34;x&#34;&gt; over the last 24 hours</title>`,
		`In the last 24 hours: 10 calls, 2 errors (20.0%), p50 12.5 ms, p95 300 ms.`, `class="err"`, `prefers-color-scheme: dark`} {
		if !strings.Contains(s, want) {
			t.Errorf("the calls chart lacks %s:\n%s", want, s)
		}
	}
	if strings.Count(s, `<g class="bucket">`) != 1 {
		t.Errorf("the calls chart draws %d bars, want 1 (the empty hour has none)", strings.Count(s, `<g class="bucket">`))
	}
	lat, err := usage.Chart(o, usage.ChartLatency, "the workspace")
	if err != nil || !strings.Contains(string(lat), `class="p95"`) || strings.Contains(string(lat), "No calls") {
		t.Errorf("the latency chart: %v\n%s", err, lat)
	}
	if _, err := usage.Chart(o, "pie", "x"); err == nil {
		t.Error("a pie chart was drawn")
	}
}
