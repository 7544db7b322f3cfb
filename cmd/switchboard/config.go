package main

import (
	"cmp"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/mcpadapter"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
	"github.com/switchboard-hub/switchboard/telemetry"
)

// envVar is one configuration variable: `switchboard -h` and
// docs/reference/configuration.md (configDoc) print it, and loadConfig takes its
// default from it.
type envVar struct {
	Name string
	// Default is the value the server uses when the variable is unset or empty, written
	// as it would be set; "" when there is none, or when the server works it out from
	// other settings (derivedDefaults says how).
	Default string
	Help    string
}

// shownDefault is the default as help and the reference show it: the value itself,
// how it is worked out, or "none".
func (v envVar) shownDefault() string {
	if v.Default != "" {
		return v.Default
	}
	if d, ok := derivedDefaults()[v.Name]; ok {
		return d
	}
	return "none"
}

// derivedDefaults says, for the variables without a fixed default, what the server
// does when they are unset.
func derivedDefaults() map[string]string {
	return map[string]string{
		"SWITCHBOARD_DATABASE_URL":               "sqlite:DATA_DIR/switchboard.db",
		"SWITCHBOARD_KEY_FILE":                   "DATA_DIR/master.key",
		"SWITCHBOARD_VAULT_TOKEN":                "$VAULT_TOKEN",
		"SWITCHBOARD_PUBLIC_URL":                 "http://ADDR",
		"SWITCHBOARD_<PROVIDER>_BASE_URL":        "the provider's public API",
		"SWITCHBOARD_<PROVIDER>_RATE_LIMIT":      "the provider's (GitHub 10:50, Slack 1:10)",
		"SWITCHBOARD_ADMIN_ADDR":                 "off",
		"OTEL_EXPORTER_OTLP_ENDPOINT":            "off",
		"SWITCHBOARD_OAUTH_<PROVIDER>_AUTH_URL":  "the provider's",
		"SWITCHBOARD_OAUTH_<PROVIDER>_TOKEN_URL": "the provider's",
		"SWITCHBOARD_MAX_INFLIGHT":               "4 per CPU (at least 8)",
		"SWITCHBOARD_MAX_ADMITTED":               "32 × SWITCHBOARD_MAX_INFLIGHT",
		"SWITCHBOARD_UPSTREAM_MAX_ADMITTED":      "SWITCHBOARD_MAX_ADMITTED",
		"SWITCHBOARD_UPSTREAM_SLOW":              "1s (half SWITCHBOARD_ADMISSION_WAIT, if that is under 2 s)",
		"SWITCHBOARD_TENANT_MAX_ADMITTED":        "4 × SWITCHBOARD_MAX_INFLIGHT",
		"SWITCHBOARD_ADMISSION_WAIT":             "2s",
		"SWITCHBOARD_UPSTREAM_READ_TIMEOUT":      "the provider's (30 s)",
		"SWITCHBOARD_UPSTREAM_WRITE_TIMEOUT":     "the provider's (60 s)",
	}
}

// tableDefault returns the table's default for name ("" when it has none), matching
// a provider's variable (SWITCHBOARD_GITHUB_BASE_URL) to its <PROVIDER> row.
func tableDefault(vars []envVar, name string) string {
	for _, v := range vars {
		if v.Name == name {
			return v.Default
		}
	}
	for _, v := range vars {
		if pre, suf, ok := strings.Cut(v.Name, "<PROVIDER>"); ok && len(name) > len(pre)+len(suf) && strings.HasPrefix(name, pre) && strings.HasSuffix(name, suf) {
			return v.Default
		}
	}
	return ""
}

// envVars are every variable the server reads, in the order help lists them. A name
// with <PROVIDER> stands for one variable per provider it applies to (knownVars).
func envVars() []envVar {
	every := strings.Join(providerNames(false), ", ")
	oauth := strings.Join(providerNames(true), ", ")
	return append([]envVar{
		{"SWITCHBOARD_ADDR", "127.0.0.1:8080", "host:port to listen on; 0.0.0.0:8080 listens on every interface"},
		{"SWITCHBOARD_DATA_DIR", "./data", "directory for the SQLite database and the key file, created 0700"},
		{"SWITCHBOARD_DATABASE_URL", "", "sqlite:PATH (or a file path) for SQLite; postgres://user:pass@host:5432/db?sslmode=… for PostgreSQL"},
		{"SWITCHBOARD_KEY_FILE", "", "the local key that seals connection credentials, created 0600 on first start; keep it and back it up"},
		{"SWITCHBOARD_KEYRING", "file", "what seals credentials: file (the local key file) or vault (HashiCorp Vault Transit, envelope encryption)"},
		{"SWITCHBOARD_VAULT_ADDR", "", "with SWITCHBOARD_KEYRING=vault: Vault's URL, for example https://vault.internal:8200"},
		{"SWITCHBOARD_VAULT_TOKEN", "", "with SWITCHBOARD_KEYRING=vault: a Vault token that may use the transit key (datakey, decrypt, hmac, read; rotate for keys rotate)"},
		{"SWITCHBOARD_VAULT_TRANSIT_KEY", "", "with SWITCHBOARD_KEYRING=vault: the name of the transit key (create it with vault write -f transit/keys/NAME)"},
		{"SWITCHBOARD_VAULT_TRANSIT_MOUNT", "transit", "with SWITCHBOARD_KEYRING=vault: the path the transit secrets engine is mounted at"},
		{"SWITCHBOARD_PUBLIC_URL", "", "the URL people and MCP clients reach this server at (behind a proxy: its https URL); MCP URLs and links start with it"},
		{"SWITCHBOARD_<PROVIDER>_BASE_URL", "", "API base URL of one provider (<PROVIDER>: " + every + "), e.g. SWITCHBOARD_GITHUB_BASE_URL=https://HOST/api/v3 for GitHub Enterprise Server, or a test double's URL"},
		{"SWITCHBOARD_<PROVIDER>_RATE_LIMIT", "", "the token bucket each connection of one provider gets, as PER_SECOND:BURST (SWITCHBOARD_GITHUB_RATE_LIMIT=1.4:100 is GitHub's 5,000 an hour); a call that would wait longer than the provider's wait for it is refused with rate_limited and Retry-After, as is every call while the upstream says its limit is spent (Retry-After, X-RateLimit-Remaining: 0)"},
		{"SWITCHBOARD_OPENAPI_DIR", "", "a directory of OpenAPI 3 or Swagger 2 descriptions (NAME.json, NAME.yaml), each made the provider NAME, its options (base_url, auth, operations, tags, title) in NAME.options.json; the descriptions are read after the node is ready (a call, listing or catalog read that needs one waits for it), and one that cannot be read is logged at error naming its file while its tools answer unavailable with the reason; an unreadable directory or two files of one NAME stop the start"},
		{"SWITCHBOARD_CATALOG", "on", "on or off: on registers the built-in catalog of public APIs (Gmail, Stripe, …), each with its curated default tools, beside the curated providers; off leaves it out (a faster start, less memory)"},
		{"SWITCHBOARD_LOG_LEVEL", "info", "debug, info, warn or error; logs go to stderr"},
		{"SWITCHBOARD_LOG_FORMAT", telemetry.LogText, "text or json (one JSON object a line); request lines carry trace_id, and an error repeated within 10 s is summarised"},
		{"SWITCHBOARD_ADMIN_ADDR", "", "host:port of the admin listener: Prometheus metrics at /metrics and pprof at /debug/pprof/; keep it private (never the public port)"},
		{telemetry.AdminHostsEnv, "", "comma-separated host names (metrics.internal) the admin listener answers to besides IP addresses and localhost; a request with any other Host gets 421, so a web page cannot reach it by DNS rebinding"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "", "OTLP/HTTP collector URL (http://collector:4318) to export traces to; the other OTEL_* exporter variables apply; unset: no tracing"},
		{"SWITCHBOARD_OAUTH_<PROVIDER>_CLIENT_ID", "", "the deployment's OAuth app client ID for a provider that connects with OAuth (<PROVIDER>: " + oauth + "); register PUBLIC_URL/oauth/callback as its callback URL"},
		{"SWITCHBOARD_OAUTH_<PROVIDER>_CLIENT_SECRET", "", "that app's client secret; both or neither"},
		{"SWITCHBOARD_OAUTH_<PROVIDER>_AUTH_URL", "", "overrides a provider's OAuth authorization endpoint (GitHub Enterprise Server: https://HOST/login/oauth/authorize)"},
		{"SWITCHBOARD_OAUTH_<PROVIDER>_TOKEN_URL", "", "overrides a provider's OAuth token endpoint (GitHub Enterprise Server: https://HOST/login/oauth/access_token)"},
		{"SWITCHBOARD_REFRESH_INTERVAL", "1m", "how often the background refresher looks for OAuth tokens expiring within 10 minutes"},
		{"SWITCHBOARD_SCHEDULE_MIN_INTERVAL", "1m", "the shortest time a workflow's schedule may leave between two firings, from 1s to 1m: a shorter @every is refused when saved and does not fire"},
		{"SWITCHBOARD_USAGE_INTERVAL", "1m", "how often a node adds the latest tool calls to the usage figures (Overview, /api/usage): they are this far behind the audit log at most; from 1s to 1h"},
		{"SWITCHBOARD_RUN_LEASE", "30s", "how long a process holds an async run without renewing it; a run whose process died is recovered this long after"},
		{"SWITCHBOARD_MCP_SESSIONS_PER_PRINCIPAL", "100", "how many live MCP sessions one API key (user or agent) may hold; a new one beyond it ends the least recently used"},
		{"SWITCHBOARD_MCP_HEARTBEAT", "25s", "how often an open MCP stream (a GET stream, a call answering with a stream) carries an SSE comment that clients ignore: it keeps proxies from closing a quiet stream, and a stream whose client is gone (a proxy kept the connection) ends at the first one the connection does not take. 0s sends none"},
		{"SWITCHBOARD_MCP_LIST_PAGE_SIZE", strconv.Itoa(mcpadapter.DefaultListPageSize), "how many tools, prompts or resources one MCP list answer holds; longer lists come in pages linked by nextCursor (the default keeps a page under 1 MB with large imported APIs)"},
		{"SWITCHBOARD_MCP_TOOL_BUDGET", strconv.Itoa(mcpadapter.DefaultToolBudget), "the most tools a tenant URL lists: a tenant with more that has not chosen a tool mode in its MCP settings is served there through search_tools, describe_tool and call_tool (agent URLs list their selection); 0 turns the budget off"},
		{"SWITCHBOARD_ALLOWED_ORIGINS", "", "comma-separated browser origins (https://app.example.com) allowed to call the MCP URLs besides PUBLIC_URL's own, with CORS (preflights answered, Mcp-Session-Id and WWW-Authenticate exposed); other origins get no CORS headers and their preflights 403; * allows any"},
		{"SWITCHBOARD_SCHEMA_PROFILE", "portable", "how tools/list writes tools' input schemas: portable (the subset OpenAI strict mode, Anthropic and Gemini's parametersJsonSchema all accept: closed objects, every property required and an optional one nullable, free-form values as JSON text, descriptions cut at 1,024 characters), gemini (portable for Gemini's OpenAPI parameters: no additionalProperties) or full (every JSON Schema keyword); every profile keeps a tool's valid x-mcp-header annotations (SEP-2243), which clients of 2026-07-28 mirror into Mcp-Param headers; calls are checked against the full schemas whatever it is"},
		{egress.AllowPrivateEnv, "false", "true lets outgoing requests (remote MCP servers, tenants' APIs, OAuth endpoints, providers' redirects) reach private, loopback and link-local addresses (refused by default: SSRF; a provider's configured base and OAuth URLs are always reached)"},
		{egress.AllowCIDRsEnv, "", "comma-separated CIDR ranges (10.1.0.0/16) outgoing requests may reach although private"},
		{"SWITCHBOARD_AUDIT_SYNCHRONOUS_COMMIT", "on", "PostgreSQL only: off writes audit rows with synchronous_commit off, saving the WAL flush each call waits for (milliseconds a call: 5–7 ms on the benchmark machine's disk): a row is still committed before its call's answer or upstream request and survives the node's crash, but a crash of the PostgreSQL server itself may lose the last fraction of a second of audit rows. Other writes stay synchronous"},
		{"SWITCHBOARD_REDIS_URL", "", "redis://[:password@]host:6379/0 (or rediss:// for TLS): connections' rate limits, upstream Retry-After windows and tenants' run bounds are shared by every node using it; unset: kept per process (one node)"},
		{"SWITCHBOARD_REDIS_TIMEOUT", "250ms", "the longest one Redis round trip may take before the node decides on its own share of the limit (and tries Redis again 1 s later); a tool call never waits longer on Redis"},
		{"SWITCHBOARD_TRUSTED_PROXIES", "", "comma-separated addresses or CIDR ranges of reverse proxies whose X-Forwarded-For names the client; sign-in and unknown API keys are throttled per client address"},
	}, overloadVars()...)
}

// config is the server's configuration, read from SWITCHBOARD_* variables.
type config struct {
	Addr        string
	DataDir     string
	DatabaseURL string
	KeyFile     string
	// Keyring is "file" or "vault"; the Vault fields matter only for "vault".
	Keyring           string
	VaultAddr         string
	VaultToken        string
	VaultTransitKey   string
	VaultTransitMount string
	// PublicURL is empty unless set; serve then derives it from the listening address.
	PublicURL string
	// BaseURLs overrides providers' API base URLs, by provider name.
	BaseURLs map[string]string
	// AuditAsyncCommit writes audit rows with PostgreSQL's synchronous_commit off.
	AuditAsyncCommit bool
	// RateLimits overrides the token bucket of each connection of a provider, by
	// provider name (the provider's wait for it stays).
	RateLimits map[string]limits.Rate
	// OpenAPIDir holds API descriptions each made a provider at start-up ("" for none).
	OpenAPIDir string
	// Catalog registers the built-in catalog of public APIs (providers/catalog).
	Catalog  bool
	LogLevel slog.Level
	// LogFormat is "text" or "json".
	LogFormat string
	// AdminAddr is the admin listener's host:port (metrics, pprof); empty: none.
	AdminAddr string
	// AdminHosts are the host names, besides IP addresses and localhost, that the admin
	// listener answers to.
	AdminHosts []string
	// TracesEndpoint is the OTLP/HTTP URL traces go to; empty: no tracing.
	TracesEndpoint string
	// OAuthApps are the deployment's OAuth apps by provider, from SWITCHBOARD_OAUTH_*.
	OAuthApps map[string]connections.OAuthApp
	// RefreshInterval is the background refresher's period.
	RefreshInterval time.Duration
	// UsageInterval is how often the usage rollup passes.
	UsageInterval time.Duration
	// RunLease is how long a process holds an async run without renewing it.
	RunLease time.Duration
	// ScheduleMinInterval is the shortest time a workflow's schedule may leave between
	// two firings.
	ScheduleMinInterval time.Duration
	// MCPHeartbeat is how often an open MCP stream carries a heartbeat (0: none).
	MCPHeartbeat time.Duration
	// MCPSessionsPerPrincipal caps the live MCP sessions of one principal.
	MCPSessionsPerPrincipal int
	// MCPListPageSize is how many items one MCP list answer holds.
	MCPListPageSize int
	// MCPToolBudget is the most tools a tenant URL lists before it serves them through
	// search by default; 0: no budget.
	MCPToolBudget int
	// SchemaProfile is how tools/list writes input schemas; "" is the default
	// (providers.DefaultSchemaProfile).
	SchemaProfile providers.SchemaProfile
	// AllowedOrigins are browser origins allowed to call the MCP URLs besides
	// PublicURL's own (DNS rebinding protection), and answered with CORS.
	AllowedOrigins []string
	// RemoteMCPAllowPrivate and RemoteMCPAllowCIDRs let remote MCP servers be at
	// private addresses (all of them, or these ranges); they are refused otherwise.
	RemoteMCPAllowPrivate bool
	RemoteMCPAllowCIDRs   []string
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names the client
	// address that sign-ins and unknown API keys are throttled by.
	TrustedProxies []string
	// RedisURL, when set, is the Redis that the fleet's nodes share limits through.
	RedisURL string
	// RedisTimeout bounds one Redis round trip.
	RedisTimeout time.Duration
	// Overload bounds the work the node takes on (admission, deadlines, drain).
	Overload overloadConfig
}

// configError is a configuration variable with a bad value; the process exits 2.
type configError struct {
	Name   string
	Reason string
}

func (e *configError) Error() string { return e.Name + ": " + e.Reason }

// loadConfig reads the configuration through getenv, applies the defaults, and checks
// every value; an error names the variable at fault.
func loadConfig(getenv func(string) string) (config, error) {
	vars := envVars()
	// get returns the variable's value, or the table's default when it is unset.
	get := func(name string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return tableDefault(vars, name)
	}
	c := config{
		Addr:    get("SWITCHBOARD_ADDR"),
		DataDir: get("SWITCHBOARD_DATA_DIR"),
	}
	if err := checkAddr(c.Addr); err != nil {
		return config{}, &configError{"SWITCHBOARD_ADDR", err.Error()}
	}
	c.DatabaseURL = cmp.Or(get("SWITCHBOARD_DATABASE_URL"), "sqlite:"+filepath.Join(c.DataDir, "switchboard.db"))
	if err := checkDatabaseURL(c.DatabaseURL); err != nil {
		return config{}, &configError{"SWITCHBOARD_DATABASE_URL", err.Error()}
	}
	c.KeyFile = cmp.Or(get("SWITCHBOARD_KEY_FILE"), filepath.Join(c.DataDir, "master.key"))
	if err := loadKeyringConfig(&c, get); err != nil {
		return config{}, err
	}
	if v := get("SWITCHBOARD_PUBLIC_URL"); v != "" {
		u, err := checkHTTPURL(v)
		if err != nil {
			return config{}, &configError{"SWITCHBOARD_PUBLIC_URL", err.Error()}
		}
		c.PublicURL = u
	}
	for _, spec := range all.Specs() {
		name := "SWITCHBOARD_" + strings.ToUpper(spec.Name) + "_BASE_URL"
		v := get(name)
		if v == "" {
			continue
		}
		u, err := checkHTTPURL(v)
		if err != nil {
			return config{}, &configError{name, err.Error()}
		}
		if c.BaseURLs == nil {
			c.BaseURLs = map[string]string{}
		}
		c.BaseURLs[spec.Name] = u
	}
	for _, spec := range all.Specs() {
		name := "SWITCHBOARD_" + strings.ToUpper(spec.Name) + "_RATE_LIMIT"
		v := get(name)
		if v == "" {
			continue
		}
		rl, err := parseRateLimit(v)
		if err != nil {
			return config{}, &configError{name, err.Error()}
		}
		if c.RateLimits == nil {
			c.RateLimits = map[string]limits.Rate{}
		}
		c.RateLimits[spec.Name] = rl
	}
	switch v := get("SWITCHBOARD_AUDIT_SYNCHRONOUS_COMMIT"); v {
	case "on":
	case "off":
		if !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
			return config{}, &configError{"SWITCHBOARD_AUDIT_SYNCHRONOUS_COMMIT", "off applies to PostgreSQL only; SWITCHBOARD_DATABASE_URL is not a postgres:// URL"}
		}
		c.AuditAsyncCommit = true
	default:
		return config{}, &configError{"SWITCHBOARD_AUDIT_SYNCHRONOUS_COMMIT", fmt.Sprintf("%q: want on or off", v)}
	}
	c.OpenAPIDir = get("SWITCHBOARD_OPENAPI_DIR")
	switch v := get("SWITCHBOARD_CATALOG"); v {
	case "on":
		c.Catalog = true
	case "off":
	default:
		return config{}, &configError{"SWITCHBOARD_CATALOG", fmt.Sprintf("%q: want on or off", v)}
	}
	apps, err := loadOAuthApps(get)
	if err != nil {
		return config{}, err
	}
	c.OAuthApps = apps
	c.RefreshInterval, err = time.ParseDuration(get("SWITCHBOARD_REFRESH_INTERVAL"))
	if err != nil || c.RefreshInterval < time.Second {
		return config{}, &configError{"SWITCHBOARD_REFRESH_INTERVAL", "must be a duration of at least 1s, such as 30s or 1m"}
	}
	c.UsageInterval, err = time.ParseDuration(get("SWITCHBOARD_USAGE_INTERVAL"))
	if err != nil || c.UsageInterval < time.Second || c.UsageInterval > time.Hour {
		return config{}, &configError{"SWITCHBOARD_USAGE_INTERVAL", "must be a duration from 1s to 1h, such as 1m"}
	}
	c.RunLease, err = time.ParseDuration(get("SWITCHBOARD_RUN_LEASE"))
	if err != nil || c.RunLease < time.Second {
		return config{}, &configError{"SWITCHBOARD_RUN_LEASE", "must be a duration of at least 1s, such as 30s"}
	}
	c.ScheduleMinInterval, err = time.ParseDuration(get("SWITCHBOARD_SCHEDULE_MIN_INTERVAL"))
	if err != nil || c.ScheduleMinInterval < time.Second || c.ScheduleMinInterval > time.Minute {
		return config{}, &configError{"SWITCHBOARD_SCHEDULE_MIN_INTERVAL", "must be a duration from 1s to 1m, such as 1m"}
	}
	c.MCPHeartbeat, err = time.ParseDuration(get("SWITCHBOARD_MCP_HEARTBEAT"))
	if err != nil || (c.MCPHeartbeat != 0 && c.MCPHeartbeat < 10*time.Millisecond) {
		return config{}, &configError{"SWITCHBOARD_MCP_HEARTBEAT", "must be a duration of at least 10ms, such as 25s, or 0s for none"}
	}
	c.MCPSessionsPerPrincipal, err = strconv.Atoi(get("SWITCHBOARD_MCP_SESSIONS_PER_PRINCIPAL"))
	if err != nil || c.MCPSessionsPerPrincipal < 1 || c.MCPSessionsPerPrincipal > 100000 {
		return config{}, &configError{"SWITCHBOARD_MCP_SESSIONS_PER_PRINCIPAL", "must be a whole number from 1 to 100000, such as 100"}
	}
	c.MCPListPageSize, err = strconv.Atoi(get("SWITCHBOARD_MCP_LIST_PAGE_SIZE"))
	if err != nil || c.MCPListPageSize < 1 || c.MCPListPageSize > 10000 {
		return config{}, &configError{"SWITCHBOARD_MCP_LIST_PAGE_SIZE", fmt.Sprintf("must be a whole number from 1 to 10000, such as %d", mcpadapter.DefaultListPageSize)}
	}
	c.MCPToolBudget, err = strconv.Atoi(get("SWITCHBOARD_MCP_TOOL_BUDGET"))
	if err != nil || c.MCPToolBudget < 0 || c.MCPToolBudget > 100000 {
		return config{}, &configError{"SWITCHBOARD_MCP_TOOL_BUDGET", fmt.Sprintf("must be a whole number from 0 (no budget) to 100000, such as %d", mcpadapter.DefaultToolBudget)}
	}
	if v := get("SWITCHBOARD_SCHEMA_PROFILE"); v != "" {
		if c.SchemaProfile, err = providers.ParseSchemaProfile(strings.ToLower(v)); err != nil {
			return config{}, &configError{"SWITCHBOARD_SCHEMA_PROFILE", "must be portable, gemini or full"}
		}
	}
	for o := range strings.SplitSeq(get("SWITCHBOARD_ALLOWED_ORIGINS"), ",") {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		if o == "*" {
			c.AllowedOrigins = append(c.AllowedOrigins, o)
			continue
		}
		norm, ok := mcpadapter.NormalizeOrigin(o)
		if !ok {
			return config{}, &configError{"SWITCHBOARD_ALLOWED_ORIGINS", fmt.Sprintf("%q is not an origin; use scheme://host[:port], for example https://app.example.com", o)}
		}
		c.AllowedOrigins = append(c.AllowedOrigins, norm)
	}
	if v := get(egress.AllowPrivateEnv); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return config{}, &configError{egress.AllowPrivateEnv, "must be true or false"}
		}
		c.RemoteMCPAllowPrivate = b
	}
	for cidr := range strings.SplitSeq(get(egress.AllowCIDRsEnv), ",") {
		if cidr = strings.TrimSpace(cidr); cidr != "" {
			c.RemoteMCPAllowCIDRs = append(c.RemoteMCPAllowCIDRs, cidr)
		}
	}
	if _, err := egress.NewGuard(c.RemoteMCPAllowPrivate, c.RemoteMCPAllowCIDRs); err != nil {
		return config{}, &configError{egress.AllowCIDRsEnv, err.Error()}
	}
	for p := range strings.SplitSeq(get("SWITCHBOARD_TRUSTED_PROXIES"), ",") {
		if p = strings.TrimSpace(p); p != "" {
			c.TrustedProxies = append(c.TrustedProxies, p)
		}
	}
	if _, err := limits.NewSources(c.TrustedProxies); err != nil {
		return config{}, &configError{"SWITCHBOARD_TRUSTED_PROXIES", err.Error()}
	}
	if c.RedisURL = get("SWITCHBOARD_REDIS_URL"); c.RedisURL != "" {
		r, err := limits.NewRedis(limits.RedisOptions{URL: c.RedisURL})
		if err != nil {
			return config{}, &configError{"SWITCHBOARD_REDIS_URL", "must be a redis:// or rediss:// URL, such as redis://redis:6379/0"}
		}
		_ = r.Close() // parsed only: it never connected
	}
	c.RedisTimeout, err = time.ParseDuration(get("SWITCHBOARD_REDIS_TIMEOUT"))
	if err != nil || c.RedisTimeout < time.Millisecond || c.RedisTimeout > time.Minute {
		return config{}, &configError{"SWITCHBOARD_REDIS_TIMEOUT", "must be a duration from 1ms to 1m, such as 250ms"}
	}
	if err := c.LogLevel.UnmarshalText([]byte(get("SWITCHBOARD_LOG_LEVEL"))); err != nil {
		return config{}, &configError{"SWITCHBOARD_LOG_LEVEL", fmt.Sprintf("%q is not a level; use debug, info, warn or error", getenv("SWITCHBOARD_LOG_LEVEL"))}
	}
	c.LogFormat = strings.ToLower(get("SWITCHBOARD_LOG_FORMAT"))
	if c.LogFormat != telemetry.LogText && c.LogFormat != telemetry.LogJSON {
		return config{}, &configError{"SWITCHBOARD_LOG_FORMAT", fmt.Sprintf("%q is not a format; use text or json", c.LogFormat)}
	}
	if c.AdminAddr = get("SWITCHBOARD_ADMIN_ADDR"); c.AdminAddr != "" {
		if err := checkAddr(c.AdminAddr); err != nil {
			return config{}, &configError{"SWITCHBOARD_ADMIN_ADDR", err.Error()}
		}
		if samePort(c.AdminAddr, c.Addr) {
			return config{}, &configError{"SWITCHBOARD_ADMIN_ADDR", fmt.Sprintf("%q would share the public listener SWITCHBOARD_ADDR (%s); give the admin listener a port of its own", c.AdminAddr, c.Addr)}
		}
	}
	for h := range strings.SplitSeq(get(telemetry.AdminHostsEnv), ",") {
		if h = strings.TrimSpace(h); h == "" {
			continue
		}
		if err := telemetry.CheckAdminHost(h); err != nil {
			return config{}, &configError{telemetry.AdminHostsEnv, err.Error()}
		}
		c.AdminHosts = append(c.AdminHosts, h)
	}
	overload, err := loadOverloadConfig(get)
	if err != nil {
		return config{}, err
	}
	c.Overload = overload
	if c.TracesEndpoint = telemetry.TracesEndpoint(getenv); c.TracesEndpoint != "" {
		if _, err := checkHTTPURL(c.TracesEndpoint); err != nil {
			return config{}, &configError{"OTEL_EXPORTER_OTLP_ENDPOINT", err.Error()}
		}
	}
	return c, nil
}

// loadOAuthApps reads the deployment's OAuth app of every provider that supports OAuth,
// the curated ones and the built-in catalog's:
// SWITCHBOARD_OAUTH_<PROVIDER>_CLIENT_ID and _CLIENT_SECRET (both or neither), and the
// optional _AUTH_URL and _TOKEN_URL endpoint overrides.
func loadOAuthApps(get func(name string) string) (map[string]connections.OAuthApp, error) {
	apps := map[string]connections.OAuthApp{}
	for _, upper := range providerNames(true) {
		name := strings.ToLower(upper)
		prefix := "SWITCHBOARD_OAUTH_" + upper + "_"
		app := connections.OAuthApp{ClientID: get(prefix + "CLIENT_ID"), ClientSecret: get(prefix + "CLIENT_SECRET")}
		switch {
		case app.ClientID != "" && app.ClientSecret == "":
			return nil, &configError{prefix + "CLIENT_SECRET", "is required when " + prefix + "CLIENT_ID is set"}
		case app.ClientID == "" && app.ClientSecret != "":
			return nil, &configError{prefix + "CLIENT_ID", "is required when " + prefix + "CLIENT_SECRET is set"}
		}
		for _, v := range []struct {
			name string
			val  *string
		}{{prefix + "AUTH_URL", &app.AuthURL}, {prefix + "TOKEN_URL", &app.TokenURL}} {
			raw := get(v.name)
			if raw == "" {
				continue
			}
			u, err := checkHTTPURL(raw)
			if err != nil {
				return nil, &configError{v.name, err.Error()}
			}
			*v.val = u
		}
		if app != (connections.OAuthApp{}) {
			apps[name] = app
		}
	}
	if len(apps) == 0 {
		return nil, nil
	}
	return apps, nil
}

// loadKeyringConfig reads the keyring's variables; a Vault keyring needs its address,
// token and key.
func loadKeyringConfig(c *config, get func(name string) string) error {
	c.Keyring = get("SWITCHBOARD_KEYRING")
	switch c.Keyring {
	case "file":
		return nil
	case "vault":
	default:
		return &configError{"SWITCHBOARD_KEYRING", fmt.Sprintf("%q is not a keyring; use file or vault", c.Keyring)}
	}
	addr := get("SWITCHBOARD_VAULT_ADDR")
	if addr == "" {
		return &configError{"SWITCHBOARD_VAULT_ADDR", "is required with SWITCHBOARD_KEYRING=vault"}
	}
	u, err := checkHTTPURL(addr)
	if err != nil {
		return &configError{"SWITCHBOARD_VAULT_ADDR", err.Error()}
	}
	c.VaultAddr = u
	c.VaultToken = cmp.Or(get("SWITCHBOARD_VAULT_TOKEN"), get("VAULT_TOKEN"))
	if c.VaultToken == "" {
		return &configError{"SWITCHBOARD_VAULT_TOKEN", "is required with SWITCHBOARD_KEYRING=vault (or set VAULT_TOKEN)"}
	}
	c.VaultTransitKey = get("SWITCHBOARD_VAULT_TRANSIT_KEY")
	if c.VaultTransitKey == "" {
		return &configError{"SWITCHBOARD_VAULT_TRANSIT_KEY", "is required with SWITCHBOARD_KEYRING=vault"}
	}
	if strings.ContainsAny(c.VaultTransitKey, "/: ") {
		return &configError{"SWITCHBOARD_VAULT_TRANSIT_KEY", fmt.Sprintf("%q must be a bare key name, without / or :", c.VaultTransitKey)}
	}
	mount := get("SWITCHBOARD_VAULT_TRANSIT_MOUNT")
	c.VaultTransitMount = strings.Trim(mount, "/")
	if c.VaultTransitMount == "" || strings.ContainsAny(c.VaultTransitMount, ": ") {
		return &configError{"SWITCHBOARD_VAULT_TRANSIT_MOUNT", fmt.Sprintf("%q is not a mount path", mount)}
	}
	return nil
}

func checkAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port (for example 127.0.0.1:8080)", addr)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q has no valid port; use a number from 0 to 65535", addr)
	}
	if strings.ContainsAny(host, "/ ") {
		return fmt.Errorf("%q has no valid host", addr)
	}
	return nil
}

// samePort reports whether two listening addresses would take the same port: the same
// non-zero port on the same host, or on any host when either listens on every interface.
func samePort(a, b string) bool {
	ah, ap, _ := net.SplitHostPort(a)
	bh, bp, _ := net.SplitHostPort(b)
	if ap != bp || ap == "0" {
		return false
	}
	unspecified := func(h string) bool {
		ip := net.ParseIP(h)
		return h == "" || (ip != nil && ip.IsUnspecified())
	}
	return ah == bh || unspecified(ah) || unspecified(bh)
}

func checkDatabaseURL(v string) error {
	if !strings.Contains(v, "://") {
		if strings.TrimPrefix(v, "sqlite:") == "" {
			return fmt.Errorf("sqlite: needs a file path, for example sqlite:./data/switchboard.db")
		}
		return nil
	}
	u, err := url.Parse(v)
	if err != nil {
		return fmt.Errorf("is not a URL; use sqlite:PATH or postgres://user@host:5432/db")
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return fmt.Errorf("scheme %q is not supported; use sqlite:PATH or postgres://…", u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("%s has no host", u.Redacted())
	}
	return nil
}

// checkHTTPURL checks an absolute http(s) URL and returns it without a trailing slash.
func checkHTTPURL(v string) (string, error) {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute http:// or https:// URL", v)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%q must not have a query or fragment", v)
	}
	return strings.TrimRight(v, "/"), nil
}

// publicURLFor is the default public URL for a listening address: http://ADDR, with
// an unspecified host (0.0.0.0, ::) shown as localhost.
func publicURLFor(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// toolBudget is the adapter's tool budget for SWITCHBOARD_MCP_TOOL_BUDGET, whose 0
// turns the budget off (the adapter's negative; its 0 is the default).
func toolBudget(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// parseRateLimit reads a token bucket written PER_SECOND:BURST (10:50, 0.5:5).
func parseRateLimit(v string) (limits.Rate, error) {
	rate, burst, ok := strings.Cut(v, ":")
	if !ok {
		return limits.Rate{}, fmt.Errorf("%q: want PER_SECOND:BURST, such as 10:50", v)
	}
	perSecond, err := strconv.ParseFloat(rate, 64)
	if err != nil || perSecond <= 0 || math.IsInf(perSecond, 0) || math.IsNaN(perSecond) {
		return limits.Rate{}, fmt.Errorf("%q: the rate before the colon must be a number of requests a second above 0, such as 10 or 0.5", v)
	}
	b, err := strconv.Atoi(burst)
	if err != nil || b < 1 {
		return limits.Rate{}, fmt.Errorf("%q: the burst after the colon must be a whole number of requests of at least 1, such as 50", v)
	}
	return limits.Rate{PerSecond: perSecond, Burst: b}, nil
}
