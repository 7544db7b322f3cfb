package mcpadapter

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// tasksSince is the first protocol version with tasks (2025-11-25).
const tasksSince = mcp.ProtocolVersion20251125

// versionCapabilities narrows the capabilities a scope's server advertises to what
// the negotiated version serves: mcp-go advertises one set to every version, so a
// 2025-06-18 session was told of tasks its version does not define, and a
// 2026-07-28 client of logging and tasks.list, whose methods (logging/setLevel,
// tasks/list) that version removed and mcp-go answers with -32601, and of tasks as a
// capability of the core protocol rather than the extension that version makes them.
func versionCapabilities() server.ServerOption {
	return func(srv *server.MCPServer) {
		hooks := srv.GetHooks()
		if hooks == nil {
			hooks = &server.Hooks{}
			server.WithHooks(hooks)(srv)
		}
		hooks.AddAfterInitialize(func(_ context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
			if res != nil && res.ProtocolVersion < tasksSince {
				res.Capabilities.Tasks = nil
			}
		})
		hooks.AddAfterDiscover(func(_ context.Context, _ any, _ *mcp.DiscoverRequest, res *mcp.DiscoverResult) {
			if res == nil {
				return
			}
			res.Capabilities.Logging = nil
			if t := res.Capabilities.Tasks; t != nil {
				// Tasks are an extension on this version, negotiated in
				// capabilities.extensions (tasks/list is gone).
				narrowed := *t
				narrowed.List = nil
				ext := make(map[string]any, len(res.Capabilities.Extensions)+1)
				for k, v := range res.Capabilities.Extensions {
					ext[k] = v
				}
				ext[TasksExtension] = narrowed
				res.Capabilities.Extensions = ext
				res.Capabilities.Tasks = nil
			}
		})
	}
}
