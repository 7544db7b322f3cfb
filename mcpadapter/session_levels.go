package mcpadapter

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard/mcptransport"
)

// levelHooks record the log level a client sets, for the nodes that restore the
// session and those that hold it already.
func (s *scope) levelHooks() server.ServerOption {
	return func(srv *server.MCPServer) {
		hooks := srv.GetHooks()
		if hooks == nil {
			hooks = &server.Hooks{}
			server.WithHooks(hooks)(srv)
		}
		hooks.AddAfterSetLevel(func(ctx context.Context, _ any, req *mcp.SetLevelRequest, _ *mcp.EmptyResult) {
			sess := server.ClientSessionFromContext(ctx)
			if sess == nil || req == nil || mcptransport.InternalCall(ctx) {
				return
			}
			id := sess.SessionID()
			s.adapter.records.SetLogLevel(ctx, s.principal.TenantID, id, string(req.Params.Level))
			// The nodes that already hold the session take the new level too.
			body, _ := json.Marshal(map[string]any{
				"jsonrpc": mcp.JSONRPC_VERSION, "id": "switchboard-relay-level", "method": string(mcp.MethodSetLogLevel),
				"params": map[string]any{"level": req.Params.Level},
			})
			version := ""
			if v, ok := sess.(interface{ ProtocolVersion() string }); ok {
				version = v.ProtocolVersion()
			}
			s.adapter.records.Publish(mcptransport.RelayMessage{Kind: mcptransport.RelayPost, Tenant: s.principal.TenantID, Session: id, Principal: s.principal.ID(),
				AgentID: s.agentID, ProtocolVersion: version, Body: body})
		})
	}
}
