package telemetry

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TracesEndpoint is the URL the environment asks traces to be sent to, from the OTLP
// variables of the OpenTelemetry specification: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as
// it is, or OTEL_EXPORTER_OTLP_ENDPOINT followed by /v1/traces. Empty: no tracing.
func TracesEndpoint(getenv func(string) string) string {
	if u := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); u != "" {
		return u
	}
	if u := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); u != "" {
		return strings.TrimRight(u, "/") + "/v1/traces"
	}
	return ""
}

// NewTracerProvider returns a tracer provider that sends batches of spans over
// OTLP/HTTP to endpoint (see TracesEndpoint), configured by the exporter's other
// OTEL_* variables (headers, timeout, compression). It becomes the global provider
// too. Shut it down to flush.
func NewTracerProvider(ctx context.Context, endpoint, version string) (*sdktrace.TracerProvider, error) {
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, fmt.Errorf("start the OTLP trace exporter: %w", err)
	}
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the defaults.
	res, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithHost(),
		resource.WithAttributes(attribute.String("service.name", "switchboard"), attribute.String("service.version", version)),
		resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("describe the service for traces: %w", err)
	}
	sdk := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	// Libraries that take the global provider (and the propagator) see the same ones.
	otel.SetTracerProvider(sdk)
	otel.SetTextMapPropagator(propagator)
	return sdk, nil
}
