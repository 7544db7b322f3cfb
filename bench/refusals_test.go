package bench

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"sync"
	"testing"
)

// refusal matches the tool error of a call refused before it ran, or before it sent
// anything to its upstream, and its advice.
var refusal = regexp.MustCompile(`nothing was (?:run|sent); retry in (\d+) s`)

// refusalReasons name a refusal by the words of its message (limits' and the
// router's), so that the benchmarks can say which rule refused what.
var refusalReasons = []struct{ words, reason string }{
	{"part of this server's tool calls under way", "over_part"},
	{"share of this server's tool calls waiting", "over_share"},
	{"tenant has too many tool calls waiting", "tenant_queue_full"},
	{"too many tool calls waiting)", "node_queue_full"},
	{"no place came free in time", "wait_exceeded"},
	{"audit log is not keeping up", "audit_behind"},
	{"as many as it allows, and as many more wait to go", "upstream_queue_full"},
	{"as many as it allows, and it has not answered the oldest", "upstream_slow"},
	{"as many as it allows, and none came back in time", "upstream_wait_exceeded"},
}

// refusalReason names the refusal whose message msg holds ("other" for none of the known).
func refusalReason(msg []byte) string {
	for _, r := range refusalReasons {
		if bytes.Contains(msg, []byte(r.words)) {
			return r.reason
		}
	}
	return "other"
}

// refusals counts refused calls by reason; safe for concurrent use.
type refusals struct {
	mu       sync.Mutex
	byReason map[string]int
}

func (r *refusals) add(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byReason == nil {
		r.byReason = map[string]int{}
	}
	r.byReason[reason]++
}

// addAll adds o's counts to r's.
func (r *refusals) addAll(o map[string]int) {
	for reason, n := range o {
		for range n {
			r.add(reason)
		}
	}
}

func (r *refusals) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.byReason {
		n += c
	}
	return n
}

// reasons are the reasons seen, sorted.
func (r *refusals) reasons() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	reasons := make([]string, 0, len(r.byReason))
	for reason := range r.byReason {
		reasons = append(reasons, reason)
	}
	sort.Strings(reasons)
	return reasons
}

func (r *refusals) of(reason string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byReason[reason]
}

// report reports the refusals per second over secs, in all (name-refused/s) and by
// reason (name-refused-REASON/s, the reasons seen only).
func (r *refusals) report(b *testing.B, name string, secs float64) {
	b.ReportMetric(float64(r.total())/secs, name+"-refused/s")
	for _, reason := range r.reasons() {
		b.ReportMetric(float64(r.of(reason))/secs, fmt.Sprintf("%s-refused-%s/s", name, reason))
	}
}
