package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/catalog"
)

// newTenantWithCatalog makes a tenant with its owner and API key and connects every
// API of the built-in catalog, each account labelled after the tenant.
func (h *hub) newTenantWithCatalog(slug string, specs []providers.Spec) (*hub, error) {
	ctx := context.Background()
	tenant, owner, key, _, err := h.tenants.CreateTenantWithOwner(ctx, slug, slug, "owner@"+slug+".example")
	if err != nil {
		return nil, err
	}
	for _, s := range specs {
		c := &connections.Connection{OwnerUserID: owner.ID, Provider: s.Name, AuthKind: providers.AuthAPIKey,
			AccountID: slug, AccountLabel: slug + " " + s.Name, Status: connections.StatusActive}
		if err := h.cstore.Create(ctx, tenant.ID, c, connections.Credentials{AccessToken: "t-" + slug}); err != nil {
			return nil, err
		}
	}
	other := *h
	other.mcpURL = h.base + "/mcp/" + tenant.Slug
	other.key = key
	return &other, nil
}

// BenchmarkMemoryTenantsCatalog grows one hub with the built-in catalog registered to
// 50 and then 200 tenants, each with its owner, API key and a connection to every
// catalog API (30 rows in SQLite, 363 tools), each used once as a client would: an MCP
// session initialized, tools/list (search mode, the default past the tool budget) and
// one search_tools call, so the hub holds whatever it keeps per used tenant with the
// whole catalog available (the key cache, the scope's MCP server with its tools and
// search index, the session). Reported at each size: the heap and RSS gained per
// tenant since before the first, and the totals (the catalog's providers themselves
// are shared by every tenant). SWITCHBOARD_BENCH_TENANTS=50 stops at the first size.
func BenchmarkMemoryTenantsCatalog(b *testing.B) {
	specs, err := catalog.Specs(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		h := buildHub(b, false, specs...) // its own tenant connects every catalog API too
		if err := useCatalog(h); err != nil {
			b.Fatal(err)
		}
		before := measureMemory(b)
		made := 0
		sizes := []int{50, 200}
		if os.Getenv("SWITCHBOARD_BENCH_TENANTS") == "50" {
			sizes = sizes[:1]
		}
		for _, n := range sizes {
			var next atomic.Int64
			next.Store(int64(made))
			run(b, n-made, 4, func(int) error {
				t, err := h.newTenantWithCatalog(fmt.Sprintf("mem-%05d", next.Add(1)), specs)
				if err != nil {
					return err
				}
				return useCatalog(t)
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

// useCatalog opens a session of the tenant, lists its tools and searches them once.
func useCatalog(t *hub) error {
	s, err := t.newSession()
	if err != nil {
		return err
	}
	if err := s.list(`{}`); err != nil {
		return err
	}
	res, err := s.rpc("tools/call", `{"name":"search_tools","arguments":{"query":"send an email"}}`)
	if err != nil {
		return err
	}
	if !strings.Contains(string(res), "gmail_") {
		return fmt.Errorf("search_tools found no Gmail tool: %.300s", res)
	}
	return nil
}
