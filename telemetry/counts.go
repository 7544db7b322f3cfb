package telemetry

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// countQuery is a gauge whose values come from a GROUP BY query run on scrape. The
// answer is kept for a while, so frequent scrapes (or several Prometheus servers) cost
// one query per interval; a slow or failed query is logged and yields nothing.
type countQuery struct {
	db      *sql.DB
	name    string
	desc    *prometheus.Desc
	query   string
	labels  int
	every   time.Duration
	timeout time.Duration
	log     *slog.Logger

	mu      sync.Mutex
	at      time.Time
	samples []countSample
}

type countSample struct {
	labels []string
	n      float64
}

// countEvery is how long a count answers scrapes before the query runs again.
const countEvery = 15 * time.Second

// ConnectionsByStatus reports the connections of every tenant by provider and status
// (active, expiring, needs_reconnect, revoked), counted on scrape.
func (m *Metrics) ConnectionsByStatus(db *sql.DB, log *slog.Logger) error {
	return m.Register(newCountQuery(db, log, "connections",
		"Connections of every tenant, by provider and status, counted on scrape.",
		`SELECT provider, status, COUNT(*) FROM connections GROUP BY provider, status`, "provider", "status"))
}

// RunsByState reports the asynchronous runs kept in the database by state (working,
// input_required, completed, failed, canceled), counted on scrape. Ended runs are
// purged after their retention, so the count stays small.
func (m *Metrics) RunsByState(db *sql.DB, log *slog.Logger) error {
	return m.Register(newCountQuery(db, log, "runs",
		"Asynchronous runs in the database, by state, counted on scrape.",
		`SELECT state, COUNT(*) FROM runs GROUP BY state`, "state"))
}

// SessionsRecorded reports the MCP sessions recorded in the database, of every node:
// sessions are rows, so any node can serve them; switchboard_mcp_sessions counts the
// ones this node holds.
func (m *Metrics) SessionsRecorded(db *sql.DB, log *slog.Logger) error {
	return m.Register(newCountQuery(db, log, "mcp_sessions_recorded",
		"MCP sessions recorded in the database, of every node, counted on scrape.",
		`SELECT COUNT(*) FROM mcp_sessions`))
}

func newCountQuery(db *sql.DB, log *slog.Logger, name, help, query string, labels ...string) *countQuery {
	if log == nil {
		log = slog.Default()
	}
	return &countQuery{
		db: db, log: log, query: query, name: prometheus.BuildFQName(Namespace, "", name), labels: len(labels), every: countEvery, timeout: 5 * time.Second,
		desc: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil),
	}
}

// Describe implements prometheus.Collector.
func (q *countQuery) Describe(ch chan<- *prometheus.Desc) { ch <- q.desc }

// Collect implements prometheus.Collector.
func (q *countQuery) Collect(ch chan<- prometheus.Metric) {
	for _, s := range q.current() {
		ch <- prometheus.MustNewConstMetric(q.desc, prometheus.GaugeValue, s.n, s.labels...)
	}
}

// current returns the last answer, querying again once it is older than every.
func (q *countQuery) current() []countSample {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.at.IsZero() && time.Since(q.at) < q.every {
		return q.samples
	}
	ctx, cancel := context.WithTimeout(context.Background(), q.timeout)
	defer cancel()
	samples, err := q.run(ctx)
	q.at = time.Now() // a failure is not retried at every scrape either
	if err != nil {
		q.log.Warn("metrics: count query failed", "metric", q.name, "err", err)
		q.samples = nil
		return nil
	}
	q.samples = samples
	return samples
}

func (q *countQuery) run(ctx context.Context) ([]countSample, error) {
	rows, err := q.db.QueryContext(ctx, q.query)
	if err != nil {
		return nil, fmt.Errorf("count: %w", err)
	}
	defer rows.Close()
	var out []countSample
	for rows.Next() {
		labels := make([]string, q.labels)
		dest := make([]any, 0, q.labels+1)
		for i := range labels {
			dest = append(dest, &labels[i])
		}
		var n int64
		dest = append(dest, &n)
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("count: %w", err)
		}
		out = append(out, countSample{labels: labels, n: float64(n)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count: %w", err)
	}
	return out, nil
}
