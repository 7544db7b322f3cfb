package notion

import (
	"context"
	"net/http"
	"sort"

	"github.com/switchboard-hub/switchboard/providers"
)

// QueryDatabase lists a database's rows, filtered and sorted.
// Notion API docs: https://developers.notion.com/reference/post-database-query
var QueryDatabase = &providers.Operation[QueryDatabaseInput, QueryDatabaseOutput]{
	Name:  "query_database",
	Title: "Query database",
	Description: "List the rows (pages) of a Notion database, optionally filtered and sorted, a page at a time. Use it to " +
		"find rows by column values, e.g. filter {\"property\": \"Status\", \"status\": {\"equals\": \"Done\"}} or " +
		"{\"and\": [...]}; sorts like [{\"property\": \"Due\", \"direction\": \"ascending\"}]. Call get_database first to " +
		"learn the column names and types. To find pages by title across the workspace, use search instead. Returns " +
		"the rows with each column as plain text, and next_cursor when more rows follow.",
	DocsURL: "https://developers.notion.com/reference/post-database-query",
	Scopes:  []string{"read_content"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     queryDatabase,
}

// QueryDatabaseInput is the input of query_database.
type QueryDatabaseInput struct {
	DatabaseID string           `json:"database_id" jsonschema:"The database's ID (with or without dashes) or its Notion URL" schema:"minLength=1,example=d9824bdc-8445-4327-be8b-5b47500af6ce"`
	Filter     map[string]any   `json:"filter,omitempty" jsonschema:"A Notion database filter object, e.g. {\"property\": \"Status\", \"status\": {\"equals\": \"Done\"}}"`
	Sorts      []map[string]any `json:"sorts,omitempty" jsonschema:"Notion sort objects, applied in order, e.g. [{\"property\": \"Due\", \"direction\": \"ascending\"}]"`
	providers.PageInput
}

// QueryDatabaseOutput is one page of a database's rows.
type QueryDatabaseOutput struct {
	Pages      []Page `json:"pages" jsonschema:"The rows of this page of results"`
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"Pass as cursor to fetch the next page; absent on the last page"`
}

func queryDatabase(ctx context.Context, c *providers.Call, in QueryDatabaseInput) (QueryDatabaseOutput, error) {
	id, err := normalizeID("database_id", in.DatabaseID)
	if err != nil {
		return QueryDatabaseOutput{}, err
	}
	cursor, size, err := pageParams(in.PageInput)
	if err != nil {
		return QueryDatabaseOutput{}, err
	}
	body := map[string]any{"page_size": size}
	if cursor != "" {
		body["start_cursor"] = cursor
	}
	if len(in.Filter) > 0 {
		body["filter"] = in.Filter
	}
	if len(in.Sorts) > 0 {
		body["sorts"] = in.Sorts
	}
	var r listResponse[pageObject]
	if err := (request{method: http.MethodPost, path: "/databases/" + id + "/query", body: body}).do(ctx, c, &r); err != nil {
		return QueryDatabaseOutput{}, err
	}
	out := QueryDatabaseOutput{Pages: make([]Page, 0, len(r.Results)), NextCursor: r.next()}
	for _, p := range r.Results {
		out.Pages = append(out.Pages, p.toPage())
	}
	return out, nil
}

// GetDatabase reads a database's title and columns.
// Notion API docs: https://developers.notion.com/reference/retrieve-a-database
var GetDatabase = &providers.Operation[GetDatabaseInput, Database]{
	Name:  "get_database",
	Title: "Get database",
	Description: "Read a Notion database's title, description and columns: each column's name, type and, for select, " +
		"multi_select and status columns, the allowed options. Use it before query_database (to write filters) or " +
		"create_page / update_page on its rows (to write property values). It does not list rows: use query_database. " +
		"Returns the database with its columns sorted by name.",
	DocsURL: "https://developers.notion.com/reference/retrieve-a-database",
	Scopes:  []string{"read_content"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getDatabase,
}

// GetDatabaseInput is the input of get_database.
type GetDatabaseInput struct {
	DatabaseID string `json:"database_id" jsonschema:"The database's ID (with or without dashes) or its Notion URL" schema:"minLength=1,example=d9824bdc-8445-4327-be8b-5b47500af6ce"`
}

// Database is a Notion database and its columns.
type Database struct {
	ID             string   `json:"id" jsonschema:"Database ID; pass it to query_database or create_page"`
	URL            string   `json:"url" jsonschema:"The database's address in Notion"`
	Title          string   `json:"title" jsonschema:"The database's title as plain text"`
	Description    string   `json:"description" jsonschema:"The database's description as plain text"`
	Parent         Parent   `json:"parent" jsonschema:"Where the database lives"`
	Archived       bool     `json:"archived" jsonschema:"Whether the database is archived"`
	LastEditedTime string   `json:"last_edited_time" jsonschema:"When the database was last edited (RFC 3339)"`
	Columns        []Column `json:"columns" jsonschema:"The database's columns (properties), sorted by name"`
}

// Column is one database property.
type Column struct {
	Name    string   `json:"name" jsonschema:"Column name, the key to use in properties and filters"`
	ID      string   `json:"id" jsonschema:"Column ID, which Notion also accepts as a key"`
	Type    string   `json:"type" jsonschema:"Column type: title, rich_text, number, select, multi_select, status, date, people, checkbox, url, email, relation, formula, …"`
	Options []string `json:"options,omitempty" jsonschema:"The allowed option names of a select, multi_select or status column"`
}

// databaseObject is a database as Notion returns it.
// https://developers.notion.com/reference/database
type databaseObject struct {
	Object         string                    `json:"object"`
	ID             string                    `json:"id"`
	URL            string                    `json:"url"`
	Title          []richText                `json:"title"`
	Description    []richText                `json:"description"`
	Parent         parentRef                 `json:"parent"`
	Archived       bool                      `json:"archived"`
	LastEditedTime string                    `json:"last_edited_time"`
	Properties     map[string]propertySchema `json:"properties"`
}

// propertySchema is a database column as Notion describes it.
type propertySchema struct {
	ID          string                           `json:"id"`
	Name        string                           `json:"name"`
	Type        string                           `json:"type"`
	Select      *struct{ Options []namedOption } `json:"select"`
	MultiSelect *struct{ Options []namedOption } `json:"multi_select"`
	Status      *struct{ Options []namedOption } `json:"status"`
}

func (d databaseObject) toDatabase() Database {
	out := Database{ID: d.ID, URL: d.URL, Title: plain(d.Title), Description: plain(d.Description), Parent: d.Parent.toParent(),
		Archived: d.Archived, LastEditedTime: d.LastEditedTime, Columns: []Column{}}
	for name, p := range d.Properties {
		col := Column{Name: name, ID: p.ID, Type: p.Type}
		for _, opts := range []*struct{ Options []namedOption }{p.Select, p.MultiSelect, p.Status} {
			if opts == nil {
				continue
			}
			for _, o := range opts.Options {
				col.Options = append(col.Options, o.Name)
			}
		}
		out.Columns = append(out.Columns, col)
	}
	sort.Slice(out.Columns, func(i, j int) bool { return out.Columns[i].Name < out.Columns[j].Name })
	return out
}

func getDatabase(ctx context.Context, c *providers.Call, in GetDatabaseInput) (Database, error) {
	id, err := normalizeID("database_id", in.DatabaseID)
	if err != nil {
		return Database{}, err
	}
	var d databaseObject
	if err := (request{method: http.MethodGet, path: "/databases/" + id}).do(ctx, c, &d); err != nil {
		return Database{}, err
	}
	return d.toDatabase(), nil
}
