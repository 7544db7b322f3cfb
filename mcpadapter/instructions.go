package mcpadapter

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// instructionsHook completes the instructions an initialize (or server/discover) answers with the accounts
// the scope's tools run as (accountsLine), as the scope's last refresh has them. A tool
// with one connection used to say so in its own description; said once here, the tool
// definitions stay the same for every tenant and are shared (toolDef).
func (s *scope) instructionsHook(base string) server.ServerOption {
	return func(srv *server.MCPServer) {
		hooks := srv.GetHooks()
		if hooks == nil {
			hooks = &server.Hooks{}
			server.WithHooks(hooks)(srv)
		}
		hooks.AddAfterInitialize(func(_ context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
			if res != nil {
				res.Instructions = s.instructions(base)
			}
		})
		// The stateless 2026-07-28 version says them in server/discover.
		hooks.AddAfterDiscover(func(_ context.Context, _ any, _ *mcp.DiscoverRequest, res *mcp.DiscoverResult) {
			if res != nil {
				res.Instructions = s.instructions(base)
			}
		})
	}
}

// instructions are base, the note of a tool list served through search because it
// exceeds the tool budget, and the accounts line of the scope's last refresh.
func (s *scope) instructions(base string) string {
	st := s.state.Load()
	if st.overBudget > 0 {
		base += " " + budgetNote(st.overBudget, s.adapter.opts.ToolBudget)
	}
	if line := st.accountsLine(); line != "" {
		return base + " " + line
	}
	return base
}

// budgetNote says why a tenant URL lists search tools rather than its tools, how to
// use them, and how to get a plain list.
func budgetNote(tools, budget int) string {
	return fmt.Sprintf("This workspace has %d tools, more than the %d a tool list holds, so this URL serves them through search:"+
		" call %s with what you need, %s for a tool's parameters, and %s to run it."+
		" For a plain list, use an agent URL with the tools you need, or an admin can choose the tool mode in the MCP settings.",
		tools, budget, searchToolName, describeToolName, callToolName)
}

// accountsLine names the account each hub tool with a single connection runs as,
// by provider in registry order: `Each tool runs as one connected account: GitHub
// "octocat"; Slack "Acme".`. Where a provider's tools run on different accounts (an
// agent binding each tool to its own), the tools are named after each account.
func (st *scopeState) accountsLine() string {
	type account struct {
		provider, label string
		tools           []string
	}
	var accounts []*account
	byKey := map[string]*account{}
	providers := map[string]int{} // accounts per provider title
	for _, name := range st.order {
		t := st.hub[name]
		if t == nil || t.single == "" {
			continue
		}
		title := t.binding.Tool.Provider.Title
		label := t.binding.Connections[0].Label
		key := title + "\x00" + label
		a := byKey[key]
		if a == nil {
			a = &account{provider: title, label: label}
			byKey[key] = a
			accounts = append(accounts, a)
			providers[title]++
		}
		a.tools = append(a.tools, name)
	}
	if len(accounts) == 0 {
		return ""
	}
	parts := make([]string, 0, len(accounts))
	for _, a := range accounts {
		part := fmt.Sprintf("%s %q", a.provider, a.label)
		if providers[a.provider] > 1 {
			part += " (" + strings.Join(a.tools, ", ") + ")"
		}
		parts = append(parts, part)
	}
	return "Each tool runs as one connected account: " + strings.Join(parts, "; ") + "."
}
