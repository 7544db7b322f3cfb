package conformancefixture

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// The diagnostic tools of the suite's stateless (2026-07-28) and SSE polling
// scenarios: each does what an ordinary tool may do (ask the client something, log,
// let its client poll, change what the server lists), and the scenarios judge how the
// hub carries it to the client.

// changes counts the changes of the dynamic tool and prompt (test_trigger_tool_change,
// test_trigger_prompt_change): each is listed with its count, so a change is a new
// definition the hub must tell listening clients of.
var toolChanges, promptChanges atomic.Int64

// refresh has the hub list a tenant's tools and prompts again; the binary wires it to
// the MCP adapter (SetRefresh).
var refresh atomic.Pointer[func(switchboard.TenantID)]

// SetRefresh gives the fixture the function that has the hub list a tenant's tools,
// prompts and resources again (mcpadapter.Adapter.Refresh).
func SetRefresh(f func(switchboard.TenantID)) { refresh.Store(&f) }

func statelessOperations() []providers.Op {
	return []providers.Op{
		op{name: "test_missing_capability", description: "Asks the client's model a question (sampling), which needs the client's sampling capability.",
			run: func(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
				var res map[string]any
				if err := ask(ctx, "sampling/createMessage", map[string]any{"maxTokens": 10,
					"messages": []map[string]any{{"role": "user", "content": map[string]any{"type": "text", "text": "ping"}}}}, &res); err != nil {
					return nil, err // the hub answers a missing capability as the protocol says
				}
				return result(text("sampled")), nil
			}},
		op{name: "test_streaming_elicitation", description: "Asks the user for a name (elicitation) and answers with the user's action.",
			run: func(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
				return elicit(ctx, "User response", "What is your name?", map[string]any{"type": "object",
					"properties": map[string]any{"name": str("Your name")}, "required": []string{"name"}})
			}},
		op{name: "test_logging_tool", description: "Sends a log message while it runs.",
			run: func(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
				if c := providers.CallerFrom(ctx); c != nil {
					c.Log(map[string]any{"level": "info", "logger": Provider, "data": "test_logging_tool ran"})
				}
				return result(text("logged")), nil
			}},
		op{name: "test_trigger_tool_change", description: "Changes the dynamic tool (test_dynamic_tool), so the tool list changes.",
			run: func(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
				return changed(ctx, &toolChanges, "tool")
			}},
		op{name: "test_trigger_prompt_change", description: "Changes the dynamic prompt (test_dynamic_prompt), so the prompt list changes.",
			run: func(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
				return changed(ctx, &promptChanges, "prompt")
			}},
		op{name: "test_reconnection", description: "Lets its client poll: the call's stream is closed before the answer, which the client gets by resuming it (SEP-1699).",
			run: func(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
				providers.ReleaseStream(ctx)
				pause(ctx)
				return result(text("Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.")), nil
			}},
	}
}

// changed counts a change of the dynamic tool or prompt and has the hub list the
// caller's tenant's tools and prompts again.
func changed(ctx context.Context, n *atomic.Int64, what string) (*providers.ContentResult, error) {
	p, ok := switchboard.PrincipalFrom(ctx)
	f := refresh.Load()
	if !ok || f == nil {
		return nil, fmt.Errorf("the fixture cannot change its %s here", what)
	}
	n.Add(1)
	(*f)(p.TenantID)
	return result(text(fmt.Sprintf("the dynamic %s changed", what))), nil
}

// dynamicTools is the extension's tool whose definition test_trigger_tool_change
// changes.
func dynamicTools() []server.ServerTool {
	t := mcp.NewTool("test_dynamic_tool", mcp.WithDescription(fmt.Sprintf("A tool the fixture changes (changed %d times).", toolChanges.Load())),
		mcp.WithReadOnlyHintAnnotation(true))
	return []server.ServerTool{{Tool: t, Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("dynamic"), nil
	}}}
}

// dynamicPrompt is the extension's prompt whose definition test_trigger_prompt_change
// changes.
func dynamicPrompt() server.ServerPrompt {
	return server.ServerPrompt{Prompt: mcp.NewPrompt("test_dynamic_prompt",
		mcp.WithPromptDescription(fmt.Sprintf("A prompt the fixture changes (changed %d times).", promptChanges.Load()))),
		Handler: func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("", []mcp.PromptMessage{user(mcp.NewTextContent("dynamic"))}), nil
		}}
}
