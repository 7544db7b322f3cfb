package mcpadapter

import (
	"context"
	"testing"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers/catalog"
	"github.com/switchboard-hub/switchboard/router"
)

// TestCatalogToolsListBytes measures the real tools/list of a tenant that connected
// every API of the built-in catalog: by default (past the tool budget) the tenant URL
// serves search mode, whose list is the three search tools, a small fraction of the
// full listing of every default tool (paged), which the tenant gets by choosing it
// (here: no budget). The bytes are logged for docs/performance.md.
func TestCatalogToolsListBytes(t *testing.T) {
	t.Parallel()
	specs, err := catalog.Specs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	withCatalog := func(budget int) *env {
		e := newEnvWith(t, func(o *Options) { o.ToolBudget = budget }, func(o *router.Options) {
			for _, s := range specs {
				if err := o.Registry.Register(s); err != nil {
					t.Fatal(err)
				}
			}
		})
		var conns []connections.Connection
		for _, s := range specs {
			conns = append(conns, connections.Connection{ID: "con_" + s.Name, TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: s.Name, AccountLabel: s.Title, Status: connections.StatusActive})
		}
		e.conns.set(conns...)
		return e
	}
	measure := func(e *env) (tools, bytes, pages int) {
		ps := listAll(t, e, "/mcp/acme", "key-alice", "tools/list", "tools")
		for _, p := range ps {
			tools += len(p.names)
			bytes += p.bytes
		}
		return tools, bytes, len(ps)
	}
	searchTools, searchBytes, _ := measure(withCatalog(DefaultToolBudget))
	fullTools, fullBytes, fullPages := measure(withCatalog(-1))
	t.Logf("tools/list of a tenant with all %d catalog APIs connected: search mode (the default past the budget of %d) %d tools, %d bytes; the full listing %d tools, %d bytes in %d pages",
		len(specs), DefaultToolBudget, searchTools, searchBytes, fullTools, fullBytes, fullPages)
	if searchTools != 3 {
		t.Errorf("search mode lists %d tools, want the 3 search tools", searchTools)
	}
	if fullTools < 300 {
		t.Errorf("the full listing holds %d tools, want every default tool of the catalog (over 300)", fullTools)
	}
	if searchBytes*50 > fullBytes {
		t.Errorf("search mode's list is %d bytes, the full one %d: want under a fiftieth", searchBytes, fullBytes)
	}
}
