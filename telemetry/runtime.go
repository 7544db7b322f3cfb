package telemetry

import (
	"database/sql"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// registerRuntime adds the Go runtime's and the process's metrics (go_*, process_*).
func registerRuntime(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register runtime metrics: %w", err)
		}
	}
	return nil
}

// DBPool reports the database pool's statistics (go_sql_* with db_name="main"): open,
// in use and idle connections, waits for a connection and their time.
func (m *Metrics) DBPool(db *sql.DB) error {
	return m.Register(collectors.NewDBStatsCollector(db, "main"))
}
