// Package slack is the Slack provider: its Spec (bot or user tokens, the Web API base
// URL, a per-connection rate limit) and its operations over the Slack Web API, one file
// per API area.
//
// Start from [Spec].
package slack

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard/providers"
)

// Spec returns the Slack provider with all its operations. It builds a fresh value on
// every call, so a caller may change its copy (a test's base URL) without affecting others.
func Spec() providers.Spec {
	return providers.Spec{
		Name:        "slack",
		Title:       "Slack",
		Description: "Read, search, post, edit and schedule messages, threads, reactions, pins and files in a Slack workspace, and look up and manage its channels and people.",
		DocsURL:     "https://api.slack.com/web",
		BaseURL:     "https://slack.com/api",
		AuthKinds:   []providers.AuthKind{providers.AuthAPIKey, providers.AuthOAuth2},
		OAuth:       oauth(),
		// One step a line; the builder numbers them and links the URLs.
		TokenHelp: "Create or open your app at https://api.slack.com/apps.\n" +
			"Under OAuth & Permissions add the bot scopes you need: channels:read, channels:history, channels:manage, chat:write, files:write, pins:read, pins:write, reactions:write, users:read, users:read.email.\n" +
			"Install the app to the workspace and copy the Bot User OAuth Token (xoxb-…).\n" +
			"A user token (xoxp-…) works too and acts as that person; search_messages needs one (user scope search:read).",
		// Most methods used here are Tier 2-3 (20-50+ requests a minute per workspace and
		// app); one a second with a burst of ten stays near that, and Slack's own 429s
		// with Retry-After cover the rest.
		RateLimit: providers.RateLimit{PerSecond: 1, Burst: 10, MaxWait: 5 * time.Second},
		Verify:    verify,
		Operations: []providers.Op{
			ListChannels,
			GetChannelHistory,
			GetThreadReplies,
			PostMessage,
			ReplyToThread,
			AddReaction,
			GetUsers,
			GetUserProfile,
			UpdateMessage,
			DeleteMessage,
			ScheduleMessage,
			PostEphemeral,
			GetPermalink,
			CreateChannel,
			ArchiveChannel,
			RenameChannel,
			InviteToChannel,
			SetChannelTopic,
			SetChannelPurpose,
			GetUserByEmail,
			RemoveReaction,
			PinMessage,
			UnpinMessage,
			ListPins,
			SearchMessages,
			UploadFile,
		},
	}
}

// authTestResponse is auth.test's answer.
// Slack API docs: https://api.slack.com/methods/auth.test
type authTestResponse struct {
	URL    string `json:"url"`
	Team   string `json:"team"`
	User   string `json:"user"`
	TeamID string `json:"team_id"`
	UserID string `json:"user_id"`
	BotID  string `json:"bot_id"`
}

// verify checks the token with auth.test and names the workspace and user it belongs
// to; the granted scopes come from the X-OAuth-Scopes header Slack sets on every answer.
func verify(ctx context.Context, c *providers.Call) (providers.Account, error) {
	var r authTestResponse
	h, err := send(ctx, c, http.MethodGet, "auth.test", nil, &r)
	if err != nil {
		return providers.Account{}, err
	}
	return providers.Account{ID: r.TeamID + "/" + r.UserID, Label: r.Team, Scopes: splitScopes(h.Get("X-OAuth-Scopes"))}, nil
}

// splitScopes parses a comma-separated scope list such as "chat:write,channels:read".
func splitScopes(v string) []string {
	var scopes []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			scopes = append(scopes, s)
		}
	}
	return scopes
}
