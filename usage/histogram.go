package usage

import (
	"fmt"
	"strings"
)

// Bounds are the upper bounds, in microseconds, of the latency histogram's buckets; a
// last bucket, unbounded, holds the calls slower than the last bound. They are fixed,
// so the buckets of any hours, agents, connections and tools add up, and a percentile
// of the sum is read from the sum.
var Bounds = []int64{5e3, 10e3, 25e3, 50e3, 100e3, 250e3, 500e3, 1e6, 2.5e6, 5e6, 10e6, 30e6, 60e6}

// Buckets is the number of buckets: one per bound and the unbounded one.
const Buckets = 14

// Histogram counts calls by latency, one count per bucket of Bounds.
type Histogram [Buckets]int64

// Add adds o's counts to h.
func (h *Histogram) Add(o *Histogram) {
	for i := range h {
		h[i] += o[i]
	}
}

// Count is how many calls h holds.
func (h *Histogram) Count() int64 {
	var n int64
	for _, c := range h {
		n += c
	}
	return n
}

// Quantile is the latency, in milliseconds, under which the fraction q of h's calls
// lie, interpolated linearly within the bucket where it falls; the unbounded bucket
// answers its lower bound. ok is false when h holds no call.
func (h *Histogram) Quantile(q float64) (ms float64, ok bool) {
	total := h.Count()
	if total == 0 {
		return 0, false
	}
	rank := q * float64(total)
	var seen int64
	for i, c := range h {
		if c == 0 {
			continue
		}
		if float64(seen+c) >= rank {
			lower := int64(0)
			if i > 0 {
				lower = Bounds[i-1]
			}
			if i == len(Bounds) {
				return float64(lower) / 1e3, true
			}
			within := (rank - float64(seen)) / float64(c)
			return (float64(lower) + within*float64(Bounds[i]-lower)) / 1e3, true
		}
		seen += c
	}
	return float64(Bounds[len(Bounds)-1]) / 1e3, true
}

// bucketColumns are usage_hourly's histogram columns, b00 to b13.
func bucketColumns() []string {
	cols := make([]string, Buckets)
	for i := range cols {
		cols[i] = fmt.Sprintf("b%02d", i)
	}
	return cols
}

// bucketSums are the SQL expressions that count an audit row into its bucket: one
// per column, a call still in flight in none.
func bucketSums() []string {
	sums := make([]string, Buckets)
	for i := range sums {
		var cond []string
		cond = append(cond, "outcome <> '"+outcomeInFlight+"'")
		if i > 0 {
			cond = append(cond, fmt.Sprintf("COALESCE(latency_micros, 0) > %d", Bounds[i-1]))
		}
		if i < len(Bounds) {
			cond = append(cond, fmt.Sprintf("COALESCE(latency_micros, 0) <= %d", Bounds[i]))
		}
		sums[i] = "SUM(CASE WHEN " + strings.Join(cond, " AND ") + " THEN 1 ELSE 0 END)"
	}
	return sums
}
