package hubspot

import (
	"context"
	"net/http"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// ListProperties lists the property definitions of an object type.
// HubSpot API docs: https://developers.hubspot.com/docs/api/crm/properties
var ListProperties = &providers.Operation[ListPropertiesInput, ListPropertiesOutput]{
	Name:  "list_properties",
	Title: "List properties",
	Description: "List the properties (fields) HubSpot records of one type have, standard and custom, to learn the " +
		"internal names that the search_, get_, create_ and update_ tools take, their types, and the allowed values " +
		"of enumeration properties such as lifecyclestage or industry. match narrows the list by name or label. " +
		"Returns each property's internal name, label, type, description, options and whether it is read-only.",
	DocsURL: "https://developers.hubspot.com/docs/api/crm/properties",
	Scopes:  []string{"crm.objects.contacts.read", "crm.objects.companies.read", "crm.objects.deals.read"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listProperties,
}

// ListPropertiesInput is the input of list_properties.
type ListPropertiesInput struct {
	ObjectType string  `json:"object_type" jsonschema:"The type of record whose properties to list" schema:"enum=contacts|companies|deals"`
	Match      *string `json:"match,omitempty" jsonschema:"Only properties whose internal name or label contains this text (case-insensitive)" schema:"minLength=1,example=stage"`
}

// ListPropertiesOutput is the output of list_properties.
type ListPropertiesOutput struct {
	Properties []Property `json:"properties" jsonschema:"The properties, as HubSpot orders them"`
}

// Property is one property definition.
type Property struct {
	Name        string   `json:"name" jsonschema:"The internal name the tools take"`
	Label       string   `json:"label" jsonschema:"The name HubSpot shows"`
	Type        string   `json:"type" jsonschema:"The value type: string, number, date, datetime, enumeration, bool"`
	FieldType   string   `json:"field_type" jsonschema:"The form control: text, textarea, number, select, radio, checkbox, booleancheckbox, date, …"`
	Description string   `json:"description,omitempty" jsonschema:"What the property holds"`
	Options     []Option `json:"options,omitempty" jsonschema:"The allowed values of an enumeration property"`
	ReadOnly    bool     `json:"read_only" jsonschema:"Whether HubSpot calculates the value, so it cannot be set"`
	Unique      bool     `json:"unique" jsonschema:"Whether values are unique, so the property can serve as id_property"`
}

// Option is one allowed value of an enumeration property.
type Option struct {
	Value string `json:"value" jsonschema:"The internal value the tools take"`
	Label string `json:"label" jsonschema:"The value HubSpot shows"`
}

func listProperties(ctx context.Context, c *providers.Call, in ListPropertiesInput) (ListPropertiesOutput, error) {
	k, ok := kindNamed(in.ObjectType)
	if !ok {
		return ListPropertiesOutput{}, switchboard.Invalid("object_type", "must be contacts, companies or deals")
	}
	var resp struct {
		Results []struct {
			Name                 string   `json:"name"`
			Label                string   `json:"label"`
			Type                 string   `json:"type"`
			FieldType            string   `json:"fieldType"`
			Description          string   `json:"description"`
			Options              []Option `json:"options"`
			Calculated           bool     `json:"calculated"`
			HasUniqueValue       bool     `json:"hasUniqueValue"`
			ModificationMetadata struct {
				ReadOnlyValue bool `json:"readOnlyValue"`
			} `json:"modificationMetadata"`
		} `json:"results"`
	}
	if err := (request{method: http.MethodGet, path: "/crm/v3/properties/" + k.plural}).do(ctx, c, &resp); err != nil {
		return ListPropertiesOutput{}, err
	}
	match := ""
	if in.Match != nil {
		match = strings.ToLower(*in.Match)
	}
	out := ListPropertiesOutput{Properties: []Property{}}
	for _, p := range resp.Results {
		if match != "" && !strings.Contains(strings.ToLower(p.Name), match) && !strings.Contains(strings.ToLower(p.Label), match) {
			continue
		}
		out.Properties = append(out.Properties, Property{Name: p.Name, Label: p.Label, Type: p.Type, FieldType: p.FieldType,
			Description: p.Description, Options: p.Options, ReadOnly: p.Calculated || p.ModificationMetadata.ReadOnlyValue,
			Unique: p.HasUniqueValue})
	}
	return out, nil
}
