// Package hubspot is the HubSpot provider: contacts, companies and deals of the CRM
// (search, read, create, update), notes on their timelines, deal pipelines and
// property definitions, through HubSpot's CRM v3 API
// (https://developers.hubspot.com/docs/api/crm/understanding-the-crm), with an OAuth
// app's token or a private app's access token.
//
// Start from [Spec].
package hubspot

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// Spec returns the HubSpot provider. It builds a fresh value on every call.
func Spec() providers.Spec {
	return providers.Spec{
		Name:  "hubspot",
		Title: "HubSpot",
		Description: "Search, read, create and update HubSpot CRM contacts, companies and deals, log notes on their " +
			"timelines, and look up deal pipelines and property definitions.",
		DocsURL:   "https://developers.hubspot.com/docs/api/crm/understanding-the-crm",
		BaseURL:   "https://api.hubapi.com",
		AuthKinds: []providers.AuthKind{providers.AuthAPIKey, providers.AuthOAuth2},
		OAuth: &providers.OAuth2{
			AuthURL:  "https://app.hubspot.com/oauth/authorize",
			TokenURL: "https://api.hubapi.com/oauth/v1/token",
			Scopes: []string{
				"crm.objects.contacts.read", "crm.objects.contacts.write",
				"crm.objects.companies.read", "crm.objects.companies.write",
				"crm.objects.deals.read", "crm.objects.deals.write",
			},
		},
		// One step a line; the builder numbers them and links the URLs.
		TokenHelp: "In HubSpot open Settings, Integrations, Private Apps (https://app.hubspot.com/private-apps), and create a private app.\n" +
			"Give it the scopes crm.objects.contacts, crm.objects.companies and crm.objects.deals, read and write.\n" +
			"Copy its access token (pat-…) and paste it here.",
		// HubSpot allows 100 to 190 requests per 10 seconds per app and account (the
		// search endpoints 5 a second); its 429s say which window is spent.
		RateLimit: providers.RateLimit{PerSecond: 9, Burst: 10, MaxWait: 10 * time.Second},
		Headers:   map[string]string{"Accept": "application/json"},
		Verify:    verify,
		Operations: []providers.Op{
			SearchContacts, GetContact, CreateContact, UpdateContact,
			SearchCompanies, GetCompany, CreateCompany, UpdateCompany,
			SearchDeals, GetDeal, CreateDeal, UpdateDeal,
			CreateNote,
			ListDealPipelines,
			ListProperties,
		},
	}
}

// Keys of the connection's Account.Meta.
const (
	metaPortalID = "portal_id" // the HubSpot account (portal) ID
	metaUIDomain = "ui_domain" // the account's app host, e.g. app-eu1.hubspot.com
	metaTimeZone = "time_zone" // the account's time zone, where its daily limit resets
)

// accountDetails is the part of GET /account-info/v3/details Verify reads.
type accountDetails struct {
	PortalID    int64  `json:"portalId"`
	AccountType string `json:"accountType"`
	TimeZone    string `json:"timeZone"`
	UIDomain    string `json:"uiDomain"`
}

// verify checks the token with GET /account-info/v3/details and names the connection
// after the HubSpot account (portal) it belongs to.
// HubSpot API docs: https://developers.hubspot.com/docs/api/settings/account-information-api
func verify(ctx context.Context, c *providers.Call) (providers.Account, error) {
	var d accountDetails
	if err := (request{method: http.MethodGet, path: "/account-info/v3/details"}).do(ctx, c, &d); err != nil {
		return providers.Account{}, err
	}
	if d.PortalID <= 0 {
		return providers.Account{}, &switchboard.Error{Code: switchboard.CodeUpstream, Message: "HubSpot did not answer with the account's portal ID"}
	}
	id := strconv.FormatInt(d.PortalID, 10)
	meta := map[string]string{metaPortalID: id}
	if d.UIDomain != "" {
		meta[metaUIDomain] = d.UIDomain
	}
	if d.TimeZone != "" {
		meta[metaTimeZone] = d.TimeZone
	}
	label := "HubSpot account " + id
	if d.AccountType != "" && d.AccountType != "STANDARD" {
		label += " (" + d.AccountType + ")"
	}
	return providers.Account{ID: id, Label: label, Meta: meta}, nil
}
