package main

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/mcpadapter"
	"github.com/switchboard-hub/switchboard/providers"
)

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		want    config
		wantVar string // the variable the error names; "" for success
	}{
		{
			name: "defaults",
			want: config{Addr: "127.0.0.1:8080", DataDir: "./data", DatabaseURL: "sqlite:data/switchboard.db", KeyFile: "data/master.key", Keyring: "file", Catalog: true, LogLevel: slog.LevelInfo, LogFormat: "text", RefreshInterval: time.Minute, UsageInterval: time.Minute, RunLease: 30 * time.Second, ScheduleMinInterval: time.Minute, RedisTimeout: 250 * time.Millisecond, MCPHeartbeat: 25 * time.Second, MCPSessionsPerPrincipal: 100, MCPListPageSize: mcpadapter.DefaultListPageSize, MCPToolBudget: mcpadapter.DefaultToolBudget, SchemaProfile: providers.ProfilePortable},
		},
		{
			name: "everything set",
			env: map[string]string{
				"SWITCHBOARD_ADDR": "0.0.0.0:9000", "SWITCHBOARD_DATA_DIR": "/var/lib/sb",
				"SWITCHBOARD_DATABASE_URL": "postgres://sb:pw@db:5432/sb?sslmode=disable", "SWITCHBOARD_KEY_FILE": "/run/secrets/key",
				"SWITCHBOARD_PUBLIC_URL": "https://hub.example.com/", "SWITCHBOARD_GITHUB_BASE_URL": "https://ghe.example.com/api/v3/",
				"SWITCHBOARD_SLACK_BASE_URL": "http://127.0.0.1:9999/api", "SWITCHBOARD_LOG_LEVEL": "DEBUG",
				"SWITCHBOARD_OAUTH_GITHUB_CLIENT_ID": "Iv1.abc", "SWITCHBOARD_OAUTH_GITHUB_CLIENT_SECRET": "s3cret",
				"SWITCHBOARD_OAUTH_GITHUB_AUTH_URL": "https://ghe.example.com/login/oauth/authorize", "SWITCHBOARD_OAUTH_GITHUB_TOKEN_URL": "https://ghe.example.com/login/oauth/access_token",
				"SWITCHBOARD_REFRESH_INTERVAL": "30s", "SWITCHBOARD_USAGE_INTERVAL": "10s", "SWITCHBOARD_RUN_LEASE": "5s", "SWITCHBOARD_SCHEDULE_MIN_INTERVAL": "10s", "SWITCHBOARD_MCP_SESSIONS_PER_PRINCIPAL": "20", "SWITCHBOARD_MCP_HEARTBEAT": "5s", "SWITCHBOARD_MCP_LIST_PAGE_SIZE": "50", "SWITCHBOARD_MCP_TOOL_BUDGET": "0",
				"SWITCHBOARD_LOG_FORMAT": "JSON", "SWITCHBOARD_ADMIN_ADDR": "127.0.0.1:9090", "SWITCHBOARD_ADMIN_HOSTS": "metrics.internal, sb-1.example.com.", "SWITCHBOARD_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.7",
				"SWITCHBOARD_REDIS_URL": "redis://:pw@redis:6379/0", "SWITCHBOARD_REDIS_TIMEOUT": "2s", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/",
				"SWITCHBOARD_SCHEMA_PROFILE": "Gemini",
			},
			want: config{Addr: "0.0.0.0:9000", DataDir: "/var/lib/sb", DatabaseURL: "postgres://sb:pw@db:5432/sb?sslmode=disable",
				KeyFile: "/run/secrets/key", PublicURL: "https://hub.example.com",
				BaseURLs: map[string]string{"github": "https://ghe.example.com/api/v3", "slack": "http://127.0.0.1:9999/api"}, Keyring: "file", Catalog: true, LogLevel: slog.LevelDebug, LogFormat: "json", AdminAddr: "127.0.0.1:9090", AdminHosts: []string{"metrics.internal", "sb-1.example.com."}, TracesEndpoint: "http://collector:4318/v1/traces", RefreshInterval: 30 * time.Second, UsageInterval: 10 * time.Second, RunLease: 5 * time.Second, ScheduleMinInterval: 10 * time.Second, RedisTimeout: 2 * time.Second, MCPHeartbeat: 5 * time.Second, MCPSessionsPerPrincipal: 20, MCPListPageSize: 50, MCPToolBudget: 0,
				TrustedProxies: []string{"10.0.0.0/8", "192.0.2.7"}, RedisURL: "redis://:pw@redis:6379/0", SchemaProfile: providers.ProfileGemini,
				OAuthApps: map[string]connections.OAuthApp{"github": {ClientID: "Iv1.abc", ClientSecret: "s3cret",
					AuthURL: "https://ghe.example.com/login/oauth/authorize", TokenURL: "https://ghe.example.com/login/oauth/access_token"}}},
		},
		{
			name: "vault keyring",
			env: map[string]string{
				"SWITCHBOARD_KEYRING": "vault", "SWITCHBOARD_VAULT_ADDR": "https://vault.internal:8200/", "SWITCHBOARD_VAULT_TOKEN": "hvs.abc",
				"SWITCHBOARD_VAULT_TRANSIT_KEY": "switchboard", "SWITCHBOARD_VAULT_TRANSIT_MOUNT": "/kms/transit/", "VAULT_TOKEN": "hvs.ignored",
			},
			want: config{Addr: "127.0.0.1:8080", DataDir: "./data", DatabaseURL: "sqlite:data/switchboard.db", KeyFile: "data/master.key", Catalog: true, LogLevel: slog.LevelInfo, LogFormat: "text", RefreshInterval: time.Minute, UsageInterval: time.Minute, RunLease: 30 * time.Second, ScheduleMinInterval: time.Minute, RedisTimeout: 250 * time.Millisecond, MCPHeartbeat: 25 * time.Second, MCPSessionsPerPrincipal: 100, MCPListPageSize: mcpadapter.DefaultListPageSize, MCPToolBudget: mcpadapter.DefaultToolBudget, SchemaProfile: providers.ProfilePortable,
				Keyring: "vault", VaultAddr: "https://vault.internal:8200", VaultToken: "hvs.abc", VaultTransitKey: "switchboard", VaultTransitMount: "kms/transit"},
		},
		{
			name: "vault token from VAULT_TOKEN",
			env:  map[string]string{"SWITCHBOARD_KEYRING": "vault", "SWITCHBOARD_VAULT_ADDR": "http://127.0.0.1:8200", "VAULT_TOKEN": "hvs.env", "SWITCHBOARD_VAULT_TRANSIT_KEY": "sb"},
			want: config{Addr: "127.0.0.1:8080", DataDir: "./data", DatabaseURL: "sqlite:data/switchboard.db", KeyFile: "data/master.key", Catalog: true, LogLevel: slog.LevelInfo, LogFormat: "text", RefreshInterval: time.Minute, UsageInterval: time.Minute, RunLease: 30 * time.Second, ScheduleMinInterval: time.Minute, RedisTimeout: 250 * time.Millisecond, MCPHeartbeat: 25 * time.Second, MCPSessionsPerPrincipal: 100, MCPListPageSize: mcpadapter.DefaultListPageSize, MCPToolBudget: mcpadapter.DefaultToolBudget, SchemaProfile: providers.ProfilePortable,
				Keyring: "vault", VaultAddr: "http://127.0.0.1:8200", VaultToken: "hvs.env", VaultTransitKey: "sb", VaultTransitMount: "transit"},
		},
		{
			name: "data dir moves the defaults",
			env:  map[string]string{"SWITCHBOARD_DATA_DIR": "/tmp/sb"},
			want: config{Addr: "127.0.0.1:8080", DataDir: "/tmp/sb", DatabaseURL: "sqlite:/tmp/sb/switchboard.db", KeyFile: "/tmp/sb/master.key", Keyring: "file", Catalog: true, LogLevel: slog.LevelInfo, LogFormat: "text", RefreshInterval: time.Minute, UsageInterval: time.Minute, RunLease: 30 * time.Second, ScheduleMinInterval: time.Minute, RedisTimeout: 250 * time.Millisecond, MCPHeartbeat: 25 * time.Second, MCPSessionsPerPrincipal: 100, MCPListPageSize: mcpadapter.DefaultListPageSize, MCPToolBudget: mcpadapter.DefaultToolBudget, SchemaProfile: providers.ProfilePortable},
		},
		{
			name: "the catalog off",
			env:  map[string]string{"SWITCHBOARD_DATA_DIR": "/tmp/sb", "SWITCHBOARD_CATALOG": "off"},
			want: config{Addr: "127.0.0.1:8080", DataDir: "/tmp/sb", DatabaseURL: "sqlite:/tmp/sb/switchboard.db", KeyFile: "/tmp/sb/master.key", Keyring: "file", LogLevel: slog.LevelInfo, LogFormat: "text", RefreshInterval: time.Minute, UsageInterval: time.Minute, RunLease: 30 * time.Second, ScheduleMinInterval: time.Minute, RedisTimeout: 250 * time.Millisecond, MCPHeartbeat: 25 * time.Second, MCPSessionsPerPrincipal: 100, MCPListPageSize: mcpadapter.DefaultListPageSize, MCPToolBudget: mcpadapter.DefaultToolBudget, SchemaProfile: providers.ProfilePortable},
		},
		{name: "unknown schema profile", env: map[string]string{"SWITCHBOARD_SCHEMA_PROFILE": "strict"}, wantVar: "SWITCHBOARD_SCHEMA_PROFILE"},
		{name: "addr without port", env: map[string]string{"SWITCHBOARD_ADDR": "localhost"}, wantVar: "SWITCHBOARD_ADDR"},
		{name: "schedule minimum under a second", env: map[string]string{"SWITCHBOARD_SCHEDULE_MIN_INTERVAL": "500ms"}, wantVar: "SWITCHBOARD_SCHEDULE_MIN_INTERVAL"},
		{name: "schedule minimum over a minute", env: map[string]string{"SWITCHBOARD_SCHEDULE_MIN_INTERVAL": "5m"}, wantVar: "SWITCHBOARD_SCHEDULE_MIN_INTERVAL"},
		{name: "admin host with a port", env: map[string]string{"SWITCHBOARD_ADMIN_HOSTS": "metrics.internal:9090"}, wantVar: "SWITCHBOARD_ADMIN_HOSTS"},
		{name: "admin host a URL", env: map[string]string{"SWITCHBOARD_ADMIN_HOSTS": "http://metrics.internal"}, wantVar: "SWITCHBOARD_ADMIN_HOSTS"},
		{name: "trusted proxy not an address", env: map[string]string{"SWITCHBOARD_TRUSTED_PROXIES": "10.0.0.0/8,proxy.internal"}, wantVar: "SWITCHBOARD_TRUSTED_PROXIES"},
		{name: "addr with bad port", env: map[string]string{"SWITCHBOARD_ADDR": "127.0.0.1:http"}, wantVar: "SWITCHBOARD_ADDR"},
		{name: "catalog neither on nor off", env: map[string]string{"SWITCHBOARD_CATALOG": "yes"}, wantVar: "SWITCHBOARD_CATALOG"},
		{name: "addr port out of range", env: map[string]string{"SWITCHBOARD_ADDR": "127.0.0.1:70000"}, wantVar: "SWITCHBOARD_ADDR"},
		{name: "database scheme", env: map[string]string{"SWITCHBOARD_DATABASE_URL": "mysql://db/sb"}, wantVar: "SWITCHBOARD_DATABASE_URL"},
		{name: "empty sqlite path", env: map[string]string{"SWITCHBOARD_DATABASE_URL": "sqlite:"}, wantVar: "SWITCHBOARD_DATABASE_URL"},
		{name: "postgres without host", env: map[string]string{"SWITCHBOARD_DATABASE_URL": "postgres:///sb"}, wantVar: "SWITCHBOARD_DATABASE_URL"},
		{name: "relative public URL", env: map[string]string{"SWITCHBOARD_PUBLIC_URL": "hub.example.com"}, wantVar: "SWITCHBOARD_PUBLIC_URL"},
		{name: "public URL with query", env: map[string]string{"SWITCHBOARD_PUBLIC_URL": "https://hub.example.com/?x=1"}, wantVar: "SWITCHBOARD_PUBLIC_URL"},
		{name: "github base URL", env: map[string]string{"SWITCHBOARD_GITHUB_BASE_URL": "ftp://ghe"}, wantVar: "SWITCHBOARD_GITHUB_BASE_URL"},
		{name: "slack base URL", env: map[string]string{"SWITCHBOARD_SLACK_BASE_URL": "slack.com/api"}, wantVar: "SWITCHBOARD_SLACK_BASE_URL"},
		{name: "redis url not redis", env: map[string]string{"SWITCHBOARD_REDIS_URL": "http://redis:6379"}, wantVar: "SWITCHBOARD_REDIS_URL"},
		{name: "redis timeout not a duration", env: map[string]string{"SWITCHBOARD_REDIS_TIMEOUT": "soon"}, wantVar: "SWITCHBOARD_REDIS_TIMEOUT"},
		{name: "redis timeout zero", env: map[string]string{"SWITCHBOARD_REDIS_TIMEOUT": "0s"}, wantVar: "SWITCHBOARD_REDIS_TIMEOUT"},
		{name: "log level", env: map[string]string{"SWITCHBOARD_LOG_LEVEL": "loud"}, wantVar: "SWITCHBOARD_LOG_LEVEL"},
		{name: "OTLP endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, wantVar: "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{name: "log format", env: map[string]string{"SWITCHBOARD_LOG_FORMAT": "logfmt"}, wantVar: "SWITCHBOARD_LOG_FORMAT"},
		{name: "admin addr without port", env: map[string]string{"SWITCHBOARD_ADMIN_ADDR": "localhost"}, wantVar: "SWITCHBOARD_ADMIN_ADDR"},
		{name: "admin addr is the public one", env: map[string]string{"SWITCHBOARD_ADMIN_ADDR": "127.0.0.1:8080"}, wantVar: "SWITCHBOARD_ADMIN_ADDR"},
		{name: "admin addr on every interface at the public port", env: map[string]string{"SWITCHBOARD_ADMIN_ADDR": "0.0.0.0:8080"}, wantVar: "SWITCHBOARD_ADMIN_ADDR"},
		{name: "oauth client id without secret", env: map[string]string{"SWITCHBOARD_OAUTH_SLACK_CLIENT_ID": "123.456"}, wantVar: "SWITCHBOARD_OAUTH_SLACK_CLIENT_SECRET"},
		{name: "oauth secret without client id", env: map[string]string{"SWITCHBOARD_OAUTH_GITHUB_CLIENT_SECRET": "x"}, wantVar: "SWITCHBOARD_OAUTH_GITHUB_CLIENT_ID"},
		{
			name: "a catalog API's OAuth app",
			env:  map[string]string{"SWITCHBOARD_OAUTH_GMAIL_CLIENT_ID": "1234.apps.googleusercontent.com", "SWITCHBOARD_OAUTH_GMAIL_CLIENT_SECRET": "GOCSPX-x", "SWITCHBOARD_OAUTH_MICROSOFT_GRAPH_TOKEN_URL": "https://login.example.com/token"},
			want: config{Addr: "127.0.0.1:8080", DataDir: "./data", DatabaseURL: "sqlite:data/switchboard.db", KeyFile: "data/master.key", Keyring: "file", Catalog: true, LogLevel: slog.LevelInfo, LogFormat: "text", RefreshInterval: time.Minute, UsageInterval: time.Minute, RunLease: 30 * time.Second, ScheduleMinInterval: time.Minute, RedisTimeout: 250 * time.Millisecond, MCPHeartbeat: 25 * time.Second, MCPSessionsPerPrincipal: 100, MCPListPageSize: mcpadapter.DefaultListPageSize, MCPToolBudget: mcpadapter.DefaultToolBudget, SchemaProfile: providers.ProfilePortable,
				OAuthApps: map[string]connections.OAuthApp{"gmail": {ClientID: "1234.apps.googleusercontent.com", ClientSecret: "GOCSPX-x"}, "microsoft_graph": {TokenURL: "https://login.example.com/token"}}},
		},
		{name: "a catalog API's OAuth client id without secret", env: map[string]string{"SWITCHBOARD_OAUTH_GOOGLE_CALENDAR_CLIENT_ID": "1234"}, wantVar: "SWITCHBOARD_OAUTH_GOOGLE_CALENDAR_CLIENT_SECRET"},
		{name: "oauth token URL", env: map[string]string{"SWITCHBOARD_OAUTH_GITHUB_TOKEN_URL": "ghe/token"}, wantVar: "SWITCHBOARD_OAUTH_GITHUB_TOKEN_URL"},
		{name: "refresh interval", env: map[string]string{"SWITCHBOARD_REFRESH_INTERVAL": "10ms"}, wantVar: "SWITCHBOARD_REFRESH_INTERVAL"},
		{name: "run lease", env: map[string]string{"SWITCHBOARD_RUN_LEASE": "soon"}, wantVar: "SWITCHBOARD_RUN_LEASE"},
		{name: "usage interval under a second", env: map[string]string{"SWITCHBOARD_USAGE_INTERVAL": "500ms"}, wantVar: "SWITCHBOARD_USAGE_INTERVAL"},
		{name: "usage interval over an hour", env: map[string]string{"SWITCHBOARD_USAGE_INTERVAL": "2h"}, wantVar: "SWITCHBOARD_USAGE_INTERVAL"},
		{name: "heartbeat too short", env: map[string]string{"SWITCHBOARD_MCP_HEARTBEAT": "1ms"}, wantVar: "SWITCHBOARD_MCP_HEARTBEAT"},
		{name: "heartbeat not a duration", env: map[string]string{"SWITCHBOARD_MCP_HEARTBEAT": "often"}, wantVar: "SWITCHBOARD_MCP_HEARTBEAT"},
		{name: "sessions per principal", env: map[string]string{"SWITCHBOARD_MCP_SESSIONS_PER_PRINCIPAL": "0"}, wantVar: "SWITCHBOARD_MCP_SESSIONS_PER_PRINCIPAL"},
		{name: "list page size zero", env: map[string]string{"SWITCHBOARD_MCP_LIST_PAGE_SIZE": "0"}, wantVar: "SWITCHBOARD_MCP_LIST_PAGE_SIZE"},
		{name: "list page size not a number", env: map[string]string{"SWITCHBOARD_MCP_LIST_PAGE_SIZE": "many"}, wantVar: "SWITCHBOARD_MCP_LIST_PAGE_SIZE"},
		{name: "tool budget negative", env: map[string]string{"SWITCHBOARD_MCP_TOOL_BUDGET": "-1"}, wantVar: "SWITCHBOARD_MCP_TOOL_BUDGET"},
		{name: "keyring", env: map[string]string{"SWITCHBOARD_KEYRING": "kms"}, wantVar: "SWITCHBOARD_KEYRING"},
		{name: "vault without address", env: map[string]string{"SWITCHBOARD_KEYRING": "vault", "SWITCHBOARD_VAULT_TOKEN": "t", "SWITCHBOARD_VAULT_TRANSIT_KEY": "k"}, wantVar: "SWITCHBOARD_VAULT_ADDR"},
		{name: "vault address not a URL", env: map[string]string{"SWITCHBOARD_KEYRING": "vault", "SWITCHBOARD_VAULT_ADDR": "vault:8200", "SWITCHBOARD_VAULT_TOKEN": "t", "SWITCHBOARD_VAULT_TRANSIT_KEY": "k"}, wantVar: "SWITCHBOARD_VAULT_ADDR"},
		{name: "vault without token", env: map[string]string{"SWITCHBOARD_KEYRING": "vault", "SWITCHBOARD_VAULT_ADDR": "http://v:8200", "SWITCHBOARD_VAULT_TRANSIT_KEY": "k"}, wantVar: "SWITCHBOARD_VAULT_TOKEN"},
		{name: "vault without key", env: map[string]string{"SWITCHBOARD_KEYRING": "vault", "SWITCHBOARD_VAULT_ADDR": "http://v:8200", "SWITCHBOARD_VAULT_TOKEN": "t"}, wantVar: "SWITCHBOARD_VAULT_TRANSIT_KEY"},
		{name: "vault key with a slash", env: map[string]string{"SWITCHBOARD_KEYRING": "vault", "SWITCHBOARD_VAULT_ADDR": "http://v:8200", "SWITCHBOARD_VAULT_TOKEN": "t", "SWITCHBOARD_VAULT_TRANSIT_KEY": "a/b"}, wantVar: "SWITCHBOARD_VAULT_TRANSIT_KEY"},
		{name: "vault mount", env: map[string]string{"SWITCHBOARD_KEYRING": "vault", "SWITCHBOARD_VAULT_ADDR": "http://v:8200", "SWITCHBOARD_VAULT_TOKEN": "t", "SWITCHBOARD_VAULT_TRANSIT_KEY": "k", "SWITCHBOARD_VAULT_TRANSIT_MOUNT": "/"}, wantVar: "SWITCHBOARD_VAULT_TRANSIT_MOUNT"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := loadConfig(func(k string) string { return tc.env[k] })
			if tc.wantVar == "" {
				if err != nil {
					t.Fatalf("loadConfig: %v", err)
				}
				// The drain's defaults come from the table like every other.
				want := tc.want
				if want.Overload.DrainTimeout == 0 {
					want.Overload.DrainTimeout = defaultDrainTimeout
				}
				if want.Overload.DrainLead == 0 {
					want.Overload.DrainLead = defaultDrainLead
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("config (-want +got):\n%s", diff)
				}
				return
			}
			var ce *configError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a configError naming %s", err, tc.wantVar)
			}
			if ce.Name != tc.wantVar || ce.Reason == "" {
				t.Errorf("error names %q (%q), want %s with a reason", ce.Name, ce.Reason, tc.wantVar)
			}
		})
	}
}

func TestPublicURLFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, addr, want string
	}{
		{name: "loopback", addr: "127.0.0.1:8080", want: "http://127.0.0.1:8080"},
		{name: "every IPv4 interface", addr: "0.0.0.0:8080", want: "http://localhost:8080"},
		{name: "every interface", addr: ":8080", want: "http://localhost:8080"},
		{name: "IPv6 unspecified", addr: "[::]:8080", want: "http://localhost:8080"},
		{name: "IPv6 loopback", addr: "[::1]:9000", want: "http://[::1]:9000"},
		{name: "host name", addr: "hub.internal:80", want: "http://hub.internal:80"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, publicURLFor(tc.addr)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
