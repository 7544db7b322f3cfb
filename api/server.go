// Package api is Switchboard's REST API under /api (gin): the provider catalog with each
// operation's schemas, connections, tenants, users, API keys and the audit log, plus the
// /healthz and /readyz probes. Every /api request is authenticated by a bearer API key,
// and every answer about another tenant's objects is the same as for a missing one.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/tenants"
)

// Options wire the API to the hub's stores and services.
type Options struct {
	Registry    *providers.Registry
	Tenants     *tenants.Store
	Connections *connections.Service
	Audit       *audit.Store
	// Tools runs tool calls for POST /api/tools/{tool}/call (the router).
	Tools ToolRunner
	// Runs keeps the asynchronous runs of /api/runs (the runs executor).
	Runs RunService
	// Agents manages /api/agents and /api/mcp-settings.
	Agents *agents.Service
	// RemoteMCP registers remote MCP servers (POST /api/remote-mcp).
	RemoteMCP RemoteMCP
	// Recorder takes the audit events of tenant, user and key changes.
	Recorder audit.Recorder
	// Ready reports whether the hub can serve (the database answers); /readyz calls it.
	Ready func(ctx context.Context) error
	// PublicURL is where people reach this deployment, without a trailing slash; MCP
	// URLs in answers start with it.
	PublicURL string
	Logger    *slog.Logger
	// NoRoute, when set, serves requests outside /api and the probes (the web UI).
	NoRoute http.Handler
}

type server struct {
	Options
	log *slog.Logger
}

// New returns the engine serving /api, /healthz and /readyz. Callers may add routes
// (the MCP adapter) before serving it.
func New(o Options) *gin.Engine {
	s := &server{Options: o, log: o.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.PublicURL = strings.TrimRight(s.PublicURL, "/")

	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.ContextWithFallback = true
	e.Use(s.accessLog, gin.CustomRecoveryWithWriter(discard{}, s.recovered))
	e.NoRoute(s.noRoute)
	e.NoMethod(methodNotAllowed)

	e.GET("/healthz", s.healthz)
	e.HEAD("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.HEAD("/readyz", s.readyz)

	e.GET(CallbackPath, s.callback)

	a := e.Group("/api", s.authenticate)
	a.GET("/providers", s.listProviders)
	a.GET("/providers/:provider/operations", s.listOperations)

	a.POST("/connections", s.createConnection)
	a.GET("/connections", s.listConnections)
	a.GET("/connections/:id", s.getConnection)
	a.DELETE("/connections/:id", s.deleteConnection)
	a.POST("/connections/:id/authorize", s.authorize) // :id is the provider's name here
	a.POST("/remote-mcp", s.registerRemoteMCP)

	a.GET("/oauth-apps", s.listOAuthApps)
	a.PUT("/oauth-apps/:provider", s.putOAuthApp)
	a.DELETE("/oauth-apps/:provider", s.deleteOAuthApp)

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

	a.GET("/invitations", s.listInvitations)
	a.POST("/invitations", s.createInvitation)

	a.GET("/tools", s.listTools)
	a.POST("/tools/:tool/call", s.callTool)

	a.GET("/agents", s.listAgents)
	a.POST("/agents", s.createAgent)
	a.GET("/agents/:id", s.getAgent)
	a.PUT("/agents/:id", s.updateAgent)
	a.DELETE("/agents/:id", s.deleteAgent)
	a.GET("/agents/:id/keys", s.listAgentKeys)
	a.POST("/agents/:id/keys", s.createAgentKey)
	a.GET("/mcp-settings", s.getMCPSettings)
	a.PUT("/mcp-settings", s.putMCPSettings)

	a.POST("/runs", s.startRun)
	a.GET("/runs", s.listRuns)
	a.GET("/runs/:id", s.getRun)
	a.POST("/runs/:id/cancel", s.cancelRun)
	return e
}

// noRoute answers unknown /api paths as JSON and hands everything else to NoRoute.
func (s *server) noRoute(c *gin.Context) {
	p := c.Request.URL.Path
	if s.NoRoute == nil || p == "/api" || strings.HasPrefix(p, "/api/") {
		notFoundRoute(c)
		return
	}
	// gin has set 404 for an unmatched route; the handler decides the status itself.
	c.Writer.WriteHeader(http.StatusOK)
	s.NoRoute.ServeHTTP(c.Writer, c.Request)
}

// accessLog logs one line per request: never the query string's or the body's values.
func (s *server) accessLog(c *gin.Context) {
	start := time.Now()
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "(unmatched)"
	}
	s.log.LogAttrs(c.Request.Context(), slog.LevelInfo, "http request",
		slog.String("method", c.Request.Method),
		slog.String("route", route),
		slog.Int("status", c.Writer.Status()),
		slog.Duration("took", time.Since(start)))
}

func (s *server) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

func (s *server) readyz(c *gin.Context) {
	if s.Ready != nil {
		ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
		defer cancel()
		if err := s.Ready(ctx); err != nil {
			s.log.WarnContext(c.Request.Context(), "not ready", "err", err)
			c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "reason": "the database does not answer"})
			return
		}
	}
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// discard swallows gin's recovery dump; recovered logs the panic through slog.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
