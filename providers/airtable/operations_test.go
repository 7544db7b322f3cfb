package airtable_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/airtable"
)

// Canned answers, shaped like the examples of Airtable's Web API reference.
const (
	basesReply = `{"bases": [
		{"id": "appLkNDICXNqxSDhG", "name": "Apartment Hunting", "permissionLevel": "create"},
		{"id": "appSW9R5uCNmRmfl6", "name": "Project Tracker", "permissionLevel": "edit"}],
		"offset": "itr23sEjsdfEr3282/appSW9R5uCNmRmfl6"}`
	schemaReply = `{"tables": [{
		"id": "tbltp8DGLhqbUmjK1", "name": "Apartments", "description": "Apartments to track.", "primaryFieldId": "fld1VnoyuotSTyxW1",
		"fields": [
			{"id": "fld1VnoyuotSTyxW1", "name": "Name", "type": "singleLineText", "description": "Name of the apartment"},
			{"id": "fldoaIqdn5szURHpw", "name": "Pictures", "type": "multipleAttachments", "options": {"isReversed": false}},
			{"id": "fldumZe00w09RYTW6", "name": "District", "type": "singleSelect", "options": {"choices": [
				{"id": "selhQ8AyZ2ZzMU2jq", "name": "Mission", "color": "blueLight2"}]}}],
		"views": [{"id": "viwQpsuEDqHFqegkp", "name": "Grid view", "type": "grid"}]}]}`
	recordsReply = `{"records": [
		{"id": "rec560UJdUtocSouk", "createdTime": "2022-09-12T21:03:48.000Z", "fields": {"Name": "Union Square", "Visited": true, "Rent": 3200}},
		{"id": "rec3lbPRG4aVqkeOQ", "createdTime": "2022-09-12T21:03:48.000Z", "fields": {}}],
		"offset": "itrYhG2OAhH1w3L1d/rec3lbPRG4aVqkeOQ"}`
	recordReply   = `{"id": "rec560UJdUtocSouk", "createdTime": "2022-09-12T21:03:48.000Z", "fields": {"Name": "Union Square", "District": "Mission"}}`
	createdReply  = `{"records": [{"id": "recVv8Os1IR6nE1Nd", "createdTime": "2022-09-13T10:00:00.000Z", "fields": {"Name": "Call Ada", "Status": "Todo"}}]}`
	updatedReply  = `{"records": [{"id": "rec560UJdUtocSouk", "createdTime": "2022-09-12T21:03:48.000Z", "fields": {"Name": "Union Square", "Visited": true}}]}`
	deletedReply  = `{"records": [{"id": "rec560UJdUtocSouk", "deleted": true}, {"id": "rec3lbPRG4aVqkeOQ", "deleted": true}]}`
	testBaseID    = "appLkNDICXNqxSDhG"
	testRecordID  = "rec560UJdUtocSouk"
	otherRecordID = "rec3lbPRG4aVqkeOQ"
)

func operationCases() []opCase {
	unionSquare := airtable.Record{ID: testRecordID, CreatedTime: "2022-09-12T21:03:48.000Z",
		Fields: map[string]any{"Name": "Union Square", "Visited": true, "Rent": float64(3200)}}
	listed := airtable.ListRecordsOutput{
		Records:    []airtable.Record{unionSquare, {ID: otherRecordID, CreatedTime: "2022-09-12T21:03:48.000Z", Fields: map[string]any{}}},
		NextCursor: providers.EncodeCursor("itrYhG2OAhH1w3L1d/rec3lbPRG4aVqkeOQ"),
	}
	return []opCase{
		{
			name: "list bases", tool: "airtable_list_bases", args: `{}`, reply: basesReply,
			wantMethod: http.MethodGet, wantPath: "/meta/bases",
			want: airtable.ListBasesOutput{Bases: []airtable.Base{
				{ID: "appLkNDICXNqxSDhG", Name: "Apartment Hunting", PermissionLevel: "create"},
				{ID: "appSW9R5uCNmRmfl6", Name: "Project Tracker", PermissionLevel: "edit"},
			}, NextCursor: providers.EncodeCursor("itr23sEjsdfEr3282/appSW9R5uCNmRmfl6")},
		},
		{
			name: "list bases, next page", tool: "airtable_list_bases", reply: `{"bases": []}`,
			args:       `{"cursor": "` + providers.EncodeCursor("itr23sEjsdfEr3282/appSW9R5uCNmRmfl6") + `"}`,
			wantMethod: http.MethodGet, wantPath: "/meta/bases", wantQuery: url.Values{"offset": {"itr23sEjsdfEr3282/appSW9R5uCNmRmfl6"}},
			want: airtable.ListBasesOutput{Bases: []airtable.Base{}},
		},
		{
			name: "get base schema", tool: "airtable_get_base_schema", args: `{"base_id": "` + testBaseID + `"}`, reply: schemaReply,
			wantMethod: http.MethodGet, wantPath: "/meta/bases/appLkNDICXNqxSDhG/tables",
			want: airtable.BaseSchema{Tables: []airtable.Table{{
				ID: "tbltp8DGLhqbUmjK1", Name: "Apartments", Description: "Apartments to track.", PrimaryFieldID: "fld1VnoyuotSTyxW1",
				Fields: []airtable.Field{
					{ID: "fld1VnoyuotSTyxW1", Name: "Name", Type: "singleLineText", Description: "Name of the apartment"},
					{ID: "fldoaIqdn5szURHpw", Name: "Pictures", Type: "multipleAttachments", Options: map[string]any{"isReversed": false}},
					{ID: "fldumZe00w09RYTW6", Name: "District", Type: "singleSelect", Options: map[string]any{"choices": []any{
						map[string]any{"id": "selhQ8AyZ2ZzMU2jq", "name": "Mission", "color": "blueLight2"}}}},
				},
				Views: []airtable.View{{ID: "viwQpsuEDqHFqegkp", Name: "Grid view", Type: "grid"}},
			}}},
		},
		{
			name: "list records, defaults", tool: "airtable_list_records", reply: recordsReply,
			args:       `{"base_id": "` + testBaseID + `", "table": "Apartments"}`,
			wantMethod: http.MethodGet, wantPath: "/appLkNDICXNqxSDhG/Apartments", wantQuery: url.Values{"pageSize": {"30"}},
			want: listed,
		},
		{
			name: "list records, formula, view, sort, fields and a cursor", tool: "airtable_list_records", reply: recordsReply,
			args: `{"base_id": "` + testBaseID + `", "table": "Open / closed", "filter_by_formula": "AND({Visited}, {Rent} < 4000)",
				"view": "Grid view", "sort": [{"field": "Rent", "direction": "desc"}, {"field": "Name"}], "fields": ["Name", "Rent"],
				"limit": 100, "cursor": "` + providers.EncodeCursor("itrYhG2OAhH1w3L1d/rec3lbPRG4aVqkeOQ") + `"}`,
			wantMethod: http.MethodGet, wantPath: "/appLkNDICXNqxSDhG/Open / closed",
			wantQuery: url.Values{"pageSize": {"100"}, "offset": {"itrYhG2OAhH1w3L1d/rec3lbPRG4aVqkeOQ"},
				"filterByFormula": {"AND({Visited}, {Rent} < 4000)"}, "view": {"Grid view"},
				"sort[0][field]": {"Rent"}, "sort[0][direction]": {"desc"}, "sort[1][field]": {"Name"}, "fields[]": {"Name", "Rent"}},
			want: listed,
		},
		{
			name: "get record", tool: "airtable_get_record", reply: recordReply,
			args:       `{"base_id": "` + testBaseID + `", "table": "tbltp8DGLhqbUmjK1", "record_id": "` + testRecordID + `"}`,
			wantMethod: http.MethodGet, wantPath: "/appLkNDICXNqxSDhG/tbltp8DGLhqbUmjK1/rec560UJdUtocSouk",
			want: airtable.Record{ID: testRecordID, CreatedTime: "2022-09-12T21:03:48.000Z", Fields: map[string]any{"Name": "Union Square", "District": "Mission"}},
		},
		{
			name: "create records with typecast", tool: "airtable_create_records", reply: createdReply,
			args:       `{"base_id": "` + testBaseID + `", "table": "Tasks", "records": [{"fields": {"Name": "Call Ada", "Status": "Todo"}}], "typecast": true}`,
			wantMethod: http.MethodPost, wantPath: "/appLkNDICXNqxSDhG/Tasks",
			wantBody: map[string]any{"records": []any{map[string]any{"fields": map[string]any{"Name": "Call Ada", "Status": "Todo"}}}, "typecast": true},
			want: airtable.RecordsOutput{Records: []airtable.Record{{ID: "recVv8Os1IR6nE1Nd", CreatedTime: "2022-09-13T10:00:00.000Z",
				Fields: map[string]any{"Name": "Call Ada", "Status": "Todo"}}}},
		},
		{
			name: "update records", tool: "airtable_update_records", reply: updatedReply,
			args:       `{"base_id": "` + testBaseID + `", "table": "Apartments", "records": [{"id": "` + testRecordID + `", "fields": {"Visited": true, "Notes": null}}]}`,
			wantMethod: http.MethodPatch, wantPath: "/appLkNDICXNqxSDhG/Apartments",
			wantBody: map[string]any{"records": []any{map[string]any{"id": testRecordID, "fields": map[string]any{"Visited": true, "Notes": nil}}}},
			want: airtable.RecordsOutput{Records: []airtable.Record{{ID: testRecordID, CreatedTime: "2022-09-12T21:03:48.000Z",
				Fields: map[string]any{"Name": "Union Square", "Visited": true}}}},
		},
		{
			name: "delete records", tool: "airtable_delete_records", reply: deletedReply,
			args:       `{"base_id": "` + testBaseID + `", "table": "Apartments", "record_ids": ["` + testRecordID + `", "` + otherRecordID + `"]}`,
			wantMethod: http.MethodDelete, wantPath: "/appLkNDICXNqxSDhG/Apartments",
			wantQuery: url.Values{"records[]": {testRecordID, otherRecordID}},
			want:      airtable.DeleteRecordsOutput{Deleted: []string{testRecordID, otherRecordID}},
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
