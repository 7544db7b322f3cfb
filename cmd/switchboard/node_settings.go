package main

import (
	"cmp"
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/fleet"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
)

// nodeSettings returns what this node publishes about its settings for its peers to
// compare: everything that must be the same on every node of a fleet and is not a
// secret (OAuth client IDs but not their secrets; key IDs but not keys; the Vault
// address and key name but not its token). The keyring's part is read at each
// heartbeat, since a rotation changes it.
func nodeSettings(cfg config, publicURL string, kr keyring.Rotator) func(context.Context) (fleet.Settings, error) {
	static := fleet.Settings{
		"public_url":                 publicURL,
		"keyring":                    cfg.Keyring,
		"allowed_origins":            strings.Join(cfg.AllowedOrigins, ","),
		"schema_profile":             string(cmp.Or(cfg.SchemaProfile, providers.DefaultSchemaProfile)),
		"remote_mcp.allow_private":   strconv.FormatBool(cfg.RemoteMCPAllowPrivate),
		"remote_mcp.allow_cidrs":     strings.Join(cfg.RemoteMCPAllowCIDRs, ","),
		"refresh_interval":           cfg.RefreshInterval.String(),
		"run_lease":                  cfg.RunLease.String(),
		"mcp_sessions_per_principal": strconv.Itoa(cfg.MCPSessionsPerPrincipal),
		"mcp_list_page_size":         strconv.Itoa(cfg.MCPListPageSize),
		"mcp_tool_budget":            strconv.Itoa(cfg.MCPToolBudget),
		// A node without the fleet's Redis keeps its limits to itself.
		"redis": redisWithoutSecret(cfg.RedisURL),
	}
	if cfg.Keyring == "vault" {
		static["vault.addr"] = cfg.VaultAddr
		static["vault.transit_mount"] = cfg.VaultTransitMount
		static["vault.transit_key"] = cfg.VaultTransitKey
	}
	for provider, app := range cfg.OAuthApps {
		static["oauth."+provider+".client_id"] = app.ClientID
		if app.AuthURL != "" {
			static["oauth."+provider+".auth_url"] = app.AuthURL
		}
		if app.TokenURL != "" {
			static["oauth."+provider+".token_url"] = app.TokenURL
		}
	}
	for provider, u := range cfg.BaseURLs {
		static["base_url."+provider] = u
	}
	return func(ctx context.Context) (fleet.Settings, error) {
		s := make(fleet.Settings, len(static)+2)
		for k, v := range static {
			s[k] = v
		}
		// A keyring that does not answer (Vault down) is itself a difference worth
		// showing, not a reason to stop the heartbeat.
		active, err := kr.ActiveKeyID(ctx)
		if err != nil {
			active = "unavailable"
		}
		s["keyring.active_key"] = active
		if l, ok := kr.(interface{ KeyIDs() []string }); ok {
			s["keyring.key_ids"] = strings.Join(l.KeyIDs(), ",")
		}
		return s, nil
	}
}

// settingsDrift adapts the fleet's differences to what /readyz shows.
func settingsDrift(m *fleet.Membership) func(context.Context) ([]api.SettingsDrift, error) {
	return func(ctx context.Context) ([]api.SettingsDrift, error) {
		diffs, err := m.Differences(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]api.SettingsDrift, 0, len(diffs))
		for _, d := range diffs {
			out = append(out, api.SettingsDrift{Node: d.Node, Version: d.Version, Settings: d.Settings})
		}
		return out, nil
	}
}

// redisWithoutSecret is the Redis URL's scheme, host and path, without its user and
// password; "none" when there is no Redis.
func redisWithoutSecret(raw string) string {
	if raw == "" {
		return "none"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "unparsable"
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// feedListening reports the change feed listener's state for /readyz; nil for the
// in-process feed of a single node, which has nothing to listen to.
func feedListening(feed events.Bus) func() bool {
	if l, ok := feed.(interface{ Connected() bool }); ok {
		return l.Connected
	}
	return nil
}
