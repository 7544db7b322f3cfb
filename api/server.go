// Package api is Switchboard's REST API under /api (gin): the provider catalog with each
// operation's schemas, connections, tenants, users, API keys and the audit log, plus the
// /healthz and /readyz probes. Every /api request is authenticated by a bearer API key,
// and every answer about another tenant's objects is the same as for a missing one.
//
// Start from [New], which builds the gin engine from [Options]; the interfaces Options
// holds ([ToolRunner], [RunService], [WorkflowService], [ToolLister], …) are what the
// API needs of the rest of the hub. docs/reference/openapi.yaml describes every route.
package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/telemetry"
	"github.com/switchboard-hub/switchboard/tenants"
	"github.com/switchboard-hub/switchboard/usage"
)

// Options wire the API to the hub's stores and services.
type Options struct {
	Registry    *providers.Registry
	Tenants     *tenants.Store
	Connections *connections.Service
	Audit       *audit.Store
	// Usage answers /api/usage: the figures of the tenant's tool calls.
	Usage *usage.Store
	// Tools runs tool calls for POST /api/tools/{tool}/call (the router).
	Tools ToolRunner
	// Runs keeps the asynchronous runs of /api/runs (the runs executor).
	Runs RunService
	// Workflows serves /api/workflows and /api/workflow-runs.
	Workflows WorkflowService
	// Agents manages /api/agents and /api/mcp-settings.
	Agents *agents.Service
	// Lister says what an agent URL would list (POST /api/agents/preview).
	Lister ToolLister
	// Console serves agents' MCP URLs to the people who manage them
	// (POST /api/agents/{id}/mcp, the builder UI's agent console).
	Console AgentConsole
	// RemoteMCP registers remote MCP servers (POST /api/remote-mcp).
	RemoteMCP RemoteMCP
	// OpenAPI keeps the tenants' APIs added by their description (/api/openapi-providers).
	OpenAPI OpenAPIProviders
	// Grants lists and revokes the connected apps (/api/connected-apps).
	Grants Grants
	// SSO reads and sets the tenants' single sign-on (/api/sso).
	SSO SSO
	// Recorder takes the audit events of tenant, user and key changes.
	Recorder audit.Recorder
	// Ready reports whether this node can serve, by what is its own alone (it is not
	// shutting down): /readyz answers 503 when it does not, and a balancer then sends the
	// node nothing.
	Ready func(ctx context.Context) error
	// Database reports whether the database answers. /readyz says when it does not but
	// stays 200: the database is shared, so its outage would take every node out of the
	// balancer at once, and clients would hear the balancer's own page instead of the
	// hub's "unavailable, retry in 5 s" (with Retry-After) that each request gets
	// meanwhile.
	Database func(ctx context.Context) error
	// SettingsDrift lists the live peers whose settings differ from this node's (none
	// with a single node); /readyz shows them.
	SettingsDrift func(ctx context.Context) ([]SettingsDrift, error)
	// FeedListening reports whether this node hears the other nodes' changes (the
	// change feed's listener is connected); nil for a single node. /readyz says when it
	// does not: the node then serves what it cached until the listener is back (and
	// drops it all then), at most the caches' lifetimes.
	FeedListening func() bool
	// PublicURL is where people reach this deployment, without a trailing slash; MCP
	// URLs in answers start with it.
	PublicURL string
	Logger    *slog.Logger
	// NoRoute, when set, serves requests outside /api and the probes (the web UI).
	NoRoute http.Handler
	// BodyBudget bounds the bytes of request bodies in flight across every route of
	// the engine; limits.NewBodyBudget(0, 0) when nil. /api reserves a body once its
	// caller is authenticated, a workflow's webhook once the request carries a
	// signature for a workflow that has a secret; every other route, those added after
	// New included, takes a small public body only (limits.BodyBudget.ReservePublic).
	BodyBudget *limits.BodyBudget
	// OwnBodies are the path prefixes of routes added after New that authenticate
	// their caller before reading the body, then reserve it from BodyBudget and lift
	// the read deadline of BodyTimeout (the MCP URLs, whose adapter shares the budget).
	OwnBodies []string
	// BodyTimeout is how long a body read before any credential is checked (a public
	// body, a webhook's) may take to arrive; limits.PublicBodyTimeout when zero.
	BodyTimeout time.Duration
}

type server struct {
	Options
	log *slog.Logger
	// publicHost is PublicURL's host as a Host header names it; https says whether
	// PublicURL is https (HSTS).
	publicHost string
	https      bool
	// ownBodies are the route prefixes publicBody leaves to the routes themselves.
	ownBodies []string
}

// New returns the engine serving /api, /healthz and /readyz. Callers may add routes
// (the MCP adapter) before serving it.
func New(o Options) *gin.Engine {
	s := &server{Options: o, log: o.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.PublicURL = strings.TrimRight(s.PublicURL, "/")
	s.publicHost, s.https = hostOf(s.PublicURL)
	if s.BodyBudget == nil {
		s.BodyBudget = limits.NewBodyBudget(0, 0)
	}
	if s.BodyTimeout <= 0 {
		s.BodyTimeout = limits.PublicBodyTimeout
	}
	s.ownBodies = append([]string{"/api/", WebhookPath}, s.OwnBodies...)

	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.ContextWithFallback = true
	e.Use(s.accessLog, gin.CustomRecoveryWithWriter(discard{}, s.recovered), s.securityHeaders, s.publicBody)
	e.NoRoute(s.noRoute)
	e.NoMethod(methodNotAllowed)

	e.GET("/healthz", s.healthz)
	e.HEAD("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.HEAD("/readyz", s.readyz)

	e.GET(CallbackPath, s.checkHost, s.callback)

	a := e.Group("/api", s.checkHost, requireJSON, compressJSON, s.authenticate, s.bodyBudget)
	a.GET("/providers", s.listProviders)
	a.GET("/providers/:provider/operations", s.listOperations)

	a.POST("/connections", s.createConnection)
	a.GET("/connections", s.listConnections)
	a.GET("/connections/:id", s.getConnection)
	a.DELETE("/connections/:id", s.deleteConnection)
	a.PATCH("/connections/:id", s.updateConnection)
	a.POST("/connections/:id/reconnect", s.reconnectConnection)
	a.POST("/connections/:id/authorize", s.authorize) // :id is the provider's name here
	a.POST("/remote-mcp", s.registerRemoteMCP)
	a.POST("/openapi-providers", s.addOpenAPIProvider)
	a.GET("/openapi-providers", s.listOpenAPIProviders)
	a.DELETE("/openapi-providers/:name", s.deleteOpenAPIProvider)

	a.GET("/oauth-apps", s.listOAuthApps)
	a.PUT("/oauth-apps/:provider", s.putOAuthApp)
	a.DELETE("/oauth-apps/:provider", s.deleteOAuthApp)
	a.GET("/deployment/oauth-apps", s.listDeploymentOAuthApps)
	a.PUT("/deployment/oauth-apps/:provider", s.putDeploymentOAuthApp)
	a.DELETE("/deployment/oauth-apps/:provider", s.deleteDeploymentOAuthApp)

	a.GET("/tenant", s.getTenant)
	a.GET("/tenants", s.listTenants)
	a.POST("/tenants", s.createTenant)

	a.GET("/users", s.listUsers)
	a.POST("/users", s.createUser)
	a.PATCH("/users/:id", s.setUserRole)
	a.DELETE("/users/:id", s.removeUser)

	a.GET("/keys", s.listKeys)
	a.POST("/keys", s.createKey)
	a.DELETE("/keys/:id", s.revokeKey)

	a.GET("/audit", s.listAudit)
	a.GET("/usage", s.getUsage)
	a.GET("/usage/chart.svg", s.usageChart)

	a.GET("/sso", s.getSSO)
	a.PUT("/sso", s.putSSO)
	a.DELETE("/sso", s.deleteSSO)
	a.GET("/sso/changes", s.listSSOChanges)
	a.POST("/sso/changes/:id/acknowledge", s.acknowledgeSSOChange)
	a.GET("/sso/links", s.listSSOLinks)
	a.POST("/sso/links/:id/approve", s.approveSSOLink)

	a.GET("/connected-apps", s.listConnectedApps)
	a.DELETE("/connected-apps/:id", s.revokeConnectedApp)

	a.GET("/invitations", s.listInvitations)
	a.POST("/invitations", s.createInvitation)
	a.DELETE("/invitations/:id", s.revokeInvitation)
	a.POST("/invitations/:id/resend", s.resendInvitation)

	a.GET("/tools", s.listTools)
	a.POST("/tools/:tool/call", s.callTool)

	a.GET("/agents", s.listAgents)
	a.POST("/agents", s.createAgent)
	a.POST("/agents/preview", s.previewAgent)
	a.GET("/agents/:id", s.getAgent)
	a.PUT("/agents/:id", s.updateAgent)
	a.DELETE("/agents/:id", s.deleteAgent)
	a.GET("/agents/:id/keys", s.listAgentKeys)
	a.POST("/agents/:id/keys", s.createAgentKey)
	a.POST("/agents/:id/mcp", s.agentConsole)
	a.GET("/mcp-settings", s.getMCPSettings)
	a.PUT("/mcp-settings", s.putMCPSettings)

	a.POST("/runs", s.startRun)
	a.GET("/runs", s.listRuns)
	a.GET("/runs/:id", s.getRun)
	a.POST("/runs/:id/cancel", s.cancelRun)
	s.workflowRoutes(a)
	e.POST(WebhookPath+":tenant/:name/:provider", s.webhook)
	return e
}

// noRoute answers unknown /api paths as JSON and hands everything else to NoRoute.
func (s *server) noRoute(c *gin.Context) {
	p := c.Request.URL.Path
	if s.NoRoute == nil || p == "/api" || strings.HasPrefix(p, "/api/") {
		notFoundRoute(c)
		return
	}
	if !s.hostAllowed(c.Request) {
		s.refuseHost(c)
		return
	}
	// gin has set 404 for an unmatched route; the handler decides the status itself.
	c.Writer.WriteHeader(http.StatusOK)
	s.NoRoute.ServeHTTP(c.Writer, c.Request)
}

// accessLog logs one line per request: never the query string's or the body's values.
// A request no API route matched (a page, a probe, a typo) logs its path as well, with
// anything shaped like a key, a session or a one-time link hidden.
func (s *server) accessLog(c *gin.Context) {
	start := time.Now()
	c.Next()
	route := c.FullPath()
	if route == "" {
		// A page of the web UI: the pattern its mux matched (GET /invite/{token}).
		route = telemetry.PatternRoute(c.Request.Pattern)
	}
	telemetry.NameRoute(c.Request, route)
	attrs := []slog.Attr{slog.String("method", c.Request.Method), slog.String("route", c.FullPath())}
	if c.FullPath() == "" {
		attrs[1] = slog.String("route", "(unmatched)")
		attrs = append(attrs, slog.String("path", telemetry.RedactPath(c.Request.URL.Path)))
	}
	attrs = append(attrs, slog.Int("status", c.Writer.Status()), slog.Duration("took", time.Since(start)))
	s.log.LogAttrs(c.Request.Context(), slog.LevelInfo, "http request", attrs...)
}

func (s *server) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

func (s *server) readyz(c *gin.Context) {
	if s.Ready != nil {
		ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
		defer cancel()
		if err := s.Ready(ctx); err != nil {
			reason := "this node cannot serve"
			var e *switchboard.Error
			if errors.As(err, &e) && e.Code == switchboard.CodeUnavailable {
				reason = e.Message // the node says why itself (it is shutting down)
			} else {
				s.log.WarnContext(c.Request.Context(), "not ready", "err", err)
			}
			c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "reason": reason})
			return
		}
	}
	answer := gin.H{"status": "ok"}
	if s.Database != nil {
		ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
		defer cancel()
		if err := s.Database(ctx); err != nil {
			s.log.WarnContext(c.Request.Context(), "the database does not answer: requests are answered unavailable meanwhile", "err", err)
			answer["database"] = "unavailable"
		}
	}
	if s.SettingsDrift != nil {
		ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
		defer cancel()
		drift, err := s.SettingsDrift(ctx)
		switch {
		case err != nil:
			s.log.WarnContext(c.Request.Context(), "compare settings with the peers", "err", err)
		case len(drift) > 0:
			// Still ready: a node whose settings differ serves correctly what it can and
			// changes no shared state because of its own settings (a refresh it cannot do
			// is left to its peers). Answering 503 would take every node of a rolling
			// deploy out of the load balancer in turn, each differing from the others.
			s.log.WarnContext(c.Request.Context(), "this node's settings differ from its peers'", "peers", len(drift), "first_peer", drift[0].Node, "settings", strings.Join(drift[0].Settings, ","))
			answer["settings_differ"] = drift
		}
	}
	if s.FeedListening != nil && !s.FeedListening() {
		s.log.WarnContext(c.Request.Context(), "the change feed's listener is reconnecting: this node does not hear other nodes' changes meanwhile")
		answer["change_feed"] = "reconnecting"
	}
	c.JSON(http.StatusOK, answer)
}

// SettingsDrift is a live peer whose settings differ from this node's: the names of
// the settings that differ, never their values.
type SettingsDrift struct {
	Node     string   `json:"node"`
	Version  string   `json:"version"`
	Settings []string `json:"settings"`
}

// discard swallows gin's recovery dump; recovered logs the panic through slog.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
