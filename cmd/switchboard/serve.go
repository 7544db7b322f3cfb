package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/fleet"
	"github.com/switchboard-hub/switchboard/identity"
	"github.com/switchboard-hub/switchboard/internal/database"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/mcpadapter"
	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/migrations"
	"github.com/switchboard-hub/switchboard/openapis"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
	"github.com/switchboard-hub/switchboard/providers/catalog"
	"github.com/switchboard-hub/switchboard/providers/hub"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/providers/openapi"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/sessions"
	"github.com/switchboard-hub/switchboard/telemetry"
	"github.com/switchboard-hub/switchboard/tenants"
	callusage "github.com/switchboard-hub/switchboard/usage"
	"github.com/switchboard-hub/switchboard/web"
	"github.com/switchboard-hub/switchboard/workflows"
)

// shutdownTimeout bounds the graceful part of a shutdown; connections still open then
// are closed.
const shutdownTimeout = 8 * time.Second

// openDatabase creates the data directory, opens the database and migrates it.
func openDatabase(ctx context.Context, cfg config) (*gorm.DB, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory %s: %w", cfg.DataDir, err)
	}
	db, err := database.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if err := migrations.Run(ctx, db); err != nil {
		_ = database.Close(db)
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return db, nil
}

// newRegistry registers every provider and applies the base URL overrides. The
// providers built from OpenAPI descriptions, the built-in catalog's and the operator's
// directory's, are only named here: their descriptions, slow to read, are read by
// loadDeferred, which serve runs in the background so that the node is ready at once;
// a call, listing or catalog read that needs one of them waits for it.
func newRegistry(cfg config) (*providers.Registry, error) {
	reg := providers.NewRegistry()
	if err := all.Register(reg); err != nil {
		return nil, err
	}
	for _, s := range fixtureSpecs() {
		if err := reg.Register(s); err != nil {
			return nil, err
		}
	}
	deferred := map[string]string{} // provider name → where its description comes from
	if cfg.Catalog {
		presets, err := catalog.Presets()
		if err != nil {
			return nil, err
		}
		for _, p := range presets {
			deferred[p.Name] = catalogSource + p.Name
		}
	}
	if cfg.OpenAPIDir != "" {
		files, err := openapi.DirFiles(cfg.OpenAPIDir)
		if err != nil {
			return nil, &configError{"SWITCHBOARD_OPENAPI_DIR", err.Error()}
		}
		for name, file := range files {
			if _, taken := deferred[name]; taken {
				return nil, &configError{"SWITCHBOARD_OPENAPI_DIR", fmt.Sprintf("%s: the built-in catalog has an API named %q; rename the file, or set SWITCHBOARD_CATALOG=off", file, name)}
			}
			deferred[name] = file
		}
	}
	if len(deferred) > 0 {
		if err := reg.Defer(deferred); err != nil {
			return nil, &configError{"SWITCHBOARD_OPENAPI_DIR", err.Error()}
		}
	}
	for provider, u := range cfg.BaseURLs {
		if err := reg.SetBaseURL(provider, u); err != nil {
			return nil, err
		}
	}
	for provider, rate := range cfg.RateLimits {
		var rl providers.RateLimit // a deferred provider's other settings are kept as it loads
		if !reg.Deferred(provider) {
			spec, ok := reg.Provider(provider)
			if !ok {
				return nil, fmt.Errorf("set rate limit: unknown provider %q", provider)
			}
			rl = spec.RateLimit
		}
		rl.PerSecond, rl.Burst = rate.PerSecond, rate.Burst
		if err := reg.SetRateLimit(provider, rl); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// beforeOpenAPILoad runs as the deferred providers' load starts (tests hold it there).
var beforeOpenAPILoad = func() {}

// catalogSource starts the source of a built-in catalog API among the deferred
// providers: the rest are files of the operator's OpenAPI directory.
const catalogSource = "catalog:"

// loadDeferred reads the descriptions of the providers newRegistry only named into the
// registry. One that cannot make a provider is logged naming its source; its provider
// stays out and its tools answer that error.
func loadDeferred(reg *providers.Registry, log *slog.Logger) {
	if !reg.HasDeferred() {
		return
	}
	beforeOpenAPILoad()
	start := time.Now()
	reg.Load(func(_, source string) (providers.Spec, error) {
		if name, ok := strings.CutPrefix(source, catalogSource); ok {
			return catalog.SpecOf(context.Background(), name)
		}
		return openapi.LoadFile(source)
	}, func(name, source string, err error) {
		log.Error("an OpenAPI description did not load; its provider is unavailable", "provider", name, "file", source, "err", err)
	})
	log.Info("OpenAPI descriptions loaded", "took", time.Since(start).Round(time.Millisecond).String())
}

// serve runs the hub until ctx ends, then shuts it down gracefully.
func serve(ctx context.Context, cfg config, log *slog.Logger, stdout io.Writer) error {
	unlockSQLite, err := lockSQLite(cfg)
	if err != nil {
		return err
	}
	defer unlockSQLite()
	db, err := openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		if err := database.Close(db); err != nil {
			log.Error("close database", "err", err)
		}
	}()
	obs, err := setupTelemetry(ctx, cfg, db, log)
	if err != nil {
		return err
	}
	defer obs.close(log)
	tel := obs.tel
	keyring, derived, err := openKeyring(ctx, cfg)
	if err != nil {
		return err
	}
	node := events.NewNodeID()
	feed, closeFeed, err := openFeed(ctx, db, cfg, node, log)
	if err != nil {
		return err
	}
	defer closeFeed() // before the database closes (defers run last first)
	reg, err := newRegistry(cfg)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s (SWITCHBOARD_ADDR): %w", cfg.Addr, err)
	}
	defer ln.Close()
	listenURL := "http://" + ln.Addr().String()
	publicURL := cfg.PublicURL
	if publicURL == "" {
		publicURL = publicURLFor(ln.Addr().String())
	}

	guard, err := egress.NewGuard(cfg.RemoteMCPAllowPrivate, cfg.RemoteMCPAllowCIDRs)
	if err != nil {
		return err
	}
	transports := &providers.Transports{Wrap: tel.UpstreamTransport, New: providerTransports(guard, reg, cfg.OAuthApps)}
	auditDB, closeAuditDB, err := openAuditDB(ctx, cfg, db)
	if err != nil {
		return err
	}
	defer closeAuditDB()
	auditWriter := audit.NewWriter(auditDB, audit.WriterOptions{Logger: log, Metrics: tel.Metrics()})
	if err := tel.Metrics().AuditQueue(auditWriter.QueueLen); err != nil {
		return err
	}
	tenantStore := tenants.NewStore(db)
	// The per-client throttles count their refusals: a valid caller refused by one shows
	// in switchboard_throttle_refusals_total.
	throttles, err := telemetry.NewThrottles(tel.Metrics())
	if err != nil {
		return err
	}
	signIns, keyMisses := limits.NewSignIns(limits.SignInOptions{}), limits.NewKeyMisses(limits.KeyMissOptions{})
	signIns.OnRefusal(throttles.Refused)
	keyMisses.OnRefusal(throttles.Refused)
	tenantStore.SetThrottles(signIns, keyMisses)
	connStore := connections.NewStore(db, keyring)
	connService := connections.NewService(connStore, reg, transports, auditWriter)
	connService.ConfigureOAuth(connections.OAuthConfig{RedirectURL: publicURL + api.CallbackPath, Apps: cfg.OAuthApps, Logger: log, Metrics: tel.Metrics()})
	remote, err := remotemcp.New(remotemcp.Options{Connections: connService, Guard: guard, Version: version(), Logger: log, Registry: reg, Wrap: tel.UpstreamTransport})
	if err != nil {
		return err
	}
	tenantAPIs, err := openapis.New(openapis.Options{Store: openapis.NewStore(db), Connections: connService, Registry: reg,
		Transports: transports, Guard: guard, Keyring: keyring, Recorder: auditWriter, Logger: log})
	if err != nil {
		return err
	}
	remote.SetNameCheck(tenantAPIs.NameClash)
	agentService := agents.NewService(agents.NewStore(db), reg, connService)
	// Connections' rate limits and tenants' run bounds: shared through Redis when it is
	// configured; each node's share of them while it cannot reach Redis is 1/live nodes.
	var members *fleet.Membership
	shared, err := openLimits(ctx, cfg, func() int { return members.Live() }, tel, log)
	if err != nil {
		return err
	}
	defer shared.close()
	// The router enforces every principal's confirm policy, whichever way a call comes.
	refusals, err := telemetry.NewRefusals(tel.Metrics())
	if err != nil {
		return err
	}
	// Calls beyond what the node can work on are refused early, with Retry-After.
	admission := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: cfg.Overload.MaxInFlight, MaxAdmitted: cfg.Overload.MaxAdmitted, UpstreamAdmitted: cfg.Overload.UpstreamAdmitted, TenantAdmitted: cfg.Overload.TenantAdmitted, MaxWait: cfg.Overload.AdmissionWait, UpstreamSlow: cfg.Overload.UpstreamSlow, Refused: refusals.Refused})
	if err := tel.Metrics().AdmissionCalls(admission.States); err != nil {
		return err
	}
	rtr := router.New(router.Options{Registry: reg, Connections: connService, Audit: auditWriter, Transports: transports, Logger: log, ArgsKey: derived.args, Policies: agentService, Agents: agentService, Telemetry: tel, Limits: shared.upstream,
		Admission: admission, Refusals: refusals,
		Deadlines: providers.Deadlines{Read: cfg.Overload.UpstreamReadTimeout, Write: cfg.Overload.UpstreamWriteTimeout},
		Node:      node})
	// A failed run says what a failed tools/call says (rate-limit advice, reconnect link).
	var adapter *mcpadapter.Adapter
	// Workflow runs are runs: the executor's runner sends them to the workflow engine
	// and every other run to the router.
	wfStore := workflows.NewStore(db, keyring)
	wfHub := &workflows.Hub{Router: rtr, Registry: reg, Engine: workflows.NewEngine(workflows.EngineOptions{Store: wfStore, Caller: rtr, Catalog: rtr, Logger: log})}
	runExec := runs.NewExecutor(runs.Options{Store: runs.NewStore(db, keyring), Runner: wfHub, Registry: reg, Logger: log, Lease: cfg.RunLease,
		Node: node, Feed: feed, Slots: shared.slots,
		Describe:    func(err error) string { return adapter.DescribeError(err) },
		ApprovalURL: func(id string) string { return publicURL + mcpadapter.ApprovalPath + id },
		Connections: connService})
	// Switchboard is the OAuth authorization server of its own MCP URLs.
	oauth := identity.New(identity.Options{DB: db, Keyring: keyring, PublicURL: publicURL, Sessions: webAccounts{store: tenantStore},
		Agents: grantAgents{agents: agentService}, Fetch: guard.Transport(), Logger: log,
		Registrations: shared.upstream, // client registrations per address, shared by the fleet with Redis
		// Single sign-on for people: tenants' identity providers are reached through
		// the SSRF guard, like remote MCP servers.
		Accounts: tenantStore, Audit: auditWriter, OIDCTransport: guard.Transport()})
	// A tenant that signs in with its identity provider only refuses passwords.
	tenantStore.SetPasswordPolicy(oauth.PasswordsAllowed)
	wfService := &workflows.Service{Store: wfStore, Runs: runExec, Router: rtr, MinScheduleInterval: cfg.ScheduleMinInterval}
	wfHub.Service = wfService            // a workflow's tool started as a run is the workflow's run
	agentService.SetWorkflows(wfService) // agents may select saved workflows as tools
	// Saved workflows are tools of their own provider, listed per tenant and run
	// through the router like every other tool.
	if err := reg.Register(wfService.Spec()); err != nil {
		return err
	}
	// The hub's own tools (runs, workflows' management, tool search) are tools of
	// their providers, run through the router as the caller.
	if err := (&hub.Tools{Runs: runExec, Workflows: wfService, Registry: reg, Connections: rtr, Search: rtr}).Register(reg); err != nil {
		return err
	}
	// Request bodies in flight share one budget; the MCP URLs reserve theirs once the
	// caller is authenticated, as /api does.
	bodies := limits.NewBodyBudget(0, 0)
	bodies.OnRefusal(throttles.Refused)
	adapter = mcpadapter.New(mcpadapter.Options{
		Router: rtr, Auth: tenantStore, Tokens: oauth, Agents: agentService, Remote: remote, Logger: log, PublicURL: publicURL, Version: version(),
		AllowedOrigins: cfg.AllowedOrigins,
		SchemaProfile:  cfg.SchemaProfile,
		Sessions:       sessions.NewStore(db),
		// The stream of a call whose client left is kept in the database, so that
		// Last-Event-ID resumes it on any node.
		StreamLog:     sessions.NewStreamLog(db, keyring),
		SessionLimits: sessions.Limits{PerPrincipal: cfg.MCPSessionsPerPrincipal},
		ListPageSize:  cfg.MCPListPageSize,
		ToolBudget:    toolBudget(cfg.MCPToolBudget),
		// What must reach the node holding a call (an answer, a cancellation) or an
		// ended session travels on the change feed.
		Relay:     mcptransport.FeedRelay(feed),
		Telemetry: tel,
		Admission: admission, // MCP requests are admitted before their bodies are read
		Bodies:    bodies,
		// A call that needs an account its person has not connected asks them to
		// connect it from the conversation.
		ConnectLinks:    connService,
		ConnectStateKey: derived.requestState,
		Extensions: append([]mcpadapter.Extension{mcpadapter.RunsExtension(mcpadapter.RunsOptions{Runs: runExec, Logger: log, StateKey: derived.requestState, Answer: wfHub.Answer, Flows: wfService}),
			mcpadapter.FlowsExtension(wfService, log)}, fixtureExtensions()...),
	})
	// A run's state changed on any node: the sessions here subscribed to it hear of it.
	runs.OnStateChange(feed, adapter.RunChanged)
	// A change of a tenant's workflows' tools, made on any node, refreshes every node's
	// sessions of the tenant.
	wfService.Changed = workflows.PublishChanges(feed, log)
	workflows.OnToolsChanged(feed, adapter.Refresh)
	wireFixtures(adapter)
	wfService.User = func(ctx context.Context, tenant switchboard.TenantID, id string) (switchboard.Principal, error) {
		u, err := tenantStore.User(ctx, tenant, id)
		if err != nil {
			return switchboard.Principal{}, err
		}
		return switchboard.Principal{TenantID: tenant, Kind: switchboard.PrincipalUser, UserID: u.ID, Role: u.Role}, nil
	}
	connService.Subscribe(rtr.Forget)
	connService.Subscribe(adapter.ConnectionChanged)
	remote.OnResourceUpdated(adapter.ResourceUpdated)
	connService.Subscribe(remote.ConnectionChanged)
	agentService.Subscribe(adapter.AgentChanged)
	tenantStore.OnKeysRevoked(adapter.KeysRevoked)
	oauth.OnGrantsRevoked(adapter.KeysRevoked)
	// Every node's changes reach the same subscribers through the change feed. The
	// remote MCP service drops a stale session before the connections service's
	// subscribers re-list tools, so it subscribes first.
	tenantStore.SetFeed(feed)
	oauth.SetFeed(feed)
	remote.SetFeed(feed)
	tenantAPIs.SetFeed(feed)
	connService.SetFeed(feed)
	agentService.SetFeed(feed)

	// This node's settings go to the nodes table before it serves, so /readyz compares
	// them with its peers' from the first probe.
	members = fleet.New(fleet.Options{DB: db, Node: node, Version: version(), Settings: nodeSettings(cfg, publicURL, keyring), Logger: log})
	if err := members.Beat(ctx); err != nil {
		log.Warn("publish this node's settings", "err", err)
	}
	unfinished := unfinishedCalls{db: db, node: node, members: members, log: log}
	unfinished.mark(ctx)

	tenant, adminKey, created, err := tenantStore.Bootstrap(ctx)
	if err != nil {
		return err
	}
	page, err := web.Handler(web.Options{
		PublicURL: publicURL, DefaultTenant: tenant.Slug, Version: version(), Accounts: webAccounts{store: tenantStore},
		SessionLifetime: tenants.SessionLifetime, MinPasswordLength: tenants.MinPasswordLength, Logger: log,
		Approvals: webApprovals{runs: runExec, users: tenantStore, agents: agentService, flows: wfService}, SSO: oauth, Connect: connService,
	})
	if err != nil {
		return err
	}
	// leaving is set at SIGTERM: /readyz answers 503 from then on, while calls are still
	// accepted for the drain lead (see the end of serve).
	var leaving atomic.Bool
	if err := tel.Metrics().Draining(func() bool { return leaving.Load() || rtr.Draining() }); err != nil {
		return err
	}
	engine := api.New(api.Options{
		Registry:    reg,
		Tenants:     tenantStore,
		Connections: connService,
		Audit:       audit.NewStore(db),
		Usage:       callusage.NewStore(db),
		Tools:       rtr,
		Runs:        runExec,
		Workflows:   wfService,
		Agents:      agentService,
		Lister:      adapter,
		Console:     adapter,
		RemoteMCP:   remote,
		OpenAPI:     tenantAPIs,
		Grants:      oauth,
		SSO:         oauth,
		Recorder:    auditWriter,
		Ready: func(ctx context.Context) error {
			if leaving.Load() || rtr.Draining() { // out of the load balancer from the first moment of a shutdown
				return &switchboard.Error{Code: switchboard.CodeUnavailable, Message: "this node is shutting down"}
			}
			return nil
		},
		Database:      func(ctx context.Context) error { return database.Ping(ctx, db) },
		SettingsDrift: settingsDrift(members),
		FeedListening: feedListening(feed),
		PublicURL:     publicURL,
		Logger:        log,
		NoRoute:       page,
		BodyBudget:    bodies,
		OwnBodies:     []string{mcpadapter.Prefix},
	})
	// Open MCP streams carry a heartbeat, which keeps proxies from closing them and ends
	// those whose client is gone.
	streams := &mcptransport.KeepAlive{Every: cfg.MCPHeartbeat}
	if err := tel.Metrics().OpenStreams(streams.Open); err != nil {
		return err
	}
	mcp := gin.WrapH(streams.Handler(adapter))
	engine.Any(mcpadapter.Prefix+":tenant", mcp)
	engine.Any(mcpadapter.Prefix+":tenant/agents/:agent", mcp)
	// Every MCP URL's OAuth protected resource metadata (RFC 9728), and the
	// authorization server's endpoints.
	metadata := gin.WrapH(&identity.MetadataHandler{PublicURL: publicURL, AuthorizationServer: oauth.Issuer(), Agents: agentService, Logger: log})
	engine.Any(identity.MetadataPath+mcpadapter.Prefix+":tenant", metadata)
	engine.Any(identity.MetadataPath+mcpadapter.Prefix+":tenant/agents/:agent", metadata)
	engine.Any(identity.ServerMetadataPath, gin.WrapF(oauth.ServeMetadata))
	engine.Any(identity.ServerMetadataPath+"/*issuer", gin.WrapF(oauth.ServeMetadata)) // path-aware form (RFC 8414 section 3)
	engine.Any(identity.AuthorizePath, gin.WrapF(oauth.Authorize))
	engine.Any(identity.TokenPath, gin.WrapF(oauth.Token))
	engine.Any(identity.RegistrationPath, gin.WrapF(oauth.Register))
	engine.Any(identity.RevocationPath, gin.WrapF(oauth.Revoke))
	engine.GET(identity.SSOStartPath, gin.WrapF(oauth.StartSSO))
	engine.POST(identity.SSOStartPath, gin.WrapF(oauth.StartSSO))
	engine.GET(identity.SSOCallbackPath, gin.WrapF(oauth.SSOCallback))
	engine.POST(identity.SSOLinkPath, gin.WrapF(oauth.LinkSSO))

	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	// The background loops use the database and the data directory: serve returns only
	// after every one of them has, so nothing touches either once serve is done.
	var background sync.WaitGroup
	background.Go(func() { adapter.Run(runCtx) })
	background.Go(func() { remote.Run(runCtx) })
	background.Go(func() { connService.RunRefresher(runCtx, cfg.RefreshInterval) })
	background.Go(func() { runExec.Run(runCtx) })
	// Workflow schedules: every node ticks; each firing is claimed once in the database.
	scheduler := &workflows.Scheduler{Store: wfStore, Start: wfService.StartAs, Logger: log, MinInterval: cfg.ScheduleMinInterval}
	background.Go(func() { scheduler.Run(runCtx, 0) })
	background.Go(func() { members.Run(runCtx) })
	background.Go(func() { unfinished.run(runCtx) })
	background.Go(func() { callusage.NewRollup(db, log).Run(runCtx, cfg.UsageInterval) })
	background.Go(func() { oauth.Run(runCtx) })
	defer func() {
		stopRun()
		background.Wait()
	}()

	// Sign-ins and unknown API keys are throttled per client address, which every
	// request carries in its context from here.
	sources, err := limits.NewSources(cfg.TrustedProxies)
	if err != nil {
		return err
	}
	// Every answer is counted by route group and status class.
	counted, err := tel.Metrics().HTTPStatuses(engine)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           tel.Handler(sources.Handler(counted)),
		ReadHeaderTimeout: 10 * time.Second,
		// No ReadTimeout or WriteTimeout: MCP streams (SSE) stay open for long. Bodies
		// are bounded by size in the handlers, and those read before any credential is
		// checked by a deadline of their own (api.Options.BodyTimeout).
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// Ending the MCP sessions first lets their open streams finish, so Shutdown need not
	// wait for them.
	srv.RegisterOnShutdown(func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		adapter.Close(closeCtx)
	})

	if err := storePublicURL(cfg, publicURL); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Switchboard is listening on %s\n", listenURL)
	fmt.Fprintf(stdout, "Data: %s\n", describeData(cfg))
	fmt.Fprintf(stdout, "UI: %s/\n", publicURL)
	fmt.Fprintf(stdout, "MCP URL (tenant %s): %s/mcp/%s\n", tenant.Slug, publicURL, tenant.Slug)
	if created {
		fmt.Fprintf(stdout, "Admin API key (shown once, store it now): %s\n", adminKey)
		link, _, err := tenantStore.PasswordLinkByEmail(ctx, tenant.Slug, tenants.BootstrapEmail, "bootstrap")
		if err != nil {
			return fmt.Errorf("make the admin's password link: %w", err)
		}
		fmt.Fprintf(stdout, "Set the admin's UI password (%s, one use, 24 h): %s%s%s\n", tenants.BootstrapEmail, publicURL, api.InvitePath, link)
	} else {
		fmt.Fprintln(stdout, "Admin API key: shown on first start only; create more with POST /api/keys")
	}
	if err := obs.serveAdmin(cfg, log, stdout); err != nil {
		return err
	}
	log.Info("serving", "addr", ln.Addr().String(), "public_url", publicURL, "version", version())

	// The registry's wiring is done: the OpenAPI directory's providers may join it.
	go loadDeferred(reg, log)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	select {
	case err := <-serveErr:
		stopRun()
		closeRest(log, adapter, runExec, auditWriter, tenantStore)
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// First the balancer is told: /readyz answers 503 while calls are still accepted, for
	// long enough that its checks take the node out before it refuses anything (a
	// request it sends meanwhile is served).
	leaving.Store(true)
	if lead := cfg.Overload.lead(); lead > 0 {
		log.Info("shutting down: /readyz answers 503 while calls are still accepted", "drain_lead", lead.String())
		time.Sleep(lead)
	}
	// Then calls under way finish (answer and audit row) before the listener closes; new
	// ones are refused with Retry-After.
	log.Info("shutting down: draining the tool calls under way", "drain_timeout", cfg.Overload.drain().String())
	drainCtx, cancelDrain := context.WithTimeout(context.Background(), cfg.Overload.drain())
	if err := rtr.Drain(drainCtx); err != nil {
		// Each call still running is stopped and answered (outcome_unknown when it
		// sent a write), its audit row completed so, before the listener closes.
		log.Warn("drain timed out; stopping the calls still running", "err", err)
		rtr.Cut()
		cutCtx, cancelCut := context.WithTimeout(context.Background(), cutWait)
		if err := rtr.Drain(cutCtx); err != nil {
			log.Error("calls stopped at the end of the drain did not finish", "err", err)
		}
		cancelCut()
	}
	cancelDrain()
	log.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		log.Warn("graceful shutdown timed out; closing the remaining connections", "err", err)
		_ = srv.Close()
	}
	stopRun()
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("serve", "err", err)
	}
	closeRest(log, adapter, runExec, auditWriter, tenantStore)
	log.Info("stopped")
	return nil
}

// closeRest stops what outlives the HTTP server: MCP sessions, the runs executor, the
// audit writer (which flushes its queue) and the key store's background writes.
func closeRest(log *slog.Logger, adapter *mcpadapter.Adapter, ex *runs.Executor, w *audit.Writer, ts *tenants.Store) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	adapter.Close(ctx)
	// Runs still executing after half the time are stopped; they are recovered after
	// the restart. The other half is the audit writer's, which records their calls.
	runsCtx, cancelRuns := context.WithTimeout(ctx, shutdownTimeout/2)
	ex.Close(runsCtx)
	cancelRuns()
	if err := w.Close(ctx); err != nil {
		log.Error("flush audit events", "err", err)
	}
	ts.Close()
}

// openFeed opens the change feed: LISTEN/NOTIFY on PostgreSQL, in process on SQLite
// (a single node).
func openFeed(ctx context.Context, db *gorm.DB, cfg config, node string, log *slog.Logger) (events.Bus, func(), error) {
	sqlDB, err := db.DB()
	if err != nil {
		return nil, nil, fmt.Errorf("open the change feed: %w", err)
	}
	feed, closeFeed, err := events.Open(ctx, db.Dialector.Name(), sqlDB, cfg.DatabaseURL, node, log)
	if err != nil {
		return nil, nil, fmt.Errorf("open the change feed: %w", err)
	}
	return feed, closeFeed, nil
}

// migrate runs the migrations alone.
func migrate(ctx context.Context, cfg config, stdout io.Writer) error {
	db, err := openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer database.Close(db)
	fmt.Fprintln(stdout, "Migrations are up to date.")
	return nil
}

// createTenant creates a tenant, its owner and an owner key in one transaction, and
// prints them.
func createTenant(ctx context.Context, cfg config, slug, name, email string, stdout, stderr io.Writer) error {
	db, err := openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer database.Close(db)
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email || addr.Name != "" {
		return switchboard.Invalid("--owner-email", "must be an email address such as ada@example.com")
	}
	ts := tenants.NewStore(db)
	defer ts.Close()
	t, owner, key, _, err := ts.CreateTenantWithOwner(ctx, slug, name, email)
	if err != nil {
		return err
	}
	publicURL, err := linkBase(cfg, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Tenant %s (%s) created, owner %s\n", t.Slug, t.ID, owner.Email)
	fmt.Fprintf(stdout, "MCP URL (tenant %s): %s/mcp/%s\n", t.Slug, publicURL, t.Slug)
	fmt.Fprintf(stdout, "Owner API key (shown once, store it now): %s\n", key)
	link, _, err := ts.PasswordLink(ctx, t.ID, owner.ID, "operator")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Owner's UI password link (one use, 24 h): %s%s%s\n", publicURL, api.InvitePath, link)
	return nil
}

// describeData says where serve keeps its data: the database (a SQLite file, or a
// PostgreSQL URL without its password) and what seals credentials.
func describeData(cfg config) string {
	db := "PostgreSQL " + database.Redact(cfg.DatabaseURL)
	if !strings.Contains(cfg.DatabaseURL, "://") {
		db = "SQLite database " + absPath(strings.TrimPrefix(cfg.DatabaseURL, "sqlite:"))
	}
	keys := "key file " + absPath(cfg.KeyFile) + " (back it up: without it stored tokens cannot be opened)"
	if cfg.Keyring == "vault" {
		keys = "Vault transit key " + cfg.VaultTransitMount + "/keys/" + cfg.VaultTransitKey + " at " + cfg.VaultAddr
	}
	return db + "; credentials sealed with the " + keys
}

// absPath is p made absolute, or p if the working directory is unknown.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
