package hubspot

import (
	"context"
	"fmt"
	"net/http"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// CreateContact, CreateCompany and CreateDeal create a record, optionally associated
// with existing records.
// HubSpot API docs: https://developers.hubspot.com/docs/api/crm/contacts
var (
	CreateContact = createOp(contacts)
	CreateCompany = createOp(companies)
	CreateDeal    = createOp(deals)
)

func createOp(k kind) *providers.Operation[CreateInput, Record] {
	extra := ""
	switch k.plural {
	case "contacts":
		extra = " HubSpot refuses a second contact with the same email (conflict): search_contacts first and update_contact instead."
	case "deals":
		extra = " A deal needs dealname, pipeline and dealstage: list_deal_pipelines gives the pipeline and stage IDs."
	}
	return &providers.Operation[CreateInput, Record]{
		Name:  "create_" + k.singular,
		Title: "Create " + k.singular,
		Description: fmt.Sprintf("Create a HubSpot %[1]s from property values by internal name, e.g. %[2]s, and optionally "+
			"associate it with existing contacts, companies or deals.%[3]s Each call creates a new record: do not retry "+
			"one that succeeded. Returns the new %[1]s with its ID and URL.", k.singular, k.example, extra),
		DocsURL: "https://developers.hubspot.com/docs/api/crm/" + k.plural,
		Scopes:  []string{k.writeScope},
		Hints:   providers.Hints{},
		Run: func(ctx context.Context, c *providers.Call, in CreateInput) (Record, error) {
			return create(ctx, c, k, in)
		},
	}
}

// CreateInput is the input of the create_ tools.
type CreateInput struct {
	Properties    map[string]string `json:"properties" jsonschema:"Property values by internal name (list_properties gives names, types and options); numbers and dates as strings, dates as YYYY-MM-DD"`
	AssociateWith []Association     `json:"associate_with,omitempty" jsonschema:"Existing records to associate the new one with" schema:"maxItems=20"`
}

// Association names an existing record to associate with.
type Association struct {
	ObjectType string `json:"object_type" jsonschema:"The other record's type" schema:"enum=contacts|companies|deals"`
	ID         string `json:"id" jsonschema:"The other record's ID" schema:"example=51,pattern=^[0-9]{1,20}$"`
}

// associationType is HubSpot's default (HUBSPOT_DEFINED, unlabeled) association type
// ID from one object type to another.
// https://developers.hubspot.com/docs/api/crm/associations/association-details
func associationType(from, to string) (int, bool) {
	switch from + ">" + to {
	case "contacts>companies":
		return 279, true
	case "contacts>deals":
		return 4, true
	case "companies>contacts":
		return 280, true
	case "companies>deals":
		return 342, true
	case "deals>contacts":
		return 3, true
	case "deals>companies":
		return 341, true
	case "notes>contacts":
		return 202, true
	case "notes>companies":
		return 190, true
	case "notes>deals":
		return 214, true
	}
	return 0, false
}

// associationsBody renders associations from a record of type from, as the create
// endpoints take them.
func associationsBody(from string, list []Association, field string) ([]map[string]any, error) {
	out := make([]map[string]any, 0, len(list))
	for i, a := range list {
		typeID, ok := associationType(from, a.ObjectType)
		if !ok {
			return nil, switchboard.Invalid(fmt.Sprintf("%s.%d.object_type", field, i), "cannot associate "+from+" with "+a.ObjectType+"; use contacts, companies or deals")
		}
		if err := checkID(fmt.Sprintf("%s.%d.id", field, i), a.ID); err != nil {
			return nil, err
		}
		out = append(out, map[string]any{
			"to":    map[string]any{"id": a.ID},
			"types": []map[string]any{{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": typeID}},
		})
	}
	return out, nil
}

func create(ctx context.Context, c *providers.Call, k kind, in CreateInput) (Record, error) {
	if err := checkProperties(in.Properties); err != nil {
		return Record{}, err
	}
	assoc, err := associationsBody(k.plural, in.AssociateWith, "associate_with")
	if err != nil {
		return Record{}, err
	}
	body := map[string]any{"properties": in.Properties}
	if len(assoc) > 0 {
		body["associations"] = assoc
	}
	var r recordObject
	if err := (request{method: http.MethodPost, path: "/crm/v3/objects/" + k.plural, body: body}).do(ctx, c, &r); err != nil {
		return Record{}, err
	}
	return r.toRecord(k, c.Meta), nil
}

// checkProperties refuses an empty property map and names that are not internal names.
func checkProperties(props map[string]string) error {
	if len(props) == 0 {
		return switchboard.Invalid("properties", "is empty: give at least one property value")
	}
	for name := range props {
		if !propertyName.MatchString(name) {
			return switchboard.Invalid("properties", fmt.Sprintf("%q is not a property's internal name (letters, digits and underscores, e.g. lifecyclestage); list_properties gives them", name))
		}
	}
	return nil
}

// UpdateContact, UpdateCompany and UpdateDeal change a record's properties.
// HubSpot API docs: https://developers.hubspot.com/docs/api/crm/contacts
var (
	UpdateContact = updateOp(contacts)
	UpdateCompany = updateOp(companies)
	UpdateDeal    = updateOp(deals)
)

func updateOp(k kind) *providers.Operation[UpdateInput, Record] {
	extra := ""
	if k.plural == "deals" {
		extra = " Move a deal through its pipeline by setting dealstage to a stage ID from list_deal_pipelines."
	}
	return &providers.Operation[UpdateInput, Record]{
		Name:  "update_" + k.singular,
		Title: "Update " + k.singular,
		Description: fmt.Sprintf("Change properties of an existing HubSpot %[1]s, by record ID (or a unique property with "+
			"id_property, e.g. a contact's email): the values given overwrite the current ones, an empty string clears a "+
			"property, and other properties keep their values.%[2]s Returns the %[1]s with its updated properties.",
			k.singular, extra),
		DocsURL: "https://developers.hubspot.com/docs/api/crm/" + k.plural,
		Scopes:  []string{k.writeScope},
		Hints:   providers.Hints{Destructive: true, Idempotent: true},
		Run: func(ctx context.Context, c *providers.Call, in UpdateInput) (Record, error) {
			return update(ctx, c, k, in)
		},
	}
}

// UpdateInput is the input of the update_ tools.
type UpdateInput struct {
	ID         string            `json:"id" jsonschema:"The record's ID, or its value of id_property" schema:"minLength=1,maxLength=254,example=51"`
	IDProperty *string           `json:"id_property,omitempty" jsonschema:"A unique property id holds instead of the record ID, e.g. email for contacts" schema:"minLength=1,example=email"`
	Properties map[string]string `json:"properties" jsonschema:"Property values to set by internal name, e.g. {\"lifecyclestage\": \"customer\"}; an empty string clears a property"`
}

func update(ctx context.Context, c *providers.Call, k kind, in UpdateInput) (Record, error) {
	path, q, err := recordPath(k, in.ID, in.IDProperty)
	if err != nil {
		return Record{}, err
	}
	if err := checkProperties(in.Properties); err != nil {
		return Record{}, err
	}
	var r recordObject
	if err := (request{method: http.MethodPatch, path: path, query: q, body: map[string]any{"properties": in.Properties}}).do(ctx, c, &r); err != nil {
		return Record{}, err
	}
	return r.toRecord(k, c.Meta), nil
}
