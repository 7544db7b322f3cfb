package hubspot

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// GetContact, GetCompany and GetDeal read one record.
// HubSpot API docs: https://developers.hubspot.com/docs/api/crm/contacts
var (
	GetContact = getOp(contacts)
	GetCompany = getOp(companies)
	GetDeal    = getOp(deals)
)

func getOp(k kind) *providers.Operation[GetInput, Record] {
	return &providers.Operation[GetInput, Record]{
		Name:  "get_" + k.singular,
		Title: "Get " + k.singular,
		Description: fmt.Sprintf("Read one HubSpot %[1]s by its record ID (or by a unique property with id_property, e.g. "+
			"a contact's email), with the properties you name and, if asked, the IDs of its associated contacts, "+
			"companies and deals. Use search_%[2]s to find %[2]s by other values. Returns the %[1]s's properties, "+
			"timestamps, its HubSpot URL and associations.", k.singular, k.plural),
		DocsURL: "https://developers.hubspot.com/docs/api/crm/" + k.plural,
		Scopes:  []string{k.readScope},
		Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
		Run: func(ctx context.Context, c *providers.Call, in GetInput) (Record, error) {
			return get(ctx, c, k, in)
		},
	}
}

// GetInput is the input of the get_ tools.
type GetInput struct {
	ID               string   `json:"id" jsonschema:"The record's ID, or its value of id_property" schema:"minLength=1,maxLength=254,example=51"`
	IDProperty       *string  `json:"id_property,omitempty" jsonschema:"A unique property id holds instead of the record ID, e.g. email for contacts" schema:"minLength=1,example=email"`
	Properties       []string `json:"properties,omitempty" jsonschema:"Internal names of the properties to return (list_properties gives them); a useful default set when omitted" schema:"maxItems=100,example=email|lifecyclestage"`
	WithAssociations *bool    `json:"with_associations,omitempty" jsonschema:"Also return the IDs of associated records of the other types (contacts, companies, deals)" schema:"default=false"`
}

func get(ctx context.Context, c *providers.Call, k kind, in GetInput) (Record, error) {
	path, q, err := recordPath(k, in.ID, in.IDProperty)
	if err != nil {
		return Record{}, err
	}
	props, err := propertyList(k, in.Properties)
	if err != nil {
		return Record{}, err
	}
	q.Set("properties", strings.Join(props, ","))
	if in.WithAssociations != nil && *in.WithAssociations {
		var others []string
		for _, o := range []kind{contacts, companies, deals} {
			if o.plural != k.plural {
				others = append(others, o.plural)
			}
		}
		q.Set("associations", strings.Join(others, ","))
	}
	var r recordObject
	if err := (request{method: http.MethodGet, path: path, query: q}).do(ctx, c, &r); err != nil {
		return Record{}, err
	}
	return r.toRecord(k, c.Meta), nil
}

// recordPath returns a record's path and the idProperty query it needs: a record ID
// must be digits; a value of another unique property is escaped as one path segment.
func recordPath(k kind, id string, idProperty *string) (string, url.Values, error) {
	q := url.Values{}
	if idProperty == nil {
		if err := checkID("id", id); err != nil {
			return "", nil, err
		}
		return "/crm/v3/objects/" + k.plural + "/" + id, q, nil
	}
	if !propertyName.MatchString(*idProperty) {
		return "", nil, switchboard.Invalid("id_property", "must be a property's internal name, e.g. email")
	}
	if strings.TrimSpace(id) == "" {
		return "", nil, switchboard.Invalid("id", "is required")
	}
	q.Set("idProperty", *idProperty)
	return "/crm/v3/objects/" + k.plural + "/" + url.PathEscape(id), q, nil
}
