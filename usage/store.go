package usage

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
)

// Range is a span of the figures: the last 24 hours, 7 days or 30 days.
type Range string

// The ranges.
const (
	Range24h Range = "24h"
	Range7d  Range = "7d"
	Range30d Range = "30d"
)

// Ranges are the ranges, shortest first.
var Ranges = []Range{Range24h, Range7d, Range30d}

// span is the range's length and the width of its buckets: hours over a day, days
// otherwise.
func (r Range) span() (length, step time.Duration, ok bool) {
	switch r {
	case Range24h:
		return 24 * time.Hour, time.Hour, true
	case Range7d:
		return 7 * 24 * time.Hour, 24 * time.Hour, true
	case Range30d:
		return 30 * 24 * time.Hour, 24 * time.Hour, true
	}
	return 0, 0, false
}

// ParseRange reads a range's name; "" is 24 hours.
func ParseRange(s string) (Range, error) {
	if s == "" {
		return Range24h, nil
	}
	r := Range(s)
	if _, _, ok := r.span(); !ok {
		return "", switchboard.Invalid("range", "must be 24h, 7d or 30d")
	}
	return r, nil
}

// Query says which calls the figures count.
type Query struct {
	Range Range
	// Principals, when not nil, keeps only the calls of these principals ("user:…",
	// "agent:…"): what the asker may see. An empty, non-nil list keeps nothing.
	Principals []string
	// ConnectionID, when set, keeps only the calls on that connection.
	ConnectionID string
}

// Figures are the counts of some calls.
type Figures struct {
	Calls  int64 `json:"calls"`
	Errors int64 `json:"errors"`
	// ErrorShare is Errors over Calls, 0 without calls.
	ErrorShare float64 `json:"error_share"`
	// P50Ms and P95Ms are the latencies, in milliseconds, under which half and 95 in
	// a hundred of the finished calls lie (from the histogram); absent without one.
	P50Ms *float64 `json:"p50_ms,omitempty"`
	P95Ms *float64 `json:"p95_ms,omitempty"`
	hist  Histogram
}

func (f *Figures) add(calls, errors int64, h *Histogram) {
	f.Calls += calls
	f.Errors += errors
	f.hist.Add(h)
}

func (f *Figures) finish() {
	if f.Calls > 0 {
		f.ErrorShare = float64(f.Errors) / float64(f.Calls)
	}
	if ms, ok := f.hist.Quantile(0.5); ok {
		f.P50Ms = &ms
	}
	if ms, ok := f.hist.Quantile(0.95); ok {
		f.P95Ms = &ms
	}
}

// Bucket is the figures of one hour or day.
type Bucket struct {
	Start time.Time `json:"start"`
	Figures
}

// ToolFigures is the figures of one tool.
type ToolFigures struct {
	Tool string `json:"tool"`
	Figures
}

// Overview is the figures of a range: in total, per bucket (oldest first, every bucket
// of the range, empty ones too) and for the most called tools.
type Overview struct {
	Range Range     `json:"range"`
	From  time.Time `json:"from"`
	To    time.Time `json:"to"`
	// Step is the buckets' width: "hour" or "day".
	Step  string  `json:"step"`
	Total Figures `json:"total"`
	// Buckets cover From to To.
	Buckets []Bucket `json:"buckets"`
	// TopTools are the tools called most, most first, at most TopTools.
	TopTools []ToolFigures `json:"top_tools"`
}

// TopTools is how many tools an Overview names.
const TopTools = 10

// Store reads usage_hourly and usage_daily.
type Store struct {
	db *gorm.DB
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// NewStore returns a Store on db.
func NewStore(db *gorm.DB) *Store { return &Store{db: db} }

// Overview returns the figures of the tenant's calls that q keeps, over q's range up
// to the end of the current hour (days end at midnight UTC).
func (s *Store) Overview(ctx context.Context, tenant switchboard.TenantID, q Query) (Overview, error) {
	length, step, ok := q.Range.span()
	if !ok {
		return Overview{}, switchboard.Invalid("range", "must be 24h, 7d or 30d")
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	to := now.UTC().Truncate(step).Add(step)
	from := to.Add(-length)
	o := Overview{Range: q.Range, From: from, To: to, Step: "hour", Buckets: []Bucket{}, TopTools: []ToolFigures{}}
	if step == 24*time.Hour {
		o.Step = "day"
	}
	for t := from; t.Before(to); t = t.Add(step) {
		o.Buckets = append(o.Buckets, Bucket{Start: t})
	}
	if q.Principals != nil && len(q.Principals) == 0 {
		o.Total.finish()
		return o, nil
	}
	// Days are read from usage_daily, hours from usage_hourly; t is the time column.
	table, t := "usage_hourly", "hour"
	if step == 24*time.Hour {
		table, t = "usage_daily", "day"
	}
	where := []string{"tenant_id = ?", t + " >= ?", t + " < ?"}
	args := []any{string(tenant), from.Unix(), to.Unix()}
	if q.Principals != nil {
		where = append(where, "principal IN ?")
		args = append(args, q.Principals)
	}
	if q.ConnectionID != "" {
		where = append(where, "connection_id = ?")
		args = append(args, q.ConnectionID)
	}
	// PostgreSQL sums bigints as numeric: cast back.
	sums := "CAST(SUM(calls) AS BIGINT), CAST(SUM(errors) AS BIGINT)"
	for _, c := range bucketColumns() {
		sums += ", CAST(SUM(" + c + ") AS BIGINT)"
	}
	cond := strings.Join(where, " AND ")

	db := s.db.WithContext(ctx)
	rows, err := db.Raw(`SELECT `+t+`, `+sums+` FROM `+table+` WHERE `+cond+` GROUP BY `+t, args...).Rows()
	if err != nil {
		return Overview{}, switchboard.Internal(fmt.Errorf("usage per hour: %w", err))
	}
	err = scanSums(rows, func(start int64, calls, errors int64, h *Histogram) {
		i := int(time.Unix(start, 0).Sub(from) / step)
		if i >= 0 && i < len(o.Buckets) {
			o.Buckets[i].add(calls, errors, h)
			o.Total.add(calls, errors, h)
		}
	})
	if err != nil {
		return Overview{}, switchboard.Internal(fmt.Errorf("usage per hour: %w", err))
	}
	for i := range o.Buckets {
		o.Buckets[i].finish()
	}
	o.Total.finish()

	rows, err = db.Raw(`SELECT tool, `+sums+` FROM `+table+` WHERE `+cond+` GROUP BY tool ORDER BY SUM(calls) DESC, tool LIMIT ?`, append(args, TopTools)...).Rows()
	if err != nil {
		return Overview{}, switchboard.Internal(fmt.Errorf("usage per tool: %w", err))
	}
	var tools []ToolFigures
	err = scanSums(rows, func(tool string, calls, errors int64, h *Histogram) {
		t := ToolFigures{Tool: tool}
		t.add(calls, errors, h)
		t.finish()
		tools = append(tools, t)
	})
	if err != nil {
		return Overview{}, switchboard.Internal(fmt.Errorf("usage per tool: %w", err))
	}
	if tools != nil {
		o.TopTools = tools
	}
	return o, nil
}

// rowScanner is what scanSums reads: *sql.Rows.
type rowScanner interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// scanSums reads rows of a key, the sums of calls and errors, and the histogram's sums.
func scanSums[K any](rows rowScanner, each func(key K, calls, errors int64, h *Histogram)) error {
	defer func() { _ = rows.Close() }()
	var key K
	var calls, errors int64
	var h Histogram
	dest := []any{&key, &calls, &errors}
	for i := range h {
		dest = append(dest, &h[i])
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		each(key, calls, errors, &h)
	}
	return rows.Err()
}
