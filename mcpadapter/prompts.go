package mcpadapter

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
)

// The prompts every scope serves.
const (
	// instructionsPrompt holds an agent's instructions (agent URLs only).
	instructionsPrompt = "agent_instructions"
	// useToolPrompt asks the model to use one tool, on one account.
	useToolPrompt = "use_tool"
)

// maxCompletions bounds the values of one completion answer (the MCP limit is 100).
const maxCompletions = 100

// prompts returns the scope's prompts: use_tool everywhere, and the agent's
// instructions at an agent URL.
func (s *scope) prompts(st *scopeState) []server.ServerPrompt {
	use := mcp.NewPrompt(useToolPrompt,
		mcp.WithPromptDescription("Ask for a task to be done with one of this endpoint's tools, optionally on one connected account."),
		mcp.WithArgument("tool", mcp.ArgumentDescription("The tool to use"), mcp.RequiredArgument()),
		mcp.WithArgument("task", mcp.ArgumentDescription("What to do with it")),
		mcp.WithArgument(connectionArg, mcp.ArgumentDescription("The label of the account to use, when the tool runs on several")),
	)
	out := []server.ServerPrompt{{Prompt: use, Handler: s.useToolPrompt}}
	if st.agent != nil {
		p := mcp.NewPrompt(instructionsPrompt,
			mcp.WithPromptDescription(fmt.Sprintf("The instructions of agent %q: %s", st.agent.Name, st.agent.Description)),
			mcp.WithArgument("task", mcp.ArgumentDescription("A task to append to the instructions")),
		)
		p.Title = st.agent.Name
		out = append(out, server.ServerPrompt{Prompt: p, Handler: s.instructionsPrompt})
	}
	return out
}

func (s *scope) instructionsPrompt(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	st := s.state.Load()
	if st.agent == nil {
		return nil, fmt.Errorf("prompt %s: not an agent URL", instructionsPrompt)
	}
	text := st.agent.Instructions
	if task := strings.TrimSpace(req.Params.Arguments["task"]); task != "" {
		text += "\n\nTask: " + task
	}
	return mcp.NewGetPromptResult(st.agent.Description, []mcp.PromptMessage{
		mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text)),
	}), nil
}

func (s *scope) useToolPrompt(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	st := s.state.Load()
	name := req.Params.Arguments["tool"]
	t, ok := st.hub[name]
	if !ok {
		return nil, switchboard.Invalid("tool", fmt.Sprintf("%q is not a tool of this endpoint", name))
	}
	text := fmt.Sprintf("Use the tool %s (%s).", name, t.tool().Description)
	if label := req.Params.Arguments[connectionArg]; label != "" {
		if !slices.Contains(labelsOf(st.hub[name]), label) {
			return nil, switchboard.Invalid(connectionArg, fmt.Sprintf("%q is not an account %s runs on", label, name))
		}
		text += fmt.Sprintf(" Run it on the account %q.", label)
	}
	if task := strings.TrimSpace(req.Params.Arguments["task"]); task != "" {
		text += " Task: " + task
	}
	return mcp.NewGetPromptResult("Use "+name, []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text))}), nil
}

func labelsOf(t *hubTool) []string {
	if t == nil {
		return nil
	}
	out := make([]string, 0, len(t.binding.Connections))
	for _, c := range t.binding.Connections {
		out = append(out, c.Label)
	}
	return out
}

// promptCompleter completes prompt arguments: tool names, and account labels (of the
// tool named in the context, else of every tool).
type promptCompleter struct{ s *scope }

func (c promptCompleter) CompletePromptArgument(_ context.Context, prompt string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	st := c.s.state.Load()
	if prompt != useToolPrompt {
		return &mcp.Completion{Values: []string{}}, nil
	}
	switch arg.Name {
	case "tool":
		return complete(st.order, arg.Value), nil
	case connectionArg:
		if name := cc.Arguments["tool"]; name != "" {
			return complete(labelsOf(st.hub[name]), arg.Value), nil
		}
		return complete(allLabels(st), arg.Value), nil
	}
	return &mcp.Completion{Values: []string{}}, nil
}

// allLabels lists the labels of every connection the scope's tools run on.
func allLabels(st *scopeState) []string {
	seen := map[string]bool{}
	var out []string
	for _, name := range st.order {
		for _, l := range labelsOf(st.hub[name]) {
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	return out
}

// complete returns the candidates that start with prefix (case-insensitively), then
// those that contain it, at most maxCompletions.
func complete(candidates []string, prefix string) *mcp.Completion {
	p := strings.ToLower(prefix)
	var starts, contains []string
	for _, c := range candidates {
		l := strings.ToLower(c)
		switch {
		case strings.HasPrefix(l, p):
			starts = append(starts, c)
		case strings.Contains(l, p):
			contains = append(contains, c)
		}
	}
	all := append(starts, contains...)
	out := &mcp.Completion{Values: all, Total: len(all)}
	if len(all) > maxCompletions {
		out.Values, out.HasMore = all[:maxCompletions], true
	}
	if out.Values == nil {
		out.Values = []string{}
	}
	return out
}
