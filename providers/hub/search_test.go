package hub_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/hub"
	"github.com/switchboard-hub/switchboard/router"
)

type noteIn struct {
	Text string `json:"text" jsonschema:"The note's text"`
}

type noteOut struct {
	ID int `json:"id" jsonschema:"The note's id"`
}

// boundRouter is the router as tool search sees it: the caller's bindings, and the
// calls it was asked to execute.
type boundRouter struct {
	bindings []router.Binding
	executed []router.Request
	as       []switchboard.Principal
}

func (r *boundRouter) Tools(context.Context, switchboard.Principal) ([]router.Binding, error) {
	return r.bindings, nil
}

func (r *boundRouter) Execute(_ context.Context, p switchboard.Principal, req router.Request) (any, error) {
	r.executed = append(r.executed, req)
	r.as = append(r.as, p)
	return noteOut{ID: 7}, nil
}

// searchRig registers a notes provider and tool search, and binds the caller to the
// notes tools and to the search tools themselves.
func searchRig(t *testing.T) (*providers.Registry, *boundRouter) {
	t.Helper()
	reg := providers.NewRegistry()
	verify := func(context.Context, *providers.Call) (providers.Account, error) { return providers.Account{}, nil }
	notes := providers.Spec{Name: "notes", Title: "Notes", Verify: verify, Operations: []providers.Op{
		&providers.Operation[noteIn, noteOut]{Name: "create_note", Title: "Create note", Description: "Write a new note.", Hints: providers.Hints{}},
		&providers.Operation[noteIn, noteOut]{Name: "find_note", Title: "Find note", Description: "Look a note up by its words.", Hints: providers.Hints{ReadOnly: true}},
	}}
	if err := reg.Register(notes); err != nil {
		t.Fatal(err)
	}
	r := &boundRouter{}
	if err := (&hub.Tools{Search: r}).Register(reg); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"notes_create_note", "notes_find_note", providers.SearchToolName, providers.DescribeToolName, providers.CallToolName} {
		tool, ok := reg.Tool(name)
		if !ok {
			t.Fatalf("%s not registered", name)
		}
		b := router.Binding{Tool: tool}
		if !tool.Provider.Connectionless {
			b.Connections = []router.ConnectionRef{{ID: "con_n", Label: "alice@notes"}}
		}
		r.bindings = append(r.bindings, b)
	}
	return reg, r
}

func invoke(t *testing.T, ctx context.Context, reg *providers.Registry, name string, args string, confirmed bool) (any, error) {
	t.Helper()
	tool, ok := reg.Tool(name)
	if !ok {
		t.Fatalf("%s not registered", name)
	}
	if err := tool.Validate(json.RawMessage(args)); err != nil {
		return nil, err
	}
	p := switchboard.Principal{TenantID: "ten_a", Kind: switchboard.PrincipalAgent, UserID: "usr_a", AgentID: "agt_a"}
	return tool.Op.Invoke(ctx, &providers.Call{Tenant: "ten_a", Principal: p, Confirmed: confirmed}, json.RawMessage(args))
}

// TestSearchToolsAreProviderTools: tool search mode's tools are an ambient,
// connectionless provider's, and a call that came with no surface's scope (REST, a
// run) searches, describes and calls the caller's tools as the router binds them, the
// call going through the router as the caller, confirmed only when call_tool was.
func TestSearchToolsAreProviderTools(t *testing.T) {
	reg, r := searchRig(t)
	for _, name := range []string{providers.SearchToolName, providers.DescribeToolName, providers.CallToolName} {
		tool, _ := reg.Tool(name)
		if tool.Provider.Name != hub.SearchProvider || !tool.Provider.Connectionless || !tool.Provider.Ambient {
			t.Errorf("%s: provider %+v; want %s, connectionless and ambient", name, tool.Provider.Name, hub.SearchProvider)
		}
		if _, ok := tool.Op.(providers.ScopeSearcher); !ok {
			t.Errorf("%s does not act within the caller's scope", name)
		}
	}
	if tool, _ := reg.Tool(providers.CallToolName); tool.OutputSchema != nil {
		t.Errorf("call_tool declares output %s; its answer is the called tool's", tool.OutputSchema)
	}

	ctx := context.Background()
	out, err := invoke(t, ctx, reg, providers.SearchToolName, `{"query":"write"}`, false)
	if err != nil {
		t.Fatal(err)
	}
	found := out.(hub.SearchOutput)
	if found.Count != 1 || found.Tools[0].Name != "notes_create_note" || found.Tools[0].Description != "Write a new note." {
		t.Errorf("search: %+v; want notes_create_note alone", found)
	}
	if out, _ := invoke(t, ctx, reg, providers.SearchToolName, `{"query":"search tools call describe"}`, false); out.(hub.SearchOutput).Count != 0 {
		t.Errorf("search found the search tools themselves: %+v", out)
	}
	if _, err := invoke(t, ctx, reg, providers.SearchToolName, `{"query":"   "}`, false); switchboard.AsError(err).Field != "query" {
		t.Errorf("blank query: %v; want refused naming query", err)
	}

	def, err := invoke(t, ctx, reg, providers.DescribeToolName, `{"name":"notes_find_note"}`, false)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(def)
	var d struct {
		Name        string          `json:"name"`
		InputSchema map[string]any  `json:"inputSchema"`
		Annotations map[string]bool `json:"annotations"`
		Connections []string        `json:"connections"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if d.Name != "notes_find_note" || d.InputSchema["properties"] == nil || !d.Annotations["readOnlyHint"] || len(d.Connections) != 1 || d.Connections[0] != "alice@notes" {
		t.Errorf("describe: %s", raw)
	}
	if _, err := invoke(t, ctx, reg, providers.DescribeToolName, `{"name":"notes_delete_note"}`, false); switchboard.AsError(err).Field != "name" {
		t.Errorf("describe of a tool the caller lacks: %v; want refused naming name", err)
	}

	if _, err := invoke(t, ctx, reg, providers.CallToolName, `{"name":"notes_create_note","arguments":{"text":"hi"}}`, true); err != nil {
		t.Fatal(err)
	}
	if _, err := invoke(t, ctx, reg, providers.CallToolName, `{"name":"call_tool","arguments":{"name":"notes_create_note"}}`, false); switchboard.AsError(err).Field != "name" {
		t.Errorf("call_tool of itself: %v; want refused naming name", err)
	}
	if len(r.executed) != 1 {
		t.Fatalf("router executed %+v; want the one call", r.executed)
	}
	got := r.executed[0]
	if got.Tool != "notes_create_note" || string(got.Args) != `{"text":"hi"}` || !got.Confirmed || r.as[0].AgentID != "agt_a" {
		t.Errorf("router executed %+v as %+v; want notes_create_note {\"text\":\"hi\"}, confirmed, as the agent", got, r.as[0])
	}
}

// scopeStub is a surface's tool scope: what it answers is its own, not the router's.
type scopeStub struct{ called []string }

func (s *scopeStub) SearchTools(string, int) []providers.ScopedTool {
	return []providers.ScopedTool{{Name: "listed_here", Description: "as this URL lists it", Score: 1}}
}
func (s *scopeStub) DescribeTool(name string) (any, bool) {
	return map[string]string{"name": name}, true
}
func (s *scopeStub) CallTool(_ context.Context, name string, _ json.RawMessage, _ bool) (any, error) {
	s.called = append(s.called, name)
	return &providers.ContentResult{}, nil
}

// TestSearchToolsUseTheSurfacesScope: a call that came through a surface with a scope
// of its own (an MCP URL) searches and calls within that scope, not the router's.
func TestSearchToolsUseTheSurfacesScope(t *testing.T) {
	reg, r := searchRig(t)
	s := &scopeStub{}
	ctx := providers.WithToolScope(context.Background(), s)
	out, err := invoke(t, ctx, reg, providers.SearchToolName, `{"query":"note"}`, false)
	if err != nil {
		t.Fatal(err)
	}
	if found := out.(hub.SearchOutput); found.Count != 1 || found.Tools[0].Name != "listed_here" {
		t.Errorf("search: %+v; want the scope's answer", found)
	}
	if _, err := invoke(t, ctx, reg, providers.CallToolName, `{"name":"notes_find_note"}`, false); err != nil {
		t.Fatal(err)
	}
	if len(s.called) != 1 || s.called[0] != "notes_find_note" || len(r.executed) != 0 {
		t.Errorf("scope called %v, router executed %+v; want the scope to run it", s.called, r.executed)
	}
}

// TestCallToolPicksTheAccount: without a surface's scope, call_tool runs a tool on the
// account its arguments name (by label), taken out of the tool's own arguments, and a
// caller with several accounts who names none is asked to, each account listed.
func TestCallToolPicksTheAccount(t *testing.T) {
	reg, r := searchRig(t)
	for i, b := range r.bindings {
		if b.Tool.Name == "notes_create_note" {
			r.bindings[i].Connections = []router.ConnectionRef{{ID: "con_h", Label: "home"}, {ID: "con_w", Label: "work"}}
		}
	}
	ctx := context.Background()
	_, err := invoke(t, ctx, reg, providers.CallToolName, `{"name":"notes_create_note","arguments":{"text":"hi"}}`, false)
	if e := switchboard.AsError(err); e.Field != "arguments.connection" || !strings.Contains(e.Message, `"home", "work"`) {
		t.Errorf("no account named: %v; want refused naming arguments.connection and both accounts", err)
	}
	if _, err := invoke(t, ctx, reg, providers.CallToolName, `{"name":"notes_create_note","arguments":{"text":"hi","connection":"work"}}`, false); err != nil {
		t.Fatal(err)
	}
	if len(r.executed) != 1 || r.executed[0].ConnectionID != "con_w" || string(r.executed[0].Args) != `{"text":"hi"}` {
		t.Errorf("router executed %+v; want notes_create_note on con_w with the account taken out of its arguments", r.executed)
	}
}
