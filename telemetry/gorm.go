package telemetry

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"
)

// GormTracing returns a gorm plugin that gives every statement a client span (named
// after the operation and table, "SELECT connections"), with the parameterized SQL
// text (never the values: they may be sealed credentials or key hashes), the table
// and the rows affected. Without tracing it registers nothing.
func (t *Telemetry) GormTracing() gorm.Plugin { return &gormTracing{t: t} }

type gormTracing struct{ t *Telemetry }

// Name implements gorm.Plugin.
func (*gormTracing) Name() string { return "switchboard:tracing" }

type gormSpanKey struct{}

// Initialize implements gorm.Plugin.
func (p *gormTracing) Initialize(db *gorm.DB) error {
	if !p.t.Tracing() {
		return nil
	}
	cb := db.Callback()
	// gorm's chain types are unexported, hence one line per chain.
	for _, err := range []error{
		cb.Create().Before("gorm:create").Register("switchboard:trace_before_create", p.before("INSERT")),
		cb.Create().After("gorm:create").Register("switchboard:trace_after_create", p.after),
		cb.Query().Before("gorm:query").Register("switchboard:trace_before_query", p.before("SELECT")),
		cb.Query().After("gorm:query").Register("switchboard:trace_after_query", p.after),
		cb.Update().Before("gorm:update").Register("switchboard:trace_before_update", p.before("UPDATE")),
		cb.Update().After("gorm:update").Register("switchboard:trace_after_update", p.after),
		cb.Delete().Before("gorm:delete").Register("switchboard:trace_before_delete", p.before("DELETE")),
		cb.Delete().After("gorm:delete").Register("switchboard:trace_after_delete", p.after),
		cb.Row().Before("gorm:row").Register("switchboard:trace_before_row", p.before("SELECT")),
		cb.Row().After("gorm:row").Register("switchboard:trace_after_row", p.after),
		cb.Raw().Before("gorm:raw").Register("switchboard:trace_before_raw", p.before("EXEC")),
		cb.Raw().After("gorm:raw").Register("switchboard:trace_after_raw", p.after),
	} {
		if err != nil {
			return fmt.Errorf("register tracing callback: %w", err)
		}
	}
	return nil
}

func (p *gormTracing) before(op string) func(*gorm.DB) {
	return func(db *gorm.DB) {
		ctx := db.Statement.Context
		if ctx == nil {
			ctx = context.Background()
		}
		name := op
		if db.Statement.Table != "" {
			name += " " + db.Statement.Table
		}
		ctx, span := p.t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("db.system.name", db.Name()), attribute.String("db.operation.name", op)))
		db.Statement.Context = context.WithValue(ctx, gormSpanKey{}, span)
	}
}

func (p *gormTracing) after(db *gorm.DB) {
	span, ok := db.Statement.Context.Value(gormSpanKey{}).(trace.Span)
	if !ok {
		return
	}
	if db.Statement.Table != "" {
		span.SetAttributes(attribute.String("db.collection.name", db.Statement.Table))
	}
	if sql := db.Statement.SQL.String(); sql != "" {
		span.SetAttributes(attribute.String("db.query.text", sql))
	}
	span.SetAttributes(attribute.Int64("db.response.returned_rows", db.Statement.RowsAffected))
	if err := db.Error; err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
