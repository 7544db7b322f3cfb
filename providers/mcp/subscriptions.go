package mcp

import (
	"context"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
)

// SubscribeResource subscribes the connection's session to updates of the resource
// of the hub URI uri (HubURI) on its server; the server's
// notifications/resources/updated for it reach the functions OnResourceUpdated
// registered, with the hub's URI. A server that does not offer subscriptions
// refuses, naming it. A subscription lasts as long as the connection's session.
func (s *Service) SubscribeResource(ctx context.Context, tenant switchboard.TenantID, id, uri string) error {
	return s.withSession(ctx, tenant, id, "subscribe to a resource of", func(ctx context.Context, sess *session) error {
		server, remote, ok := SplitHubURI(uri)
		if !ok || server != sess.name {
			return switchboard.NotFound("resource " + uri)
		}
		if sess.caps.Resources == nil || !sess.caps.Resources.Subscribe {
			return switchboard.Invalid("uri", "the remote MCP server "+sess.name+" does not offer resource subscriptions")
		}
		req := mcpgo.SubscribeRequest{}
		req.Params.URI = remote
		return sess.client.Subscribe(ctx, req)
	})
}

// OnResourceUpdated registers fn to hear that a resource a session subscribed to
// changed on its server: the connection's tenant and id and the resource's hub URI.
// Register while wiring.
func (s *Service) OnResourceUpdated(fn func(tenant switchboard.TenantID, connection, uri string)) {
	s.mu.Lock()
	s.updated = append(s.updated, fn)
	s.mu.Unlock()
}

// resourceUpdated tells the registered functions of a server's
// notifications/resources/updated.
func (s *Service) resourceUpdated(sess *session, n mcpgo.JSONRPCNotification) {
	uri, _ := n.Params.AdditionalFields["uri"].(string)
	if uri == "" || sess.id == "" {
		return
	}
	s.mu.Lock()
	fns := append([]func(switchboard.TenantID, string, string){}, s.updated...)
	s.mu.Unlock()
	for _, fn := range fns {
		fn(sess.tenant, sess.id, HubURI(sess.name, uri))
	}
}
