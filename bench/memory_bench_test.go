package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers"
)

// memory is the hub process's memory at one moment, after a full garbage collection
// that returned what it freed to the system: the live Go heap, the goroutine stacks and
// the resident set.
type memory struct {
	heap, stacks, rss uint64
}

func measureMemory(b *testing.B) memory {
	b.Helper()
	runtime.GC() // the next collects what this one's finalizers released
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memory{heap: ms.HeapAlloc, stacks: ms.StackInuse, rss: residentBytes(b)}
}

// residentBytes is VmRSS from /proc/self/status.
func residentBytes(b *testing.B) uint64 {
	b.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc/self/status (not Linux): %v", err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatalf("VmRSS %q: %v", v, err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// envHeapProfile names a directory: when set, each memory benchmark writes there a
// heap profile of the hub at its largest size, for `go tool pprof -sample_index=inuse_space`.
const envHeapProfile = "SWITCHBOARD_BENCH_HEAP_PROFILE"

func writeHeapProfile(b *testing.B) {
	b.Helper()
	dir := os.Getenv(envHeapProfile)
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, strings.NewReplacer("/", "_", "=", "-").Replace(b.Name())+".heap"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// reportGrowth reports what the hub gained between before and after, per unit.
func reportGrowth(b *testing.B, before, after memory, units int, unit string) {
	b.Helper()
	perHeap := (float64(after.heap) - float64(before.heap)) / float64(units)
	perRSS := (float64(after.rss) - float64(before.rss)) / float64(units)
	b.ReportMetric(perHeap, "heap-B/"+unit)
	b.ReportMetric(perRSS, "rss-B/"+unit)
	b.ReportMetric((float64(after.stacks)-float64(before.stacks))/float64(units), "stack-B/"+unit)
	b.ReportMetric(float64(after.heap)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(after.rss)/(1<<20), "rss-MiB")
}

// tenantProviders are the five accounts each tenant of BenchmarkMemoryTenants connects:
// GitHub (connected and verified as a person would) and four more providers.
var tenantProviders = []string{"github", "slack", "notion", "linear", "jira"}

// newTenantWithConnections makes a tenant with its owner and API key and connects its
// tenantProviders, each account labelled after the tenant (as real accounts differ).
func (h *hub) newTenantWithConnections(slug string) (*hub, error) {
	ctx := context.Background()
	tenant, owner, key, _, err := h.tenants.CreateTenantWithOwner(ctx, slug, slug, "owner@"+slug+".example")
	if err != nil {
		return nil, err
	}
	p, err := h.tenants.Authenticate(ctx, key)
	if err != nil {
		return nil, err
	}
	if _, err := h.conns.Connect(ctx, p, connections.ConnectInput{Provider: "github", Token: "ghp_" + slug}); err != nil {
		return nil, err
	}
	for _, prov := range tenantProviders[1:] {
		c := &connections.Connection{OwnerUserID: owner.ID, Provider: prov, AuthKind: providers.AuthAPIKey,
			AccountID: slug, AccountLabel: slug + " " + prov, Status: connections.StatusActive}
		if err := h.cstore.Create(ctx, tenant.ID, c, connections.Credentials{AccessToken: "t-" + slug}); err != nil {
			return nil, err
		}
	}
	other := *h
	other.mcpURL = h.base + "/mcp/" + tenant.Slug
	other.key = key
	return &other, nil
}

// BenchmarkMemoryTenants grows one hub to 1,000 and then 10,000 tenants, each with its
// owner, API key and five connections (GitHub, Slack, Notion, Linear, Jira: rows in
// SQLite, 103 tools), each used once: an MCP session initialized and github_get_issue
// called through it, so the hub holds whatever it keeps per used tenant (the key cache,
// the scope's MCP server with its tools, the session, the connection's credentials and
// HTTP client). Reported at each size: the heap and RSS gained per tenant since before
// the first, and the totals. SWITCHBOARD_BENCH_TENANTS=1000 stops at the first size.
func BenchmarkMemoryTenants(b *testing.B) {
	for range b.N {
		h := newHub(b)
		s := h.session(b)
		if err := s.callTool(); err != nil {
			b.Fatal(err)
		}
		before := measureMemory(b)
		made := 0
		sizes := []int{1000, 10000}
		if os.Getenv("SWITCHBOARD_BENCH_TENANTS") == "1000" {
			sizes = sizes[:1]
		}
		for _, n := range sizes {
			var next atomic.Int64
			next.Store(int64(made))
			// Eight makers at once: tenants are made through the stores, then used over HTTP.
			run(b, n-made, 8, func(int) error {
				i := next.Add(1)
				t, err := h.newTenantWithConnections(fmt.Sprintf("mem-%05d", i))
				if err != nil {
					return err
				}
				s, err := t.newSession()
				if err != nil {
					return err
				}
				return s.callTool()
			})
			made = n
			if err := h.audit.Flush(b.Context()); err != nil {
				b.Fatal(err)
			}
			after := measureMemory(b)
			if n == sizes[len(sizes)-1] {
				writeHeapProfile(b)
			}
			b.Run(fmt.Sprintf("tenants=%d", n), func(b *testing.B) {
				reportGrowth(b, before, after, n, "tenant")
			})
		}
	}
}

// BenchmarkMemoryIdleSessions opens 1,000 and then 10,000 MCP sessions of one key over a
// few pooled HTTP connections and leaves them idle, in two ways: initialized only
// (initialize and notifications/initialized), and used once (one tools/list after that,
// which brings the session into the scope's MCP server, where it stays until it has
// been idle long enough or the node holds too many). Reported per way and size: the heap
// and RSS gained per session.
func BenchmarkMemoryIdleSessions(b *testing.B) {
	for _, used := range []bool{false, true} {
		name := "initialized"
		if used {
			name = "used-once"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				h := newHub(b)
				warm := h.session(b)
				if err := warm.list(`{}`); err != nil {
					b.Fatal(err)
				}
				before := measureMemory(b)
				var open []*session
				for _, n := range []int{1000, 10000} {
					more := make([]*session, n-len(open))
					var next atomic.Int64
					run(b, len(more), 16, func(int) error {
						i := next.Add(1) - 1
						s, err := h.newSession()
						if err != nil {
							return err
						}
						if used {
							if err := s.list(`{}`); err != nil {
								return err
							}
						}
						more[i] = s
						return nil
					})
					open = append(open, more...)
					after := measureMemory(b)
					if n == 10000 {
						writeHeapProfile(b)
					}
					b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
						reportGrowth(b, before, after, n, "session")
					})
				}
				runtime.KeepAlive(open)
			}
		})
	}
}

// BenchmarkMemoryConnections holds 1,000, 4,000 and 10,000 idle HTTP connections open to
// one hub, each with its own MCP session initialized over it, from a client process of
// their own. Reported per size: the hub process's heap and RSS gained per connection
// (its session included; BenchmarkMemoryIdleSessions gives a session alone).
func BenchmarkMemoryConnections(b *testing.B) {
	for _, n := range []int{1000, 4000, 10000} {
		b.Run(fmt.Sprintf("connections=%d", n), func(b *testing.B) {
			for range b.N {
				h := newHub(b)
				warm := h.session(b)
				if err := warm.list(`{}`); err != nil {
					b.Fatal(err)
				}
				before := measureMemory(b)
				clients := startClients(b, h, n)
				after := measureMemory(b)
				writeHeapProfile(b)
				clients.stop(b)
				reportGrowth(b, before, after, n, "connection")
			}
		})
	}
}
