package hubspot

import (
	"context"
	"fmt"
	"net/http"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// SearchContacts, SearchCompanies and SearchDeals find records of one type.
// HubSpot API docs: https://developers.hubspot.com/docs/api/crm/search
var (
	SearchContacts  = searchOp(contacts)
	SearchCompanies = searchOp(companies)
	SearchDeals     = searchOp(deals)
)

func searchOp(k kind) *providers.Operation[SearchInput, SearchOutput] {
	return &providers.Operation[SearchInput, SearchOutput]{
		Name:  "search_" + k.plural,
		Title: "Search " + k.plural,
		Description: fmt.Sprintf("Find or list HubSpot %[1]s: query matches words in their %[2]s; filters match property "+
			"values (all must hold, e.g. lifecyclestage EQ customer, or createdate GTE 2026-01-01); sort orders them. "+
			"With no query or filters it lists all %[1]s. Use get_%[3]s when you already have an ID. Newly created or "+
			"changed records can take a few seconds to show up. Returns matching %[1]s with the requested properties, the "+
			"total count, and next_cursor when there are more (at most 10,000 in all).", k.plural, k.search, k.singular),
		DocsURL: "https://developers.hubspot.com/docs/api/crm/search",
		Scopes:  []string{k.readScope},
		Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
		Run: func(ctx context.Context, c *providers.Call, in SearchInput) (SearchOutput, error) {
			return search(ctx, c, k, in)
		},
	}
}

// SearchInput is the input of the search_ tools.
type SearchInput struct {
	Query      *string  `json:"query,omitempty" jsonschema:"Words to find in the records' default searchable properties" schema:"minLength=1,maxLength=3000,example=ada@example.com"`
	Filters    []Filter `json:"filters,omitempty" jsonschema:"Conditions on property values; a record must meet all of them" schema:"maxItems=6"`
	Sort       *SortKey `json:"sort,omitempty" jsonschema:"Order of the results; HubSpot sorts by one property"`
	Properties []string `json:"properties,omitempty" jsonschema:"Internal names of the properties to return (list_properties gives them); a useful default set when omitted" schema:"maxItems=100,example=email|lifecyclestage"`
	providers.PageInput
}

// Filter is one condition of a search.
type Filter struct {
	Property  string   `json:"property" jsonschema:"The property's internal name" schema:"minLength=1,example=lifecyclestage"`
	Operator  string   `json:"operator" jsonschema:"How to compare: EQ, NEQ, LT, LTE, GT, GTE and CONTAINS_TOKEN / NOT_CONTAINS_TOKEN (a word, * wildcards) take value; BETWEEN takes value and high_value; IN and NOT_IN take values; HAS_PROPERTY and NOT_HAS_PROPERTY take none" schema:"enum=EQ|NEQ|LT|LTE|GT|GTE|BETWEEN|IN|NOT_IN|HAS_PROPERTY|NOT_HAS_PROPERTY|CONTAINS_TOKEN|NOT_CONTAINS_TOKEN"`
	Value     *string  `json:"value,omitempty" jsonschema:"The value to compare with; dates as YYYY-MM-DD or epoch milliseconds, enumerations by their internal value" schema:"example=customer"`
	HighValue *string  `json:"high_value,omitempty" jsonschema:"The upper bound, for BETWEEN" schema:"example=2026-12-31"`
	Values    []string `json:"values,omitempty" jsonschema:"The values, for IN and NOT_IN (lower case for enumeration properties)" schema:"example=lead|customer"`
}

// SortKey is the order of a search.
type SortKey struct {
	Property  string  `json:"property" jsonschema:"The property's internal name" schema:"minLength=1,example=createdate"`
	Direction *string `json:"direction,omitempty" jsonschema:"ASCENDING or DESCENDING" schema:"enum=ASCENDING|DESCENDING,default=DESCENDING"`
}

// SearchOutput is the output of the search_ tools.
type SearchOutput struct {
	Records    []Record `json:"records" jsonschema:"The matching records of this page"`
	Total      int      `json:"total" jsonschema:"How many records match in all"`
	NextCursor string   `json:"next_cursor,omitempty" jsonschema:"Pass as cursor, with the same arguments, to fetch the next page; absent on the last page"`
}

func search(ctx context.Context, c *providers.Call, k kind, in SearchInput) (SearchOutput, error) {
	after, limit, err := pageParams(in.PageInput)
	if err != nil {
		return SearchOutput{}, err
	}
	props, err := propertyList(k, in.Properties)
	if err != nil {
		return SearchOutput{}, err
	}
	body := map[string]any{"limit": limit, "properties": props}
	if after != "" {
		body["after"] = after
	}
	if in.Query != nil {
		body["query"] = *in.Query
	}
	if len(in.Filters) > 0 {
		filters := make([]map[string]any, 0, len(in.Filters))
		for i, f := range in.Filters {
			m, err := f.encode(i)
			if err != nil {
				return SearchOutput{}, err
			}
			filters = append(filters, m)
		}
		body["filterGroups"] = []map[string]any{{"filters": filters}}
	}
	if in.Sort != nil {
		dir := "DESCENDING"
		if in.Sort.Direction != nil {
			dir = *in.Sort.Direction
		}
		body["sorts"] = []map[string]any{{"propertyName": in.Sort.Property, "direction": dir}}
	}
	var resp struct {
		Total   int            `json:"total"`
		Results []recordObject `json:"results"`
		Paging  *paging        `json:"paging"`
	}
	if err := (request{method: http.MethodPost, path: "/crm/v3/objects/" + k.plural + "/search", body: body}).do(ctx, c, &resp); err != nil {
		return SearchOutput{}, err
	}
	out := SearchOutput{Records: make([]Record, 0, len(resp.Results)), Total: resp.Total, NextCursor: resp.Paging.next()}
	for _, r := range resp.Results {
		out.Records = append(out.Records, r.toRecord(k, c.Meta))
	}
	return out, nil
}

// encode renders the filter as HubSpot takes it, refusing operands that do not fit
// the operator.
func (f Filter) encode(i int) (map[string]any, error) {
	field := func(name string) string { return fmt.Sprintf("filters.%d.%s", i, name) }
	if !propertyName.MatchString(f.Property) {
		return nil, switchboard.Invalid(field("property"), "must be a property's internal name, e.g. lifecyclestage")
	}
	m := map[string]any{"propertyName": f.Property, "operator": f.Operator}
	switch f.Operator {
	case "HAS_PROPERTY", "NOT_HAS_PROPERTY":
		if f.Value != nil || f.HighValue != nil || len(f.Values) > 0 {
			return nil, switchboard.Invalid(field("value"), f.Operator+" takes no value")
		}
	case "IN", "NOT_IN":
		if len(f.Values) == 0 || f.Value != nil || f.HighValue != nil {
			return nil, switchboard.Invalid(field("values"), f.Operator+" takes values (a list), and no value or high_value")
		}
		m["values"] = f.Values
	case "BETWEEN":
		if f.Value == nil || f.HighValue == nil || len(f.Values) > 0 {
			return nil, switchboard.Invalid(field("high_value"), "BETWEEN takes value (the lower bound) and high_value")
		}
		m["value"], m["highValue"] = *f.Value, *f.HighValue
	default:
		if f.Value == nil || f.HighValue != nil || len(f.Values) > 0 {
			return nil, switchboard.Invalid(field("value"), f.Operator+" takes one value, and no high_value or values")
		}
		m["value"] = *f.Value
	}
	return m, nil
}
