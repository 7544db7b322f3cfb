// Package usage keeps the tool calls of each hour per tenant, principal, connection and
// tool (usage_hourly: counts, errors and a latency histogram of fixed buckets) and of
// each day (usage_daily, summed from the hours), and answers from them the figures of
// the usage pictures: calls per hour or day, the share of errors, p50 and p95 latency
// and the top tools over 24 hours, 7 days or 30 days; it draws them as SVG.
//
// Start from [Rollup] (the job that fills the tables from the audit log), [Store] (the
// figures, by [Query]) and [Chart] (their drawing).
//
// The tables are filled by an incremental job with a watermark, not as the audit
// writer commits its rows, for three reasons. A call's row changes after it is
// written: it is written in flight before the upstream request leaves, completed by its
// answer, and marked outcome_unknown by a peer when its node stops; a count kept at
// write time would have to follow every change exactly once, on every node.
// Recomputing an hour from its rows, and a day from its hours, is idempotent instead:
// any node may do it, twice or at once, and a crash between two passes loses nothing.
// And the writer's batches stay one INSERT each, with no second table in their
// transaction: the calls wait for that commit.
//
// A pass recomputes every hour from the watermark (the first hour not settled) to now,
// each from its audit rows through the (tenant, time) index, and the days that hold
// them, then moves the watermark to the hour that began Settle ago: a pass reads the
// last few hours' rows and nothing older. An hour's figures are therefore at most a
// pass behind, and final once it is Settle old; a row changed later than that (a call
// left in flight by a node stopped for longer) keeps the outcome it had then. The
// first pass after the tables appear starts from the oldest audit row and fills the
// history a day at a time. The figures of 24 hours read hours; those of 7 and 30 days
// read days, a twenty-fourth as many rows (BenchmarkOverview).
package usage

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/switchboard-hub/switchboard/audit"
)

const outcomeInFlight = audit.OutcomeInFlight

// notErrors are the outcomes of a tool call's row that are not errors: done, still
// running, or canceled by its caller.
var notErrors = []string{"ok", audit.OutcomeInFlight, "canceled"}

// Settle is how long after an hour ends its figures are recomputed by every pass:
// calls still running then are counted, and counted again once they finish.
const Settle = 2 * time.Hour

// passHours bounds the hours one step of a pass recomputes before it moves the
// watermark, so that filling a long history is resumable.
const passHours = 24

// rollupName is the watermark's row in usage_rollup.
const rollupName = "hourly"

// state is a row of usage_rollup: Settled is the Unix time of the first hour not
// settled.
type state struct {
	Name    string `gorm:"primaryKey;size:32"`
	Settled int64  `gorm:"not null"`
}

func (state) TableName() string { return "usage_rollup" }

// Rollup fills usage_hourly from the audit log's tool calls.
type Rollup struct {
	db  *gorm.DB
	log *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// NewRollup returns the job on db; log may be nil.
func NewRollup(db *gorm.DB, log *slog.Logger) *Rollup {
	if log == nil {
		log = slog.Default()
	}
	return &Rollup{db: db, log: log}
}

func (r *Rollup) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Run passes every interval until ctx ends, the first pass at once.
func (r *Rollup) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := r.Pass(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("usage rollup", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Pass recomputes every hour from the watermark to the current one, for every tenant,
// and moves the watermark to the hour that began Settle ago.
func (r *Rollup) Pass(ctx context.Context) error {
	now := r.now().UTC()
	end := now.Truncate(time.Hour).Add(time.Hour) // past the current hour
	settled := now.Add(-Settle).Truncate(time.Hour)
	from, ok, err := r.watermark(ctx)
	if err != nil {
		return err
	}
	if !ok {
		oldest, found, err := r.oldest(ctx)
		if err != nil {
			return err
		}
		if !found {
			return r.setWatermark(ctx, settled)
		}
		from = oldest.Truncate(time.Hour)
	}
	tenants, err := r.tenants(ctx)
	if err != nil {
		return err
	}
	for from.Before(end) {
		to := from.Add(passHours * time.Hour)
		if to.After(end) {
			to = end
		}
		for _, tenant := range tenants {
			for h := from; h.Before(to); h = h.Add(time.Hour) {
				if err := r.Hour(ctx, tenant, h); err != nil {
					return err
				}
			}
			for d := from.Truncate(day); d.Before(to); d = d.Add(day) {
				if err := r.Day(ctx, tenant, d); err != nil {
					return err
				}
			}
		}
		mark := to
		if mark.After(settled) {
			mark = settled
		}
		if err := r.setWatermark(ctx, mark); err != nil {
			return err
		}
		from = to
	}
	return nil
}

// Hour recomputes one tenant's figures of the hour that starts at hour from its audit
// rows.
func (r *Rollup) Hour(ctx context.Context, tenant string, hour time.Time) error {
	hour = hour.UTC().Truncate(time.Hour)
	cols := append([]string{"calls", "errors", "timed", "latency_sum"}, bucketColumns()...)
	sums := append([]string{
		"COUNT(*)",
		"SUM(CASE WHEN outcome NOT IN ('" + strings.Join(notErrors, "', '") + "') THEN 1 ELSE 0 END)",
		"SUM(CASE WHEN outcome <> '" + outcomeInFlight + "' THEN 1 ELSE 0 END)",
		"SUM(CASE WHEN outcome <> '" + outcomeInFlight + "' THEN COALESCE(latency_micros, 0) ELSE 0 END)",
	}, bucketSums()...)
	set := make([]string, len(cols))
	for i, c := range cols {
		set[i] = c + " = excluded." + c
	}
	insert := `INSERT INTO usage_hourly (tenant_id, hour, principal, connection_id, tool, ` + strings.Join(cols, ", ") + `) ` +
		`SELECT tenant_id, ?, principal, COALESCE(connection_id, ''), COALESCE(tool, ''), ` + strings.Join(sums, ", ") + ` ` +
		`FROM audit_events WHERE tenant_id = ? AND at >= ? AND at < ? AND kind = ? ` +
		`GROUP BY tenant_id, principal, COALESCE(connection_id, ''), COALESCE(tool, '') ` +
		`ON CONFLICT (tenant_id, hour, principal, connection_id, tool) DO UPDATE SET ` + strings.Join(set, ", ")
	// The delete takes groups whose rows are gone; the upsert, not a plain insert, lets
	// two nodes recompute the same hour at once.
	err := r.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(`DELETE FROM usage_hourly WHERE tenant_id = ? AND hour = ?`, tenant, hour.Unix()).Error; err != nil {
			return err
		}
		return tx.Exec(insert, hour.Unix(), tenant, hour, hour.Add(time.Hour), audit.KindToolCall).Error
	})
	if err != nil {
		return fmt.Errorf("usage of tenant %s at %s: %w", tenant, hour.Format(time.RFC3339), err)
	}
	return nil
}

// day is a day of usage_daily (UTC; Unix time has no leap seconds).
const day = 24 * time.Hour

// Day recomputes one tenant's figures of the day (UTC) that holds at from its hours.
func (r *Rollup) Day(ctx context.Context, tenant string, at time.Time) error {
	start := at.UTC().Truncate(day)
	cols := append([]string{"calls", "errors", "timed", "latency_sum"}, bucketColumns()...)
	sums := make([]string, len(cols))
	set := make([]string, len(cols))
	for i, c := range cols {
		sums[i] = "SUM(" + c + ")"
		set[i] = c + " = excluded." + c
	}
	insert := `INSERT INTO usage_daily (tenant_id, day, principal, connection_id, tool, ` + strings.Join(cols, ", ") + `) ` +
		`SELECT tenant_id, ?, principal, connection_id, tool, ` + strings.Join(sums, ", ") + ` ` +
		`FROM usage_hourly WHERE tenant_id = ? AND hour >= ? AND hour < ? ` +
		`GROUP BY tenant_id, principal, connection_id, tool ` +
		`ON CONFLICT (tenant_id, day, principal, connection_id, tool) DO UPDATE SET ` + strings.Join(set, ", ")
	err := r.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(`DELETE FROM usage_daily WHERE tenant_id = ? AND day = ?`, tenant, start.Unix()).Error; err != nil {
			return err
		}
		return tx.Exec(insert, start.Unix(), tenant, start.Unix(), start.Add(day).Unix()).Error
	})
	if err != nil {
		return fmt.Errorf("usage of tenant %s on %s: %w", tenant, start.Format(time.DateOnly), err)
	}
	return nil
}

func (r *Rollup) watermark(ctx context.Context) (time.Time, bool, error) {
	var rows []state
	if err := r.db.WithContext(ctx).Where("name = ?", rollupName).Limit(1).Find(&rows).Error; err != nil {
		return time.Time{}, false, fmt.Errorf("read the usage watermark: %w", err)
	}
	if len(rows) == 0 {
		return time.Time{}, false, nil
	}
	return time.Unix(rows[0].Settled, 0).UTC(), true, nil
}

// setWatermark moves the watermark to at, never back (another node may have passed
// further meanwhile).
func (r *Rollup) setWatermark(ctx context.Context, at time.Time) error {
	err := r.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "name"}},
		DoUpdates: clause.Set{{Column: clause.Column{Name: "settled"}, Value: gorm.Expr("CASE WHEN usage_rollup.settled > excluded.settled THEN usage_rollup.settled ELSE excluded.settled END")}},
	}).Create(&state{Name: rollupName, Settled: at.Unix()}).Error
	if err != nil {
		return fmt.Errorf("move the usage watermark: %w", err)
	}
	return nil
}

// tenants lists every tenant's id.
func (r *Rollup) tenants(ctx context.Context) ([]string, error) {
	var ids []string
	if err := r.db.WithContext(ctx).Table("tenants").Order("id").Pluck("id", &ids).Error; err != nil {
		return nil, fmt.Errorf("list tenants for the usage rollup: %w", err)
	}
	return ids, nil
}

// oldest is the time of the oldest audit row of any tenant, found through each tenant's
// (tenant, time) index.
func (r *Rollup) oldest(ctx context.Context) (time.Time, bool, error) {
	tenants, err := r.tenants(ctx)
	if err != nil {
		return time.Time{}, false, err
	}
	var first time.Time
	found := false
	for _, t := range tenants {
		var ats []time.Time
		if err := r.db.WithContext(ctx).Model(&audit.Event{}).Where("tenant_id = ?", t).Order("at").Limit(1).Pluck("at", &ats).Error; err != nil {
			return time.Time{}, false, fmt.Errorf("oldest audit row of tenant %s: %w", t, err)
		}
		if len(ats) == 1 && (!found || ats[0].Before(first)) {
			first, found = ats[0].UTC(), true
		}
	}
	return first, found, nil
}
