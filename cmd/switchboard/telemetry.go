package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/database"
	"github.com/switchboard-hub/switchboard/telemetry"
)

// observability is the process's telemetry and what must be stopped with it.
type observability struct {
	tel      *telemetry.Telemetry
	registry *prometheus.Registry // nil without an admin listener
	shutdown []func(context.Context) error
}

// setupTelemetry creates the metrics (when an admin listener will serve them) and the
// tracer provider (when OTLP is configured), and instruments the database with them.
func setupTelemetry(ctx context.Context, cfg config, db *gorm.DB, log *slog.Logger) (*observability, error) {
	o := &observability{}
	// The database's failed statements join the other logs (JSON, trace ids, repeats folded).
	database.LogTo(db, log)
	var m *telemetry.Metrics
	if cfg.AdminAddr != "" {
		o.registry = prometheus.NewRegistry()
		var err error
		if m, err = telemetry.NewMetrics(o.registry); err != nil {
			return nil, err
		}
		sqlDB, err := db.DB()
		if err != nil {
			return nil, fmt.Errorf("database pool for metrics: %w", err)
		}
		for _, err := range []error{m.DBPool(sqlDB), m.ConnectionsByStatus(sqlDB, log), m.RunsByState(sqlDB, log), m.SessionsRecorded(sqlDB, log)} {
			if err != nil {
				return nil, err
			}
		}
	}
	var tp trace.TracerProvider
	if cfg.TracesEndpoint != "" {
		sdk, err := telemetry.NewTracerProvider(ctx, cfg.TracesEndpoint, version())
		if err != nil {
			return nil, err
		}
		tp = sdk
		o.shutdown = append(o.shutdown, sdk.Shutdown)
	}
	o.tel = telemetry.New(m, tp)
	if err := db.Use(o.tel.GormTracing()); err != nil {
		return nil, fmt.Errorf("trace database statements: %w", err)
	}
	return o, nil
}

// serveAdmin starts the admin listener (metrics, pprof) when one is configured, prints
// its URL, and returns the function that stops it.
func (o *observability) serveAdmin(cfg config, log *slog.Logger, stdout io.Writer) error {
	if o.registry == nil {
		return nil
	}
	ln, err := net.Listen("tcp", cfg.AdminAddr)
	if err != nil {
		return fmt.Errorf("listen on %s (SWITCHBOARD_ADMIN_ADDR): %w", cfg.AdminAddr, err)
	}
	srv := &http.Server{
		Handler:           telemetry.AdminHandler(o.registry, cfg.AdminHosts),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("admin listener", "err", err)
		}
	}()
	fmt.Fprintf(stdout, "Admin listener (metrics, pprof): http://%s\n", ln.Addr())
	o.shutdown = append(o.shutdown, srv.Shutdown)
	return nil
}

// close stops the admin listener and flushes the traces.
func (o *observability) close(log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, stop := range o.shutdown {
		if err := stop(ctx); err != nil {
			log.Warn("stop telemetry", "err", err)
		}
	}
}
