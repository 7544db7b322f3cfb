package bench

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/mcpadapter"
)

// latencyPath is where the hub's process of the overload benchmarks answers the
// latencies its handler recorded (see handlerLatency); the hub itself has no such
// route.
const latencyPath = "/_bench/latency"

// handlerLatency times each MCP POST in the hub's process, from the moment the server
// hands it to the hub's handler to the moment the handler returns, by the tenant slug
// in its URL. The noisy-neighbour benchmarks read the quiet tenant's: its time inside
// the hub, apart from the time its requests and answers spend in the kernel and in the
// callers' process, which every tenant's calls share on this machine.
type handlerLatency struct {
	mu  sync.Mutex
	lat map[string][]time.Duration
}

// wrap serves h, timing its MCP POSTs, and answers latencyPath.
func (l *handlerLatency) wrap(h http.Handler) http.Handler {
	l.lat = map[string][]time.Duration{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == latencyPath {
			l.take(w, r)
			return
		}
		start := time.Now()
		h.ServeHTTP(w, r)
		slug, ok := strings.CutPrefix(r.URL.Path, mcpadapter.Prefix)
		if !ok || r.Method != http.MethodPost {
			return
		}
		d := time.Since(start)
		l.mu.Lock()
		l.lat[slug] = append(l.lat[slug], d)
		l.mu.Unlock()
	})
}

// take answers the latencies of ?tenant= recorded since the last take, in
// nanoseconds, as a JSON array, and forgets every tenant's.
func (l *handlerLatency) take(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	lat := l.lat[r.URL.Query().Get("tenant")]
	l.lat = map[string][]time.Duration{}
	l.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(lat)
}

// handlerLatencies takes, from the hub's process, the handler latencies of h's tenant
// since the last take (see handlerLatency).
func (h *hub) handlerLatencies(b *testing.B) []time.Duration {
	b.Helper()
	slug := h.mcpURL[strings.LastIndex(h.mcpURL, "/")+1:]
	resp, err := h.client.Get(h.base + latencyPath + "?tenant=" + slug)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var lat []time.Duration
	if err := json.NewDecoder(resp.Body).Decode(&lat); err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("the hub's latencies: HTTP %d: %v", resp.StatusCode, err)
	}
	return lat
}
