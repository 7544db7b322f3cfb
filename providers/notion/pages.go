package notion

import (
	"context"
	"net/http"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// GetPage reads one page's properties.
// Notion API docs: https://developers.notion.com/reference/retrieve-a-page
var GetPage = &providers.Operation[GetPageInput, Page]{
	Name:  "get_page",
	Title: "Get page",
	Description: "Read one Notion page's title and properties (for a database row: its column values). Use it when you " +
		"have a page ID or URL, from search or query_database; it does not return the page's body text: call " +
		"get_block_children with the same ID for that. Returns the page with its title, URL, parent, archived flag, " +
		"each property as plain text in values, and the typed properties as Notion sends them.",
	DocsURL: "https://developers.notion.com/reference/retrieve-a-page",
	Scopes:  []string{"read_content"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getPage,
}

// GetPageInput is the input of get_page.
type GetPageInput struct {
	PageID string `json:"page_id" jsonschema:"The page's ID (with or without dashes) or its Notion URL" schema:"minLength=1,example=59833787-2cf9-4fdf-8782-e53db20768a5"`
}

func getPage(ctx context.Context, c *providers.Call, in GetPageInput) (Page, error) {
	id, err := normalizeID("page_id", in.PageID)
	if err != nil {
		return Page{}, err
	}
	var p pageObject
	if err := (request{method: http.MethodGet, path: "/pages/" + id}).do(ctx, c, &p); err != nil {
		return Page{}, err
	}
	return p.toPage(), nil
}

// CreatePage creates a page under a page or as a row of a database.
// Notion API docs: https://developers.notion.com/reference/post-page
var CreatePage = &providers.Operation[CreatePageInput, Page]{
	Name:  "create_page",
	Title: "Create page",
	Description: "Create a Notion page: a sub-page of a page (parent_page_id) or a new row of a database (database_id); " +
		"give exactly one. title sets the page's title (for a database row, its title column). For a database row, set " +
		"the other columns in properties, keyed by column name, with Notion property values, e.g. " +
		`{"Status": {"status": {"name": "Done"}}, "Tags": {"multi_select": [{"name": "urgent"}]}} ` +
		"(get_database lists the columns and their options). content adds body text, one paragraph per blank-line-" +
		"separated part; children adds Notion block objects instead. The parent must be shared with the integration. " +
		"Each call creates a new page: do not retry one that succeeded. Returns the new page.",
	DocsURL: "https://developers.notion.com/reference/post-page",
	Scopes:  []string{"insert_content"},
	Hints:   providers.Hints{},
	Run:     createPage,
}

// CreatePageInput is the input of create_page.
type CreatePageInput struct {
	ParentPageID *string          `json:"parent_page_id,omitempty" jsonschema:"ID or URL of the page to create the new page under; give this or database_id" schema:"minLength=1,example=59833787-2cf9-4fdf-8782-e53db20768a5"`
	DatabaseID   *string          `json:"database_id,omitempty" jsonschema:"ID or URL of the database to add the page to as a row; give this or parent_page_id" schema:"minLength=1,example=d9824bdc-8445-4327-be8b-5b47500af6ce"`
	Title        *string          `json:"title,omitempty" jsonschema:"The page's title (for a database row, its title column)" schema:"maxLength=2000,example=Q3 planning notes"`
	Properties   map[string]any   `json:"properties,omitempty" jsonschema:"Database row values by column name, as Notion property value objects (only with database_id), e.g. {\"Status\": {\"status\": {\"name\": \"Done\"}}}"`
	Content      *string          `json:"content,omitempty" jsonschema:"Body text; each part separated by a blank line becomes a paragraph" schema:"example=Agenda for Monday."`
	Children     []map[string]any `json:"children,omitempty" jsonschema:"Body content as Notion block objects (at most 100), after content's paragraphs, e.g. {\"type\": \"to_do\", \"to_do\": {\"rich_text\": [{\"text\": {\"content\": \"Call Ada\"}}]}}" schema:"maxItems=100"`
	IconEmoji    *string          `json:"icon_emoji,omitempty" jsonschema:"An emoji to show as the page's icon" schema:"maxLength=16,example=📝"`
}

func createPage(ctx context.Context, c *providers.Call, in CreatePageInput) (Page, error) {
	body := map[string]any{}
	switch {
	case in.ParentPageID != nil && in.DatabaseID != nil:
		return Page{}, switchboard.Invalid("database_id", "give either parent_page_id or database_id, not both")
	case in.ParentPageID != nil:
		id, err := normalizeID("parent_page_id", *in.ParentPageID)
		if err != nil {
			return Page{}, err
		}
		if len(in.Properties) > 0 {
			return Page{}, switchboard.Invalid("properties", "are database columns; a page under a page has only a title")
		}
		body["parent"] = map[string]any{"page_id": id}
	case in.DatabaseID != nil:
		id, err := normalizeID("database_id", *in.DatabaseID)
		if err != nil {
			return Page{}, err
		}
		body["parent"] = map[string]any{"database_id": id}
	default:
		return Page{}, switchboard.Invalid("parent_page_id", "is required: give parent_page_id (a page) or database_id (a database)")
	}
	props := map[string]any{}
	for k, v := range in.Properties {
		props[k] = v
	}
	if in.Title != nil {
		if _, dup := props["title"]; dup {
			return Page{}, switchboard.Invalid("title", "is given twice: as title and as properties.title")
		}
		// The title property's ID is "title" in every page and database.
		props["title"] = map[string]any{"title": textValue(*in.Title)}
	}
	if len(props) > 0 {
		body["properties"] = props
	}
	children := paragraphs(deref(in.Content))
	children = append(children, in.Children...)
	if len(children) > maxChildren {
		return Page{}, switchboard.Invalid("children", "Notion takes at most 100 blocks at once (paragraphs of content included); add the rest with append_block_children")
	}
	if len(children) > 0 {
		body["children"] = children
	}
	if in.IconEmoji != nil {
		body["icon"] = map[string]any{"type": "emoji", "emoji": *in.IconEmoji}
	}
	var p pageObject
	if err := (request{method: http.MethodPost, path: "/pages", body: body}).do(ctx, c, &p); err != nil {
		return Page{}, err
	}
	return p.toPage(), nil
}

// maxChildren is the most blocks Notion takes in one request.
const maxChildren = 100

// paragraphs splits text at blank lines into paragraph blocks.
func paragraphs(text string) []map[string]any {
	out := []map[string]any{}
	for part := range strings.SplitSeq(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		out = append(out, map[string]any{"object": "block", "type": "paragraph", "paragraph": map[string]any{"rich_text": textValue(part)}})
	}
	return out
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// UpdatePage changes a page's properties, icon or archived state.
// Notion API docs: https://developers.notion.com/reference/patch-page
var UpdatePage = &providers.Operation[UpdatePageInput, Page]{
	Name:  "update_page",
	Title: "Update page",
	Description: "Change an existing Notion page: rename it (title), set database row columns (properties, keyed by " +
		"column name with Notion property values; a given column is overwritten, others stay), change its icon, or " +
		"archive it (archived: true moves it to the trash; false restores it). It does not edit body text: use " +
		"append_block_children to add content. Returns the page as it is after the change.",
	DocsURL: "https://developers.notion.com/reference/patch-page",
	Scopes:  []string{"update_content"},
	Hints:   providers.Hints{Destructive: true, Idempotent: true},
	Run:     updatePage,
}

// UpdatePageInput is the input of update_page.
type UpdatePageInput struct {
	PageID     string         `json:"page_id" jsonschema:"The page's ID (with or without dashes) or its Notion URL" schema:"minLength=1,example=59833787-2cf9-4fdf-8782-e53db20768a5"`
	Title      *string        `json:"title,omitempty" jsonschema:"New title" schema:"maxLength=2000,example=Q3 planning notes (final)"`
	Properties map[string]any `json:"properties,omitempty" jsonschema:"Columns to overwrite, by name, as Notion property value objects, e.g. {\"Status\": {\"status\": {\"name\": \"Done\"}}}; a null value clears a column"`
	Archived   *bool          `json:"archived,omitempty" jsonschema:"true archives the page (moves it to the trash); false restores it"`
	IconEmoji  *string        `json:"icon_emoji,omitempty" jsonschema:"An emoji to show as the page's icon" schema:"maxLength=16,example=✅"`
}

func updatePage(ctx context.Context, c *providers.Call, in UpdatePageInput) (Page, error) {
	id, err := normalizeID("page_id", in.PageID)
	if err != nil {
		return Page{}, err
	}
	body := map[string]any{}
	props := map[string]any{}
	for k, v := range in.Properties {
		props[k] = v
	}
	if in.Title != nil {
		if _, dup := props["title"]; dup {
			return Page{}, switchboard.Invalid("title", "is given twice: as title and as properties.title")
		}
		props["title"] = map[string]any{"title": textValue(*in.Title)}
	}
	if len(props) > 0 {
		body["properties"] = props
	}
	if in.Archived != nil {
		body["archived"] = *in.Archived
	}
	if in.IconEmoji != nil {
		body["icon"] = map[string]any{"type": "emoji", "emoji": *in.IconEmoji}
	}
	if len(body) == 0 {
		return Page{}, switchboard.Invalid("arguments", "nothing to change: give title, properties, archived or icon_emoji")
	}
	var p pageObject
	if err := (request{method: http.MethodPatch, path: "/pages/" + id, body: body}).do(ctx, c, &p); err != nil {
		return Page{}, err
	}
	return p.toPage(), nil
}
