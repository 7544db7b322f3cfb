package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/mcptransport"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/workflows"
)

// RemoteSubscriptions is what a RemoteContent offers, when it does, for
// resources/subscribe on a remote server's resource (remotemcp.Service): the hub
// subscribes the connection's session, and the server's updates come back through
// Adapter.ResourceUpdated.
type RemoteSubscriptions interface {
	SubscribeResource(ctx context.Context, tenant switchboard.TenantID, connection, uri string) error
}

// maxSubscriptionsPerSession bounds the resources one session subscribes to.
const maxSubscriptionsPerSession = 256

// subscriptions are the resources the sessions of a scope subscribed to on this node
// (resources/subscribe before 2026-07-28, subscriptions/listen on it): session ids (or
// listen streams' keys) by resource URI.
type subscriptions struct {
	mu sync.Mutex
	m  map[string]map[string]struct{}
	n  map[string]int // subscriptions per session
	// listeners are the open subscriptions/listen streams (2026-07-28) by the key
	// they are subscribed under: the session mcp-go serves the stream with.
	listeners map[string]server.ClientSession
}

// listenKey names a subscriptions/listen stream among the subscribers.
func listenKey(sess server.ClientSession) string { return fmt.Sprintf("listen:%p", sess) }

func (c *subscriptions) listen(key string, sess server.ClientSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.listeners == nil {
		c.listeners = map[string]server.ClientSession{}
	}
	c.listeners[key] = sess
}

func (c *subscriptions) listener(key string) server.ClientSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.listeners[key]
}

func (c *subscriptions) add(uri, session string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m, c.n = map[string]map[string]struct{}{}, map[string]int{}
	}
	if _, ok := c.m[uri][session]; ok {
		return true
	}
	if c.n[session] >= maxSubscriptionsPerSession {
		return false
	}
	if c.m[uri] == nil {
		c.m[uri] = map[string]struct{}{}
	}
	c.m[uri][session] = struct{}{}
	c.n[session]++
	return true
}

func (c *subscriptions) remove(uri, session string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[uri][session]; !ok {
		return
	}
	delete(c.m[uri], session)
	if len(c.m[uri]) == 0 {
		delete(c.m, uri)
	}
	if c.n[session]--; c.n[session] <= 0 {
		delete(c.n, session)
	}
}

func (c *subscriptions) forget(session string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for uri, ss := range c.m {
		delete(ss, session)
		if len(ss) == 0 {
			delete(c.m, uri)
		}
	}
	delete(c.n, session)
	delete(c.listeners, session)
}

// matching returns the subscribed URIs that match, with their sessions.
func (c *subscriptions) matching(match func(uri string) bool) map[string][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]string{}
	for uri, ss := range c.m {
		if !match(uri) {
			continue
		}
		for id := range ss {
			out[uri] = append(out[uri], id)
		}
	}
	return out
}

// subscriptionHooks keeps the scope's subscriptions: a session's resources/subscribe
// and unsubscribe, and its end. A remote server's resource is subscribed to on its
// server too.
func (s *scope) subscriptionHooks() server.ServerOption {
	return func(srv *server.MCPServer) {
		hooks := srv.GetHooks()
		if hooks == nil {
			hooks = &server.Hooks{}
			server.WithHooks(hooks)(srv)
		}
		hooks.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
			sess := server.ClientSessionFromContext(ctx)
			if sess == nil {
				return
			}
			uri := req.Params.URI
			if !s.subs.add(uri, sess.SessionID()) {
				s.adapter.opts.Logger.WarnContext(ctx, "resources/subscribe refused: the session has too many subscriptions", "uri", uri)
				return
			}
			s.subscribeRemote(ctx, uri)
			s.relaySubscription(ctx, sess, mcp.MethodResourcesSubscribe, uri)
		})
		hooks.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
			if sess := server.ClientSessionFromContext(ctx); sess != nil {
				s.subs.remove(req.Params.URI, sess.SessionID())
				s.relaySubscription(ctx, sess, mcp.MethodResourcesUnsubscribe, req.Params.URI)
			}
		})
		hooks.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) {
			s.subs.forget(sess.SessionID())
		})
		// On 2026-07-28 the resources are named in subscriptions/listen's filter; the
		// stream acknowledges only those the scope offers updates of, and hears of
		// them while it is open.
		hooks.AddBeforeSubscriptionsListen(func(ctx context.Context, _ any, req *mcp.SubscriptionsListenRequest) {
			want := req.Params.Notifications.ResourceSubscriptions
			if len(want) == 0 {
				return
			}
			sess := server.ClientSessionFromContext(ctx)
			var keep []string
			for _, uri := range want {
				if sess != nil && s.subscribable(ctx, uri) && s.subs.add(uri, listenKey(sess)) {
					keep = append(keep, uri)
					s.subscribeRemote(ctx, uri)
				}
			}
			if len(keep) > 0 {
				s.subs.listen(listenKey(sess), sess)
			}
			req.Params.Notifications.ResourceSubscriptions = keep
		})
		hooks.AddAfterSubscriptionsListen(func(ctx context.Context, _ any, _ *mcp.SubscriptionsListenRequest, _ *mcp.SubscriptionsListenResult) {
			if sess := server.ClientSessionFromContext(ctx); sess != nil {
				s.subs.forget(listenKey(sess))
			}
		})
	}
}

// subscribeRemote subscribes to a remote server's resource on its server, when the URI
// is one of a server the scope serves.
func (s *scope) subscribeRemote(ctx context.Context, uri string) {
	rs, ok := s.adapter.opts.Remote.(RemoteSubscriptions)
	if !ok {
		return
	}
	srv, _, ok := remotemcp.SplitHubURI(uri)
	st := s.state.Load()
	if !ok || st == nil {
		return
	}
	id := st.remote.servers[srv]
	if id == "" {
		return
	}
	if err := rs.SubscribeResource(ctx, s.principal.TenantID, id, uri); err != nil {
		s.adapter.opts.Logger.WarnContext(ctx, "subscribe to a remote MCP server's resource", "uri", uri, "connection", id, "err", err)
	}
}

// notifyUpdated sends notifications/resources/updated to the sessions subscribed to
// the resources that match.
func (s *scope) notifyUpdated(match func(uri string) bool) {
	for uri, sessions := range s.subs.matching(match) {
		for _, id := range sessions {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if l := s.subs.listener(id); l != nil {
				n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
					Method: string(mcp.MethodNotificationResourceUpdated), Params: mcp.NotificationParams{AdditionalFields: map[string]any{"uri": uri}}}}
				select {
				case l.NotificationChannel() <- n:
				case <-ctx.Done():
				}
				cancel()
				continue
			}
			queue(ctx, func() error {
				return s.mcp.SendNotificationToSpecificClient(id, string(mcp.MethodNotificationResourceUpdated), map[string]any{"uri": uri})
			})
			cancel()
		}
	}
}

// connectionsUpdated tells the sessions subscribed to the scope's own resources (its
// connections) that they may have changed.
func (s *scope) connectionsUpdated() {
	s.notifyUpdated(func(uri string) bool { return strings.HasPrefix(uri, connectionsURI) })
}

// ResourceUpdated tells the sessions of the tenant subscribed to a remote server's
// resource (its hub URI) that the server updated it (wire it to
// remotemcp.Service.OnResourceUpdated).
func (a *Adapter) ResourceUpdated(tenant switchboard.TenantID, connection, uri string) {
	for _, s := range a.tenantScopes(tenant) {
		if st := s.state.Load(); st == nil {
			continue
		} else if srv, _, ok := remotemcp.SplitHubURI(uri); !ok || st.remote.servers[srv] != connection {
			continue // not a server this scope serves through that connection
		}
		s.notifyUpdated(func(u string) bool { return u == uri })
	}
}

// refuseSubscription answers a resources/subscribe the scope offers no updates for,
// and reports whether it did: only its connections (switchboard://connections and
// each of its connections by ID) and the resources of the remote servers it serves
// may be subscribed to; any other URI, another principal's included, is not found.
func (s *scope) refuseSubscription(ctx context.Context, w http.ResponseWriter, msg mcptransport.Message) bool {
	if msg.Method != string(mcp.MethodResourcesSubscribe) {
		return false
	}
	var p struct {
		URI string `json:"uri"`
	}
	_ = json.Unmarshal(msg.RawParams, &p)
	if p.URI == "" || s.subscribable(ctx, p.URI) {
		return false // mcp-go refuses a missing uri, naming it
	}
	mcptransport.WriteRPCError(w, http.StatusOK, msg.ID, mcp.RESOURCE_NOT_FOUND,
		"resource not found: "+p.URI+" is not a resource of this endpoint that offers updates ("+connectionsURI+
			", one of its connections, a remote MCP server's resource, or one of your runs or flow instances)")
	return true
}

// subscribable reports whether the scope offers updates of the resource uri: its
// connections, a remote server's resource, or one an extension offers (Subscribable).
func (s *scope) subscribable(ctx context.Context, uri string) bool {
	st := s.state.Load()
	if st == nil {
		return false
	}
	for _, e := range s.adapter.opts.Extensions {
		if e.Subscribable != nil && e.Subscribable(ctx, s.Scope(), uri) {
			return true
		}
	}
	if uri == connectionsURI {
		return true
	}
	if id, ok := strings.CutPrefix(uri, connectionsURI+"/"); ok {
		for _, c := range s.connectionsOf(st) {
			if c.ID == id {
				return true
			}
		}
		return false
	}
	srv, _, ok := remotemcp.SplitHubURI(uri)
	return ok && st.remote.servers[srv] != ""
}

// relaySubscription records the session's resources/subscribe or unsubscribe of uri
// with its record, so a node that restores the session later follows the resource
// too, and tells the other nodes that hold the session now, so that the node holding
// its GET stream, wherever the request came in, keeps the subscription too. A request
// relayed here (or the hub's own, such as a restore) is not recorded or relayed again.
func (s *scope) relaySubscription(ctx context.Context, sess server.ClientSession, method mcp.MCPMethod, uri string) {
	if mcptransport.InternalCall(ctx) {
		return
	}
	s.adapter.records.SetSubscription(ctx, s.principal.TenantID, sess.SessionID(), uri, method == mcp.MethodResourcesSubscribe)
	body, err := json.Marshal(map[string]any{
		"jsonrpc": mcp.JSONRPC_VERSION, "id": "switchboard-relay-subscription", "method": string(method),
		"params": map[string]any{"uri": uri},
	})
	if err != nil {
		return
	}
	version := ""
	if v, ok := sess.(interface{ ProtocolVersion() string }); ok {
		version = v.ProtocolVersion()
	}
	s.adapter.records.Publish(mcptransport.RelayMessage{Kind: mcptransport.RelayPost, Tenant: s.principal.TenantID, Session: sess.SessionID(),
		Principal: s.principal.ID(), AgentID: s.agentID, ProtocolVersion: version, Body: body})
}

// RunChanged tells the sessions of the tenant on this node subscribed to one of its
// runs (switchboard://runs/<id>) or flow instances (switchboard://flows/<id>) that
// its state changed (wire it to runs.OnStateChange: the change may have been made on
// any node). Only the run's own principal could subscribe (Extension.Subscribable).
// The notifications are sent in the background: the feed's goroutine does not wait.
func (a *Adapter) RunChanged(tenant switchboard.TenantID, runID string) {
	uris := map[string]bool{runURIPrefix + runID: true, workflows.InstanceURI(runID): true}
	for _, s := range a.tenantScopes(tenant) {
		if len(s.subs.matching(func(u string) bool { return uris[u] })) == 0 {
			continue
		}
		go s.notifyUpdated(func(u string) bool { return uris[u] })
	}
}
