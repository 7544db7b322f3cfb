// Package airtable is the Airtable provider: bases, their schemas and the records of
// their tables through the Airtable Web API (https://airtable.com/developers/web/api),
// with a personal access token.
//
// Start from [Spec].
package airtable

import (
	"context"
	"net/http"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// Spec returns the Airtable provider. It builds a fresh value on every call.
func Spec() providers.Spec {
	return providers.Spec{
		Name:  "airtable",
		Title: "Airtable",
		Description: "List Airtable bases and their tables and fields, and read, create, update and delete the records " +
			"of a table.",
		DocsURL:   "https://airtable.com/developers/web/api/introduction",
		BaseURL:   "https://api.airtable.com/v0",
		AuthKinds: []providers.AuthKind{providers.AuthAPIKey},
		// One step a line; the builder numbers them and links the URLs.
		TokenHelp: "Create a personal access token at https://airtable.com/create/tokens.\n" +
			"Give it the scopes data.records:read, data.records:write, schema.bases:read and user.email:read.\n" +
			"Under Access, add every base it may use, then copy the token (pat…) and paste it here.",
		// Airtable allows 5 requests a second per base and 50 per token; a 429 asks
		// for 30 seconds of silence.
		RateLimit: providers.RateLimit{PerSecond: 5, Burst: 5, MaxWait: 10 * time.Second},
		Headers:   map[string]string{"Accept": "application/json"},
		Verify:    verify,
		Operations: []providers.Op{
			ListBases,
			GetBaseSchema,
			ListRecords,
			GetRecord,
			CreateRecords,
			UpdateRecords,
			DeleteRecords,
		},
	}
}

// whoami is the answer of GET /meta/whoami.
type whoami struct {
	ID     string   `json:"id"`
	Email  string   `json:"email"`
	Scopes []string `json:"scopes"`
}

// verify checks the token with GET /meta/whoami, which names the token's user and
// lists its scopes.
// Airtable API docs: https://airtable.com/developers/web/api/get-user-id-scopes
func verify(ctx context.Context, c *providers.Call) (providers.Account, error) {
	var w whoami
	if err := (request{method: http.MethodGet, path: "/meta/whoami"}).do(ctx, c, &w); err != nil {
		return providers.Account{}, err
	}
	if w.ID == "" {
		return providers.Account{}, &switchboard.Error{Code: switchboard.CodeUpstream, Message: "Airtable did not answer with the token's user"}
	}
	label := w.Email
	if label == "" {
		label = w.ID
	}
	return providers.Account{ID: w.ID, Label: label, Scopes: w.Scopes}, nil
}
