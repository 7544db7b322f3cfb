package airtable

import (
	"context"
	"net/http"
	"net/url"

	"github.com/switchboard-hub/switchboard/providers"
)

// ListBases lists the bases the token can reach.
// Airtable API docs: https://airtable.com/developers/web/api/list-bases
var ListBases = &providers.Operation[ListBasesInput, ListBasesOutput]{
	Name:  "list_bases",
	Title: "List bases",
	Description: "List the Airtable bases this connection's token may use (those added under the token's Access), to find " +
		"the base_id every other Airtable tool needs. Use get_base_schema next to see a base's tables and fields. " +
		"Returns each base's ID, name and the token user's permission level, up to 1,000 per page, and next_cursor " +
		"when there are more.",
	DocsURL: "https://airtable.com/developers/web/api/list-bases",
	Scopes:  []string{"schema.bases:read"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listBases,
}

// ListBasesInput is the input of list_bases. Airtable sets the page size itself.
type ListBasesInput struct {
	Cursor *string `json:"cursor,omitempty" jsonschema:"The previous page's next_cursor, with the other arguments unchanged; omit for the first page" schema:"example=eyJwIjoyfQ"`
}

// ListBasesOutput is the output of list_bases.
type ListBasesOutput struct {
	Bases      []Base `json:"bases" jsonschema:"The bases of this page"`
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"Pass as cursor to fetch the next page; absent on the last page"`
}

// Base is one Airtable base.
type Base struct {
	ID              string `json:"id" jsonschema:"The base's ID (app…); pass it as base_id"`
	Name            string `json:"name" jsonschema:"The base's name"`
	PermissionLevel string `json:"permission_level" jsonschema:"What the token's user may do in the base: none, read, comment, edit or create"`
}

func listBases(ctx context.Context, c *providers.Call, in ListBasesInput) (ListBasesOutput, error) {
	offset, err := providers.PageInput{Cursor: in.Cursor}.DecodedCursor()
	if err != nil {
		return ListBasesOutput{}, err
	}
	q := url.Values{}
	if offset != "" {
		q.Set("offset", offset)
	}
	var resp struct {
		Bases []struct {
			ID              string `json:"id"`
			Name            string `json:"name"`
			PermissionLevel string `json:"permissionLevel"`
		} `json:"bases"`
		Offset string `json:"offset"`
	}
	if err := (request{method: http.MethodGet, path: "/meta/bases", query: q}).do(ctx, c, &resp); err != nil {
		return ListBasesOutput{}, err
	}
	out := ListBasesOutput{Bases: make([]Base, 0, len(resp.Bases)), NextCursor: providers.EncodeCursor(resp.Offset)}
	for _, b := range resp.Bases {
		out.Bases = append(out.Bases, Base{ID: b.ID, Name: b.Name, PermissionLevel: b.PermissionLevel})
	}
	return out, nil
}

// GetBaseSchema reads a base's tables, fields and views.
// Airtable API docs: https://airtable.com/developers/web/api/get-base-schema
var GetBaseSchema = &providers.Operation[GetBaseSchemaInput, BaseSchema]{
	Name:  "get_base_schema",
	Title: "Get base schema",
	Description: "Read the structure of one Airtable base: its tables, each table's fields (name, type, and options such " +
		"as a select field's choices) and views. Call it before list_records, create_records or update_records to " +
		"learn the exact table and field names and the values a field takes. Returns every table with its ID, name, " +
		"primary field, fields and views.",
	DocsURL: "https://airtable.com/developers/web/api/get-base-schema",
	Scopes:  []string{"schema.bases:read"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getBaseSchema,
}

// GetBaseSchemaInput is the input of get_base_schema.
type GetBaseSchemaInput struct {
	BaseID string `json:"base_id" jsonschema:"The base's ID (app…), from list_bases or the base's URL" schema:"example=appLkNDICXNqxSDhG,pattern=^app[A-Za-z0-9]{14}$"`
}

// BaseSchema is the output of get_base_schema.
type BaseSchema struct {
	Tables []Table `json:"tables" jsonschema:"The base's tables"`
}

// Table is one table of a base.
type Table struct {
	ID             string  `json:"id" jsonschema:"The table's ID (tbl…); pass it, or the name, as table"`
	Name           string  `json:"name" jsonschema:"The table's name"`
	Description    string  `json:"description,omitempty" jsonschema:"The table's description, if it has one"`
	PrimaryFieldID string  `json:"primary_field_id" jsonschema:"The ID of the field that names each record"`
	Fields         []Field `json:"fields" jsonschema:"The table's fields (columns)"`
	Views          []View  `json:"views" jsonschema:"The table's views; pass a name or ID as view to list_records"`
}

// Field is one field (column) of a table.
type Field struct {
	ID          string         `json:"id" jsonschema:"The field's ID (fld…)"`
	Name        string         `json:"name" jsonschema:"The field's name, the key of its value in a record's fields"`
	Type        string         `json:"type" jsonschema:"The field's type: singleLineText, multilineText, number, singleSelect, multipleSelects, checkbox, date, dateTime, email, url, multipleRecordLinks, formula, …"`
	Description string         `json:"description,omitempty" jsonschema:"The field's description, if it has one"`
	Options     map[string]any `json:"options,omitempty" jsonschema:"The type's options as Airtable sends them, e.g. a select field's choices"`
}

// View is one view of a table.
type View struct {
	ID   string `json:"id" jsonschema:"The view's ID (viw…)"`
	Name string `json:"name" jsonschema:"The view's name"`
	Type string `json:"type" jsonschema:"The view's type: grid, form, calendar, gallery, kanban, timeline or block"`
}

func getBaseSchema(ctx context.Context, c *providers.Call, in GetBaseSchemaInput) (BaseSchema, error) {
	if err := checkBaseID(in.BaseID); err != nil {
		return BaseSchema{}, err
	}
	var resp struct {
		Tables []struct {
			ID             string `json:"id"`
			Name           string `json:"name"`
			Description    string `json:"description"`
			PrimaryFieldID string `json:"primaryFieldId"`
			Fields         []Field
			Views          []View
		} `json:"tables"`
	}
	if err := (request{method: http.MethodGet, path: "/meta/bases/" + in.BaseID + "/tables"}).do(ctx, c, &resp); err != nil {
		return BaseSchema{}, err
	}
	out := BaseSchema{Tables: make([]Table, 0, len(resp.Tables))}
	for _, t := range resp.Tables {
		fields, views := t.Fields, t.Views
		if fields == nil {
			fields = []Field{}
		}
		if views == nil {
			views = []View{}
		}
		out.Tables = append(out.Tables, Table{ID: t.ID, Name: t.Name, Description: t.Description,
			PrimaryFieldID: t.PrimaryFieldID, Fields: fields, Views: views})
	}
	return out, nil
}
