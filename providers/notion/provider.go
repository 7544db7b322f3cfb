// Package notion is the Notion provider: search, pages, databases, blocks and comments
// through the Notion API (https://developers.notion.com/reference), with a public
// integration's OAuth token or an internal integration's secret.
//
// Start from [Spec].
package notion

import (
	"context"
	"net/http"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// apiVersion is the Notion-Version every request carries; the shapes in this package
// are those of this version.
const apiVersion = "2022-06-28"

// Spec returns the Notion provider. It builds a fresh value on every call.
func Spec() providers.Spec {
	return providers.Spec{
		Name:        "notion",
		Title:       "Notion",
		Description: "Search, read and write Notion pages, databases and their content blocks, and comment on pages.",
		DocsURL:     "https://developers.notion.com/reference",
		BaseURL:     "https://api.notion.com/v1",
		AuthKinds:   []providers.AuthKind{providers.AuthAPIKey, providers.AuthOAuth2},
		OAuth: &providers.OAuth2{
			AuthURL:  "https://api.notion.com/v1/oauth/authorize",
			TokenURL: "https://api.notion.com/v1/oauth/token",
			// Notion's token endpoint takes the client id and secret only as HTTP Basic auth.
			BasicAuth: true,
			// Notion has no scopes: a public integration's capabilities are set in its
			// settings, and the person picks the pages it may reach on the consent screen.
			AuthParams: map[string]string{"owner": "user"},
		},
		// One step a line; the builder numbers them and links the URLs.
		TokenHelp: "Create an internal integration at https://www.notion.so/profile/integrations.\n" +
			"Enable Read, Update and Insert content (and Read/Insert comments for comments).\n" +
			"Copy its Internal Integration Secret (ntn_… or secret_…) and paste it here.\n" +
			"Share each page or database it may use with it: ••• menu, Connections, add the integration.",
		// Notion allows an average of three requests a second per integration, with
		// some bursts; its 429s carry Retry-After.
		RateLimit: providers.RateLimit{PerSecond: 3, Burst: 6, MaxWait: 10 * time.Second},
		Headers: map[string]string{
			"Notion-Version": apiVersion,
			"Accept":         "application/json",
		},
		Verify: verify,
		Operations: []providers.Op{
			Search,
			GetPage,
			CreatePage,
			UpdatePage,
			QueryDatabase,
			GetDatabase,
			GetBlockChildren,
			AppendBlockChildren,
			AddComment,
		},
	}
}

// botUser is the part of GET /users/me Verify reads.
type botUser struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
	Bot  struct {
		WorkspaceName string `json:"workspace_name"`
	} `json:"bot"`
}

// verify checks the token with GET /users/me, which answers with the integration's
// bot user, and names the connection after the bot's workspace.
// Notion API docs: https://developers.notion.com/reference/get-self
func verify(ctx context.Context, c *providers.Call) (providers.Account, error) {
	var u botUser
	if err := (request{method: http.MethodGet, path: "/users/me"}).do(ctx, c, &u); err != nil {
		return providers.Account{}, err
	}
	if u.ID == "" || u.Type != "bot" {
		return providers.Account{}, &switchboard.Error{Code: switchboard.CodeUpstream, Message: "Notion did not answer with the integration's bot user"}
	}
	label := u.Bot.WorkspaceName
	if label == "" {
		label = u.Name
	}
	return providers.Account{ID: u.ID, Label: label}, nil
}
