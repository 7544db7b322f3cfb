package notion_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/switchboard-hub/switchboard/providers/notion"
)

// fixtureProps returns the properties of a page fixture as decoded JSON: the tools pass
// them through unchanged.
func fixtureProps(t *testing.T, name string) map[string]any {
	t.Helper()
	var p struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(fixture(t, name), &p); err != nil {
		t.Fatalf("decode fixture %s: %v", name, err)
	}
	return p.Properties
}

// kalePage is page_row.json as the tools return it.
func kalePage(t *testing.T) notion.Page {
	return notion.Page{
		ID: "59833787-2cf9-4fdf-8782-e53db20768a5", URL: "https://www.notion.so/Tuscan-kale-598337872cf94fdf8782e53db20768a5",
		Title:       "Tuscan kale",
		Parent:      notion.Parent{Type: "database_id", ID: "d9824bdc-8445-4327-be8b-5b47500af6ce"},
		CreatedTime: "2022-03-01T19:05:00.000Z", LastEditedTime: "2022-07-06T20:25:00.000Z",
		Values: map[string]string{
			"Store availability": "Gus's Community Market, Rainbow Grocery", "Food group": "🥬 Vegetable", "Price": "2.5",
			"Status": "Not started", "Last ordered": "2022-02-22", "In stock": "true", "Responsible": "Ada Lovelace",
			"Link": "https://www.nytimes.com/2018/10/09/dining/tomato-recipes.html", "Description": "A dark green leafy vegetable",
			"Name": "Tuscan kale",
		},
		Properties: fixtureProps(t, "page_row.json"),
	}
}

// notesPage is page_child.json as the tools return it.
func notesPage(t *testing.T) notion.Page {
	return notion.Page{
		ID: "b55c9c91-384d-452b-81db-d1ef79372b75", URL: "https://www.notion.so/Q3-planning-notes-b55c9c91384d452b81dbd1ef79372b75",
		Title:       "Q3 planning notes",
		Parent:      notion.Parent{Type: "page_id", ID: "59833787-2cf9-4fdf-8782-e53db20768a5"},
		CreatedTime: "2022-07-07T09:00:00.000Z", LastEditedTime: "2022-07-07T09:00:00.000Z",
		Values:     map[string]string{"title": "Q3 planning notes"},
		Properties: fixtureProps(t, "page_child.json"),
	}
}

func TestPages(t *testing.T) {
	t.Parallel()
	for _, tc := range []opCase{
		{
			name: "get page by ID", tool: "notion_get_page", fixture: "page_row.json",
			args:       `{"page_id": "59833787-2cf9-4fdf-8782-e53db20768a5"}`,
			wantMethod: http.MethodGet, wantPath: "/pages/59833787-2cf9-4fdf-8782-e53db20768a5",
			want: kalePage(t),
		},
		{
			name: "get page by URL", tool: "notion_get_page", fixture: "page_row.json",
			args:       `{"page_id": "https://www.notion.so/acme/Tuscan-kale-598337872CF94FDF8782E53DB20768A5?pvs=4"}`,
			wantMethod: http.MethodGet, wantPath: "/pages/59833787-2cf9-4fdf-8782-e53db20768a5",
			want: kalePage(t),
		},
		{
			name: "create sub-page with content and icon", tool: "notion_create_page", fixture: "page_child.json",
			args:       `{"parent_page_id": "598337872cf94fdf8782e53db20768a5", "title": "Q3 planning notes", "content": "Goals.\n\n\nRisks.", "children": [{"type": "to_do", "to_do": {"rich_text": [{"text": {"content": "Call Ada"}}]}}], "icon_emoji": "📝"}`,
			wantMethod: http.MethodPost, wantPath: "/pages",
			wantBody: map[string]any{
				"parent":     map[string]any{"page_id": "59833787-2cf9-4fdf-8782-e53db20768a5"},
				"properties": map[string]any{"title": map[string]any{"title": text("Q3 planning notes")}},
				"children": []any{paragraph("Goals."), paragraph("Risks."),
					map[string]any{"type": "to_do", "to_do": map[string]any{"rich_text": []any{map[string]any{"text": map[string]any{"content": "Call Ada"}}}}}},
				"icon": map[string]any{"type": "emoji", "emoji": "📝"},
			},
			want: notesPage(t),
		},
		{
			name: "create database row with columns", tool: "notion_create_page", fixture: "page_row.json",
			args:       `{"database_id": "d9824bdc-8445-4327-be8b-5b47500af6ce", "title": "Tuscan kale", "properties": {"Price": {"number": 2.5}, "Status": {"status": {"name": "Not started"}}}}`,
			wantMethod: http.MethodPost, wantPath: "/pages",
			wantBody: map[string]any{
				"parent": map[string]any{"database_id": "d9824bdc-8445-4327-be8b-5b47500af6ce"},
				"properties": map[string]any{
					"title":  map[string]any{"title": text("Tuscan kale")},
					"Price":  map[string]any{"number": 2.5},
					"Status": map[string]any{"status": map[string]any{"name": "Not started"}},
				},
			},
			want: kalePage(t),
		},
		{
			name: "update page: columns and title", tool: "notion_update_page", fixture: "page_row.json",
			args:       `{"page_id": "59833787-2cf9-4fdf-8782-e53db20768a5", "title": "Tuscan kale", "properties": {"In stock": {"checkbox": true}}}`,
			wantMethod: http.MethodPatch, wantPath: "/pages/59833787-2cf9-4fdf-8782-e53db20768a5",
			wantBody: map[string]any{"properties": map[string]any{
				"title": map[string]any{"title": text("Tuscan kale")}, "In stock": map[string]any{"checkbox": true},
			}},
			want: kalePage(t),
		},
		{
			name: "update page: archive only", tool: "notion_update_page", fixture: "page_row.json",
			args:       `{"page_id": "59833787-2cf9-4fdf-8782-e53db20768a5", "archived": true}`,
			wantMethod: http.MethodPatch, wantPath: "/pages/59833787-2cf9-4fdf-8782-e53db20768a5",
			wantBody: map[string]any{"archived": true},
			want:     kalePage(t),
		},
		{
			name: "add comment on a page", tool: "notion_add_comment", fixture: "comment.json",
			args:       `{"page_id": "59833787-2cf9-4fdf-8782-e53db20768a5", "text": "Looks good to me."}`,
			wantMethod: http.MethodPost, wantPath: "/comments",
			wantBody: map[string]any{"parent": map[string]any{"page_id": "59833787-2cf9-4fdf-8782-e53db20768a5"}, "rich_text": text("Looks good to me.")},
			want: notion.Comment{ID: "b52b8ed6-e029-4707-a671-832549c09de3", DiscussionID: "f1407351-36f5-4c49-a13c-49f8ba11776d",
				Text: "Looks good to me.", CreatedTime: "2022-07-15T20:53:00.000Z"},
		},
		{
			name: "reply in a discussion", tool: "notion_add_comment", fixture: "comment.json",
			args:       `{"discussion_id": "f140735136f54c49a13c49f8ba11776d", "text": "Looks good to me."}`,
			wantMethod: http.MethodPost, wantPath: "/comments",
			wantBody: map[string]any{"discussion_id": "f1407351-36f5-4c49-a13c-49f8ba11776d", "rich_text": text("Looks good to me.")},
			want: notion.Comment{ID: "b52b8ed6-e029-4707-a671-832549c09de3", DiscussionID: "f1407351-36f5-4c49-a13c-49f8ba11776d",
				Text: "Looks good to me.", CreatedTime: "2022-07-15T20:53:00.000Z"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}
