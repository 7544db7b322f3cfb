package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/switchboard-hub/switchboard/providers"
)

// oauth is Slack's OAuth v2 flow: oauth/v2/authorize with bot scopes in scope and user
// scopes in user_scope (comma-separated), and oauth.v2.access for the code and, with
// token rotation enabled, for refresh tokens.
// Slack docs: https://api.slack.com/authentication/oauth-v2 and https://api.slack.com/authentication/rotation
func oauth() *providers.OAuth2 {
	return &providers.OAuth2{
		AuthURL:  "https://slack.com/oauth/v2/authorize",
		TokenURL: "https://slack.com/api/oauth.v2.access",
		// The bot scopes every Slack operation needs except search_messages, which only
		// a user token may call (a pasted xoxp- token with search:read).
		Scopes: []string{"channels:read", "channels:history", "channels:manage", "groups:write", "chat:write", "files:write",
			"pins:read", "pins:write", "reactions:write", "users:read", "users:read.email"},
		ScopeSeparator: ",",
		TokenResponse:  tokenResponse,
		TokenMeta:      tokenMeta,
		Revoke:         revoke,
	}
}

// tokenResponse rewrites oauth.v2.access's answer into the standard token response:
// "ok": false becomes {"error": …}; the bot token stays the connection's token, and when
// only user scopes were granted the user token (authed_user.access_token, with its
// refresh token and lifetime) takes its place. Slack's token_type ("bot", "user") is
// kept as slack_token_type, and token_type becomes Bearer, the header Slack expects.
// Slack API docs: https://api.slack.com/methods/oauth.v2.access
func tokenResponse(body []byte) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("oauth.v2.access answered something that is not JSON: %w", err)
	}
	if ok, _ := m["ok"].(bool); !ok {
		code, _ := m["error"].(string)
		if code == "" {
			code = "unknown_error"
		}
		return json.Marshal(map[string]any{"error": code, "ok": false})
	}
	if tok, _ := m["access_token"].(string); tok == "" {
		user, _ := m["authed_user"].(map[string]any)
		for _, k := range []string{"access_token", "token_type", "refresh_token", "expires_in", "scope"} {
			if v, ok := user[k]; ok {
				m[k] = v
			}
		}
	}
	if tt, _ := m["token_type"].(string); tt != "" {
		m["slack_token_type"] = tt
	}
	m["token_type"] = "Bearer"
	return json.Marshal(m)
}

// tokenMeta keeps the workspace the token belongs to.
func tokenMeta(extra func(key string) any) map[string]string {
	meta := map[string]string{}
	if team, ok := extra("team").(map[string]any); ok {
		if id, _ := team["id"].(string); id != "" {
			meta["team_id"] = id
		}
		if name, _ := team["name"].(string); name != "" {
			meta["team_name"] = name
		}
	}
	if tt, _ := extra("slack_token_type").(string); tt != "" {
		meta["token_type"] = tt
	}
	return meta
}

// revoke calls auth.revoke with the token itself. A token Slack no longer accepts
// (invalid_auth, token_revoked, account_inactive) is already revoked.
// Slack API docs: https://api.slack.com/methods/auth.revoke
func revoke(ctx context.Context, r providers.RevokeRequest) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.BaseURL+"/auth.revoke", strings.NewReader(""))
	if err != nil {
		return fmt.Errorf("build slack auth.revoke: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+r.AccessToken)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := r.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("Slack could not be reached to revoke the token: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("read slack auth.revoke answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("Slack refused to revoke the token: it answered %d", resp.StatusCode)
	}
	var env struct {
		OK      bool   `json:"ok"`
		Error   string `json:"error"`
		Revoked bool   `json:"revoked"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return errors.New("Slack answered auth.revoke with something that is not JSON")
	}
	switch {
	case env.OK:
		return nil
	case env.Error == "invalid_auth", env.Error == "token_revoked", env.Error == "account_inactive", env.Error == "not_authed":
		return nil
	}
	return fmt.Errorf("Slack refused to revoke the token: %s", env.Error)
}
