// Package telemetry is how Switchboard is observed: Prometheus metrics and pprof on an
// admin listener, OpenTelemetry traces (exported over OTLP/HTTP when configured), and
// the log handlers (JSON or text, trace ids on request lines, repeated errors
// summarised).
//
// Components take a *Telemetry (or a *Metrics) in their options; a nil one records
// nothing, so tests and tools that do not care need not build one. Metrics never carry
// a tenant id as a label: tenants are unbounded, and their activity is in the audit log.
//
// Start from [Telemetry] and [Metrics], [AdminHandler] (the admin listener),
// [NewLogHandler] and [NewTracerProvider].
package telemetry
