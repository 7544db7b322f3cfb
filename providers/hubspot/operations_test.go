package hubspot_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/hubspot"
)

// Canned answers, shaped like the examples of HubSpot's CRM v3 reference.
const (
	contactReply = `{"id": "51", "properties": {"createdate": "2026-10-01T09:00:00.000Z", "email": "ada@example.com", "firstname": "Ada",
		"lastname": "Lovelace", "hs_object_id": "51", "lastmodifieddate": "2026-11-02T10:00:00.000Z", "phone": null, "lifecyclestage": "lead"},
		"createdAt": "2026-10-01T09:00:00.000Z", "updatedAt": "2026-11-02T10:00:00.000Z", "archived": false}`
	contactWithAssociationsReply = `{"id": "51", "properties": {"email": "ada@example.com", "hs_object_id": "51"},
		"createdAt": "2026-10-01T09:00:00.000Z", "updatedAt": "2026-11-02T10:00:00.000Z", "archived": false,
		"associations": {"companies": {"results": [{"id": "1011", "type": "contact_to_company"}, {"id": "1011", "type": "contact_to_company_unlabeled"}]},
			"deals": {"results": [{"id": "2001", "type": "contact_to_deal"}]}}}`
	searchContactsReply = `{"total": 42, "results": [` + contactReply + `], "paging": {"next": {"after": "30", "link": "?after=30"}}}`
	companyReply        = `{"id": "1011", "properties": {"name": "Analytical Engines Ltd", "domain": "engines.example.com", "hs_object_id": "1011"},
		"createdAt": "2026-09-01T08:00:00.000Z", "updatedAt": "2026-11-01T08:00:00.000Z", "archived": false}`
	dealReply = `{"id": "2001", "properties": {"dealname": "Engines renewal", "amount": "12000", "dealstage": "appointmentscheduled",
		"pipeline": "default", "closedate": "2026-12-31T00:00:00Z", "hs_object_id": "2001"},
		"createdAt": "2026-11-03T08:00:00.000Z", "updatedAt": "2026-11-03T08:00:00.000Z", "archived": false}`
	noteReply = `{"id": "30001", "properties": {"hs_note_body": "Called Ada: she wants a quote by Friday.", "hs_timestamp": "2026-11-20T15:04:05Z",
		"hs_createdate": "2026-11-20T15:05:00.000Z", "hs_object_id": "30001"},
		"createdAt": "2026-11-20T15:05:00.000Z", "updatedAt": "2026-11-20T15:05:00.000Z", "archived": false}`
	pipelinesReply = `{"results": [
		{"id": "default", "label": "Sales Pipeline", "displayOrder": 0, "archived": false, "stages": [
			{"id": "appointmentscheduled", "label": "Appointment Scheduled", "displayOrder": 0, "archived": false, "metadata": {"isClosed": "false", "probability": "0.2"}},
			{"id": "closedwon", "label": "Closed Won", "displayOrder": 1, "archived": false, "metadata": {"isClosed": "true", "probability": "1.0"}},
			{"id": "oldstage", "label": "Old stage", "displayOrder": 2, "archived": true, "metadata": {"isClosed": "false", "probability": "0.5"}}]},
		{"id": "1234567", "label": "Old pipeline", "displayOrder": 1, "archived": true, "stages": []}]}`
	propertiesReply = `{"results": [
		{"name": "dealstage", "label": "Deal Stage", "type": "enumeration", "fieldType": "radio", "description": "The stage of the deal.",
			"groupName": "dealinformation", "options": [{"label": "Appointment Scheduled", "value": "appointmentscheduled", "displayOrder": 0, "hidden": false}],
			"calculated": false, "hasUniqueValue": false, "modificationMetadata": {"archivable": true, "readOnlyDefinition": true, "readOnlyValue": false}},
		{"name": "dealname", "label": "Deal Name", "type": "string", "fieldType": "text", "description": "The name given to this deal.",
			"groupName": "dealinformation", "options": [], "calculated": false, "hasUniqueValue": false, "modificationMetadata": {"readOnlyValue": false}},
		{"name": "hs_deal_stage_probability", "label": "Deal probability", "type": "number", "fieldType": "number", "description": "",
			"groupName": "dealinformation", "options": [], "calculated": true, "hasUniqueValue": false, "modificationMetadata": {"readOnlyValue": true}}]}`
)

var defaultContactProps = "email,firstname,lastname,phone,company,jobtitle,lifecyclestage,hubspot_owner_id"

func anyList(s ...string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func operationCases() []opCase {
	ada := hubspot.Record{ID: "51", CreatedAt: "2026-10-01T09:00:00.000Z", UpdatedAt: "2026-11-02T10:00:00.000Z",
		URL: "https://app-eu1.hubspot.com/contacts/62515/record/0-1/51",
		Properties: map[string]string{"createdate": "2026-10-01T09:00:00.000Z", "email": "ada@example.com", "firstname": "Ada",
			"lastname": "Lovelace", "hs_object_id": "51", "lastmodifieddate": "2026-11-02T10:00:00.000Z", "lifecyclestage": "lead"}}
	engines := hubspot.Record{ID: "1011", CreatedAt: "2026-09-01T08:00:00.000Z", UpdatedAt: "2026-11-01T08:00:00.000Z",
		URL:        "https://app-eu1.hubspot.com/contacts/62515/record/0-2/1011",
		Properties: map[string]string{"name": "Analytical Engines Ltd", "domain": "engines.example.com", "hs_object_id": "1011"}}
	renewal := hubspot.Record{ID: "2001", CreatedAt: "2026-11-03T08:00:00.000Z", UpdatedAt: "2026-11-03T08:00:00.000Z",
		URL: "https://app-eu1.hubspot.com/contacts/62515/record/0-3/2001",
		Properties: map[string]string{"dealname": "Engines renewal", "amount": "12000", "dealstage": "appointmentscheduled",
			"pipeline": "default", "closedate": "2026-12-31T00:00:00Z", "hs_object_id": "2001"}}
	prob := func(f float64) *float64 { return &f }
	return []opCase{
		{
			name: "search contacts, defaults", tool: "hubspot_search_contacts", args: `{}`, reply: searchContactsReply,
			wantMethod: http.MethodPost, wantPath: "/crm/v3/objects/contacts/search",
			wantBody: map[string]any{"limit": float64(30), "properties": anyList("email", "firstname", "lastname", "phone", "company", "jobtitle", "lifecyclestage", "hubspot_owner_id")},
			want:     hubspot.SearchOutput{Records: []hubspot.Record{ada}, Total: 42, NextCursor: providers.EncodeCursor("30")},
		},
		{
			name: "search deals with query, filters, sort, properties and a cursor", tool: "hubspot_search_deals",
			args: `{"query": "renewal", "filters": [{"property": "amount", "operator": "BETWEEN", "value": "1000", "high_value": "50000"},
				{"property": "dealstage", "operator": "IN", "values": ["appointmentscheduled", "closedwon"]},
				{"property": "closedate", "operator": "HAS_PROPERTY"}, {"property": "pipeline", "operator": "EQ", "value": "default"}],
				"sort": {"property": "amount", "direction": "ASCENDING"}, "properties": ["dealname", "amount"], "limit": 100,
				"cursor": "` + providers.EncodeCursor("30") + `"}`,
			reply:      `{"total": 31, "results": [` + dealReply + `]}`,
			wantMethod: http.MethodPost, wantPath: "/crm/v3/objects/deals/search",
			wantBody: map[string]any{"query": "renewal", "limit": float64(100), "after": "30", "properties": anyList("dealname", "amount"),
				"filterGroups": []any{map[string]any{"filters": []any{
					map[string]any{"propertyName": "amount", "operator": "BETWEEN", "value": "1000", "highValue": "50000"},
					map[string]any{"propertyName": "dealstage", "operator": "IN", "values": anyList("appointmentscheduled", "closedwon")},
					map[string]any{"propertyName": "closedate", "operator": "HAS_PROPERTY"},
					map[string]any{"propertyName": "pipeline", "operator": "EQ", "value": "default"},
				}}},
				"sorts": []any{map[string]any{"propertyName": "amount", "direction": "ASCENDING"}}},
			want: hubspot.SearchOutput{Records: []hubspot.Record{renewal}, Total: 31},
		},
		{
			name: "search companies, sort defaults to descending", tool: "hubspot_search_companies",
			args:  `{"query": "engines", "sort": {"property": "createdate"}, "limit": 5}`,
			reply: `{"total": 1, "results": [` + companyReply + `]}`, wantMethod: http.MethodPost, wantPath: "/crm/v3/objects/companies/search",
			wantBody: map[string]any{"query": "engines", "limit": float64(5),
				"properties": anyList("name", "domain", "industry", "city", "country", "phone", "lifecyclestage", "hubspot_owner_id"),
				"sorts":      []any{map[string]any{"propertyName": "createdate", "direction": "DESCENDING"}}},
			want: hubspot.SearchOutput{Records: []hubspot.Record{engines}, Total: 1},
		},
		{
			name: "get contact with associations", tool: "hubspot_get_contact", reply: contactWithAssociationsReply,
			args:       `{"id": "51", "properties": ["email"], "with_associations": true}`,
			wantMethod: http.MethodGet, wantPath: "/crm/v3/objects/contacts/51",
			wantQuery: url.Values{"properties": {"email"}, "associations": {"companies,deals"}},
			want: hubspot.Record{ID: "51", CreatedAt: "2026-10-01T09:00:00.000Z", UpdatedAt: "2026-11-02T10:00:00.000Z",
				URL: ada.URL, Properties: map[string]string{"email": "ada@example.com", "hs_object_id": "51"},
				Associations: map[string][]string{"companies": {"1011"}, "deals": {"2001"}}},
		},
		{
			name: "get contact by email", tool: "hubspot_get_contact", reply: contactReply,
			args:       `{"id": "ada@example.com", "id_property": "email"}`,
			wantMethod: http.MethodGet, wantPath: "/crm/v3/objects/contacts/ada@example.com",
			wantQuery: url.Values{"properties": {defaultContactProps}, "idProperty": {"email"}},
			want:      ada,
		},
		{
			name: "get company", tool: "hubspot_get_company", args: `{"id": "1011"}`, reply: companyReply,
			wantMethod: http.MethodGet, wantPath: "/crm/v3/objects/companies/1011",
			wantQuery: url.Values{"properties": {"name,domain,industry,city,country,phone,lifecyclestage,hubspot_owner_id"}},
			want:      engines,
		},
		{
			name: "get deal with associations", tool: "hubspot_get_deal", args: `{"id": "2001", "with_associations": true}`, reply: dealReply,
			wantMethod: http.MethodGet, wantPath: "/crm/v3/objects/deals/2001",
			wantQuery: url.Values{"properties": {"dealname,amount,dealstage,pipeline,closedate,hubspot_owner_id"}, "associations": {"contacts,companies"}},
			want:      renewal,
		},
		{
			name: "create contact at a company", tool: "hubspot_create_contact", reply: contactReply,
			args:       `{"properties": {"email": "ada@example.com", "firstname": "Ada"}, "associate_with": [{"object_type": "companies", "id": "1011"}]}`,
			wantMethod: http.MethodPost, wantPath: "/crm/v3/objects/contacts",
			wantBody: map[string]any{"properties": map[string]any{"email": "ada@example.com", "firstname": "Ada"},
				"associations": []any{map[string]any{"to": map[string]any{"id": "1011"},
					"types": []any{map[string]any{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": float64(279)}}}}},
			want: ada,
		},
		{
			name: "create company", tool: "hubspot_create_company", reply: companyReply,
			args:       `{"properties": {"name": "Analytical Engines Ltd", "domain": "engines.example.com"}}`,
			wantMethod: http.MethodPost, wantPath: "/crm/v3/objects/companies",
			wantBody: map[string]any{"properties": map[string]any{"name": "Analytical Engines Ltd", "domain": "engines.example.com"}},
			want:     engines,
		},
		{
			name: "create deal for a contact and a company", tool: "hubspot_create_deal", reply: dealReply,
			args: `{"properties": {"dealname": "Engines renewal", "pipeline": "default", "dealstage": "appointmentscheduled"},
				"associate_with": [{"object_type": "contacts", "id": "51"}, {"object_type": "companies", "id": "1011"}]}`,
			wantMethod: http.MethodPost, wantPath: "/crm/v3/objects/deals",
			wantBody: map[string]any{"properties": map[string]any{"dealname": "Engines renewal", "pipeline": "default", "dealstage": "appointmentscheduled"},
				"associations": []any{
					map[string]any{"to": map[string]any{"id": "51"}, "types": []any{map[string]any{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": float64(3)}}},
					map[string]any{"to": map[string]any{"id": "1011"}, "types": []any{map[string]any{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": float64(341)}}},
				}},
			want: renewal,
		},
		{
			name: "update contact by email", tool: "hubspot_update_contact", reply: contactReply,
			args:       `{"id": "ada@example.com", "id_property": "email", "properties": {"lifecyclestage": "lead", "phone": ""}}`,
			wantMethod: http.MethodPatch, wantPath: "/crm/v3/objects/contacts/ada@example.com", wantQuery: url.Values{"idProperty": {"email"}},
			wantBody: map[string]any{"properties": map[string]any{"lifecyclestage": "lead", "phone": ""}},
			want:     ada,
		},
		{
			name: "update company", tool: "hubspot_update_company", reply: companyReply,
			args:       `{"id": "1011", "properties": {"domain": "engines.example.com"}}`,
			wantMethod: http.MethodPatch, wantPath: "/crm/v3/objects/companies/1011",
			wantBody: map[string]any{"properties": map[string]any{"domain": "engines.example.com"}},
			want:     engines,
		},
		{
			name: "update deal stage", tool: "hubspot_update_deal", reply: dealReply,
			args:       `{"id": "2001", "properties": {"dealstage": "appointmentscheduled"}}`,
			wantMethod: http.MethodPatch, wantPath: "/crm/v3/objects/deals/2001",
			wantBody: map[string]any{"properties": map[string]any{"dealstage": "appointmentscheduled"}},
			want:     renewal,
		},
		{
			name: "create note on a contact and a deal", tool: "hubspot_create_note", reply: noteReply,
			args: `{"body": "Called Ada: she wants a quote by Friday.", "contact_ids": ["51"], "deal_ids": ["2001"],
				"timestamp": "2026-11-20T16:04:05+01:00", "owner_id": "91011"}`,
			wantMethod: http.MethodPost, wantPath: "/crm/v3/objects/notes",
			wantBody: map[string]any{
				"properties": map[string]any{"hs_note_body": "Called Ada: she wants a quote by Friday.", "hs_timestamp": "2026-11-20T15:04:05Z", "hubspot_owner_id": "91011"},
				"associations": []any{
					map[string]any{"to": map[string]any{"id": "51"}, "types": []any{map[string]any{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": float64(202)}}},
					map[string]any{"to": map[string]any{"id": "2001"}, "types": []any{map[string]any{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": float64(214)}}},
				}},
			want: hubspot.Note{ID: "30001", Body: "Called Ada: she wants a quote by Friday.", Timestamp: "2026-11-20T15:04:05Z",
				CreatedAt: "2026-11-20T15:05:00.000Z", AttachedTo: map[string][]string{"contacts": {"51"}, "deals": {"2001"}}},
		},
		{
			name: "list deal pipelines without archived ones", tool: "hubspot_list_deal_pipelines", args: `{}`, reply: pipelinesReply,
			wantMethod: http.MethodGet, wantPath: "/crm/v3/pipelines/deals",
			want: hubspot.ListDealPipelinesOutput{Pipelines: []hubspot.Pipeline{{ID: "default", Label: "Sales Pipeline", Stages: []hubspot.Stage{
				{ID: "appointmentscheduled", Label: "Appointment Scheduled", Probability: prob(0.2)},
				{ID: "closedwon", Label: "Closed Won", Probability: prob(1), Closed: true},
			}}}},
		},
		{
			name: "list deal pipelines with archived ones", tool: "hubspot_list_deal_pipelines", args: `{"include_archived": true}`, reply: pipelinesReply,
			wantMethod: http.MethodGet, wantPath: "/crm/v3/pipelines/deals",
			want: hubspot.ListDealPipelinesOutput{Pipelines: []hubspot.Pipeline{
				{ID: "default", Label: "Sales Pipeline", Stages: []hubspot.Stage{
					{ID: "appointmentscheduled", Label: "Appointment Scheduled", Probability: prob(0.2)},
					{ID: "closedwon", Label: "Closed Won", Probability: prob(1), Closed: true},
					{ID: "oldstage", Label: "Old stage", Probability: prob(0.5), Archived: true},
				}},
				{ID: "1234567", Label: "Old pipeline", Archived: true, Stages: []hubspot.Stage{}},
			}},
		},
		{
			name: "list deal properties matching stage", tool: "hubspot_list_properties", args: `{"object_type": "deals", "match": "STAGE"}`,
			reply: propertiesReply, wantMethod: http.MethodGet, wantPath: "/crm/v3/properties/deals",
			want: hubspot.ListPropertiesOutput{Properties: []hubspot.Property{
				{Name: "dealstage", Label: "Deal Stage", Type: "enumeration", FieldType: "radio", Description: "The stage of the deal.",
					Options: []hubspot.Option{{Value: "appointmentscheduled", Label: "Appointment Scheduled"}}},
				{Name: "hs_deal_stage_probability", Label: "Deal probability", Type: "number", FieldType: "number", Options: []hubspot.Option{}, ReadOnly: true},
			}},
		},
	}
}

func TestOperations(t *testing.T) {
	t.Parallel()
	for _, tc := range operationCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}

// TestEveryOperationHasACase fails when an operation is added without a request check.
func TestEveryOperationHasACase(t *testing.T) {
	t.Parallel()
	var covered []string
	for _, tc := range operationCases() {
		if !slices.Contains(covered, tc.tool) {
			covered = append(covered, tc.tool)
		}
	}
	var all []string
	for name := range tools(t) {
		all = append(all, name)
	}
	slices.Sort(covered)
	slices.Sort(all)
	if diff := cmp.Diff(all, covered); diff != "" {
		t.Errorf("tools without a case (-all +covered):\n%s", diff)
	}
}
