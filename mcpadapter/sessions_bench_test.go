package mcpadapter

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/sessions"
)

// abandonedInitializes is how many initializes the benchmark sends, none followed by a call.
const abandonedInitializes = 60000

// BenchmarkAbandonedInitializes measures what initializes never followed by a call hold:
// 60,000 of them from one key (the cap of 100 sessions per principal holds it), and
// 60,000 spread over 600 keys (100 each, under the cap: every record lives until the
// 2-minute TTL for unused sessions ends it), and the same with one tools/list each (the
// node then holds each session in memory until it has gone 2 minutes without a
// request, at most MaxHeldSessions of them). The sessions are recorded in SQLite, as a
// single-node hub does. Reported: heap (after GC) grown by the 60,000, per session at the
// peak, and what remains after the sweep; the process's RSS at the end.
func BenchmarkAbandonedInitializes(b *testing.B) {
	for range b.N {
		b.Run("one key", func(b *testing.B) { abandon(b, 1, false) })
		b.Run("600 keys", func(b *testing.B) { abandon(b, 600, false) })
		b.Run("600 keys, one call each", func(b *testing.B) { abandon(b, 600, true) })
	}
}

// abandon runs one scenario; with use, each initialize is followed by one tools/list
// (the session is then held on the node until it has been unused for 2 minutes).
func abandon(b *testing.B, keyCount int, use bool) {
	reg := providers.NewRegistry()
	if err := reg.Register(notesSpec()); err != nil {
		b.Fatal(err)
	}
	conns := &memConns{}
	conns.set(connections.Connection{ID: "con_a", TenantID: "ten_a", OwnerUserID: "usr_0", Provider: "notes", AccountLabel: "a", Status: connections.StatusActive, Shared: true})
	auth := keys{}
	for i := range keyCount {
		auth["key-"+strconv.Itoa(i)] = switchboard.Principal{TenantID: "ten_a", TenantSlug: "acme", Kind: switchboard.PrincipalUser, UserID: "usr_" + strconv.Itoa(i)}
	}
	clock := &fakeClock{t: time.Now()}
	a := New(Options{Router: router.New(router.Options{Registry: reg, Connections: conns}), Auth: auth,
		Sessions: sessions.NewStore(testdb.SQLite(b)), Now: clock.Now})
	b.Cleanup(func() { a.Close(b.Context()) })
	post := func(key, session, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/mcp/acme", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+key)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		}
		w := httptest.NewRecorder()
		a.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("post: %d %s", w.Code, w.Body)
		}
		return w
	}
	initialize := func(key string) {
		id := post(key, "", initBody).Header().Get("Mcp-Session-Id")
		if id == "" {
			b.Fatal("initialize gave no session id")
		}
		if use {
			post(key, id, listBody)
		}
	}
	// Every key's scope (its MCP server) exists before the baseline: what is measured
	// is the sessions.
	for key := range auth {
		initialize(key)
	}
	clock.Add(3 * time.Minute)
	a.Sweep(clock.Now())
	base := heap()

	b.ResetTimer()
	for i := range abandonedInitializes {
		initialize("key-" + strconv.Itoa(i%keyCount))
	}
	b.StopTimer()
	peak := heap()
	b.ReportMetric(float64(held(a)), "sessions-held")
	clock.Add(3 * time.Minute)
	a.Sweep(clock.Now())
	after := heap()

	grown := float64(peak) - float64(base)
	b.ReportMetric(grown/(1<<20), "MiB-heap-after-60k")
	b.ReportMetric(grown/abandonedInitializes/1024, "KiB-heap/initialize")
	b.ReportMetric((float64(after)-float64(base))/(1<<20), "MiB-heap-after-sweep")
	if rss := rssBytes(); rss > 0 {
		b.ReportMetric(float64(rss)/(1<<20), "MiB-RSS")
	}
	// The stated bounds: one key holds at most its cap; spread keys hold nothing past
	// the unused TTL. 16 MiB leaves room for the allocator's and SQLite's caches.
	const bound = 16 << 20
	// Sessions in use are held up to MaxHeldSessions (10,000) at about 10.4 KiB each.
	if use && grown > 160<<20 {
		b.Errorf("60,000 sessions used once grew the heap by %.1f MiB, over the 160 MiB bound", grown/(1<<20))
	}
	if !use && grown > bound {
		b.Errorf("60,000 abandoned initializes grew the heap by %.1f MiB, over the %d MiB bound", grown/(1<<20), bound>>20)
	}
	if float64(after)-float64(base) > bound {
		b.Errorf("after the sweep the heap is %.1f MiB over its baseline, over the %d MiB bound", (float64(after)-float64(base))/(1<<20), bound>>20)
	}
}

// held is the number of sessions the adapter's servers hold.
func held(a *Adapter) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, s := range a.scopes {
		n += s.ep.LiveCount()
	}
	return n
}

func heap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// rssBytes is the process's resident set after returning free memory to the system
// (Linux; 0 elsewhere).
func rssBytes() uint64 {
	debug.FreeOSMemory()
	raw, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, resident uint64
	if _, err := fmt.Sscan(string(raw), &size, &resident); err != nil {
		return 0
	}
	return resident * uint64(os.Getpagesize())
}

// BenchmarkSessionRequest measures a tools/list on a recorded session (SQLite): on the
// node that holds it, and on a node that restores it first (its state dropped before
// each request, as on a node the session has not reached yet).
func BenchmarkSessionRequest(b *testing.B) {
	for _, restore := range []bool{false, true} {
		name := "held"
		if restore {
			name = "restored"
		}
		b.Run(name, func(b *testing.B) {
			reg := providers.NewRegistry()
			if err := reg.Register(notesSpec()); err != nil {
				b.Fatal(err)
			}
			conns := &memConns{}
			conns.set(connections.Connection{ID: "con_a", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "notes", AccountLabel: "a", Status: connections.StatusActive})
			a := New(Options{Router: router.New(router.Options{Registry: reg, Connections: conns}), Auth: keys{"key-alice": alice},
				Sessions: sessions.NewStore(testdb.SQLite(b))})
			b.Cleanup(func() { a.Close(b.Context()) })
			post := func(id, body string) *httptest.ResponseRecorder {
				req := httptest.NewRequest(http.MethodPost, "/mcp/acme", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Authorization", "Bearer key-alice")
				if id != "" {
					req.Header.Set("Mcp-Session-Id", id)
					req.Header.Set("MCP-Protocol-Version", "2025-06-18")
				}
				w := httptest.NewRecorder()
				a.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("post: %d %s", w.Code, w.Body)
				}
				return w
			}
			id := post("", initBody).Header().Get("Mcp-Session-Id")
			post(id, listBody)
			var s *scope
			for _, sc := range a.scopes {
				s = sc
			}
			b.ResetTimer()
			for range b.N {
				if restore {
					b.StopTimer()
					s.ep.DropLocal(id)
					b.StartTimer()
				}
				post(id, listBody)
			}
		})
	}
}
