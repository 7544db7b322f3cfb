package notion_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/notion"
)

func TestDatabasesSearchAndBlocks(t *testing.T) {
	t.Parallel()
	doneRow := notion.Page{
		ID: "59833787-2cf9-4fdf-8782-e53db20768a5", URL: "https://www.notion.so/Tuscan-kale-598337872cf94fdf8782e53db20768a5",
		Title: "Tuscan kale", Parent: notion.Parent{Type: "database_id", ID: "d9824bdc-8445-4327-be8b-5b47500af6ce"},
		CreatedTime: "2022-03-01T19:05:00.000Z", LastEditedTime: "2022-07-06T20:25:00.000Z",
		Values: map[string]string{"Status": "Done", "Name": "Tuscan kale"},
		Properties: map[string]any{
			"Status": map[string]any{"id": "Z%3ClH", "type": "status", "status": map[string]any{"id": "a2a9e8b1-2d4c-4e6f-8a1b-3c5d7e9f0a2b", "name": "Done", "color": "green"}},
			"Name": map[string]any{"id": "title", "type": "title", "title": []any{map[string]any{"type": "text",
				"text": map[string]any{"content": "Tuscan kale", "link": nil}, "plain_text": "Tuscan kale", "href": nil}}},
		},
	}
	grocery := notion.Database{
		ID: "d9824bdc-8445-4327-be8b-5b47500af6ce", URL: "https://www.notion.so/d9824bdc84454327be8b5b47500af6ce",
		Title: "Grocery List", Description: "Grocery list for just kale 🥬",
		Parent: notion.Parent{Type: "page_id", ID: "98ad959b-2b6a-4774-80ee-00246fb0ea9b"}, LastEditedTime: "2022-07-06T20:25:00.000Z",
		Columns: []notion.Column{
			{Name: "Food group", ID: "A%40Hk", Type: "select", Options: []string{"🥬 Vegetable", "🍎 Fruit"}},
			{Name: "In stock", ID: "O%40vR", Type: "checkbox"},
			{Name: "Name", ID: "title", Type: "title"},
			{Name: "Price", ID: "BJXS", Type: "number"},
			{Name: "Status", ID: "Z%3ClH", Type: "status", Options: []string{"Not started", "Done"}},
		},
	}
	blocks := notion.BlockList{
		Blocks: []notion.Block{
			{ID: "c02fc1d3-db8b-45c5-a222-27595b15aea7", Type: "heading_2", Text: "Lacinato kale", Data: map[string]any{
				"rich_text": []any{map[string]any{"type": "text", "text": map[string]any{"content": "Lacinato kale", "link": nil}, "plain_text": "Lacinato kale", "href": nil}},
				"color":     "default", "is_toggleable": false}},
			{ID: "acc7eb06-05cd-4603-a384-5e1e4f1f4e72", Type: "to_do", Text: "Buy kale", Checked: ptr(true), Data: map[string]any{
				"rich_text": []any{map[string]any{"type": "text", "text": map[string]any{"content": "Buy kale", "link": nil}, "plain_text": "Buy kale", "href": nil}},
				"checked":   true, "color": "default"}},
			{ID: "9a2b1c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", Type: "child_page", Text: "Recipes", HasChildren: true, Data: map[string]any{"title": "Recipes"}},
		},
		NextCursor: providers.EncodeCursor("7d6c5b4a-3e2f-4a1b-9c8d-7e6f5a4b3c2d"),
	}
	for _, tc := range []opCase{
		{
			name: "search, defaults", tool: "notion_search", fixture: "search.json",
			args:       `{}`,
			wantMethod: http.MethodPost, wantPath: "/search",
			wantBody: map[string]any{"page_size": float64(30)},
			want: notion.SearchOutput{Results: []notion.SearchResult{
				{Object: "page", ID: "b55c9c91-384d-452b-81db-d1ef79372b75", Title: "Q3 planning notes",
					URL:    "https://www.notion.so/Q3-planning-notes-b55c9c91384d452b81dbd1ef79372b75",
					Parent: notion.Parent{Type: "page_id", ID: "59833787-2cf9-4fdf-8782-e53db20768a5"}, LastEditedTime: "2022-07-07T09:00:00.000Z"},
				{Object: "database", ID: "d9824bdc-8445-4327-be8b-5b47500af6ce", Title: "Grocery List",
					URL: "https://www.notion.so/d9824bdc84454327be8b5b47500af6ce", Parent: notion.Parent{Type: "workspace"},
					LastEditedTime: "2022-07-06T20:25:00.000Z"},
			}, NextCursor: providers.EncodeCursor("e6c6f5ff-c70e-4bcf-bf8c-9c7d5d3c1b0a")},
		},
		{
			name: "search, every option and a cursor", tool: "notion_search", fixture: "query.json",
			args:       `{"query": "kale", "object": "page", "direction": "ascending", "limit": 5, "cursor": "` + providers.EncodeCursor("e6c6f5ff-c70e-4bcf-bf8c-9c7d5d3c1b0a") + `"}`,
			wantMethod: http.MethodPost, wantPath: "/search",
			wantBody: map[string]any{"query": "kale", "page_size": float64(5), "start_cursor": "e6c6f5ff-c70e-4bcf-bf8c-9c7d5d3c1b0a",
				"filter": map[string]any{"property": "object", "value": "page"},
				"sort":   map[string]any{"timestamp": "last_edited_time", "direction": "ascending"}},
			want: notion.SearchOutput{Results: []notion.SearchResult{{Object: "page", ID: doneRow.ID, Title: "Tuscan kale", URL: doneRow.URL,
				Parent: doneRow.Parent, LastEditedTime: doneRow.LastEditedTime}}},
		},
		{
			name: "query database with filter and sorts", tool: "notion_query_database", fixture: "query.json",
			args:       `{"database_id": "d9824bdc84454327be8b5b47500af6ce", "filter": {"property": "Status", "status": {"equals": "Done"}}, "sorts": [{"property": "Price", "direction": "descending"}], "limit": 100}`,
			wantMethod: http.MethodPost, wantPath: "/databases/d9824bdc-8445-4327-be8b-5b47500af6ce/query",
			wantBody: map[string]any{"page_size": float64(100),
				"filter": map[string]any{"property": "Status", "status": map[string]any{"equals": "Done"}},
				"sorts":  []any{map[string]any{"property": "Price", "direction": "descending"}}},
			want: notion.QueryDatabaseOutput{Pages: []notion.Page{doneRow}},
		},
		{
			name: "get database", tool: "notion_get_database", fixture: "database.json",
			args:       `{"database_id": "https://www.notion.so/d9824bdc84454327be8b5b47500af6ce?v=4f3c"}`,
			wantMethod: http.MethodGet, wantPath: "/databases/d9824bdc-8445-4327-be8b-5b47500af6ce",
			want: grocery,
		},
		{
			name: "get block children", tool: "notion_get_block_children", fixture: "blocks.json",
			args:       `{"block_id": "59833787-2cf9-4fdf-8782-e53db20768a5", "limit": 3}`,
			wantMethod: http.MethodGet, wantPath: "/blocks/59833787-2cf9-4fdf-8782-e53db20768a5/children",
			wantQuery: url.Values{"page_size": {"3"}},
			want:      blocks,
		},
		{
			name: "get block children, next page", tool: "notion_get_block_children", fixture: "blocks.json",
			args:       `{"block_id": "59833787-2cf9-4fdf-8782-e53db20768a5", "cursor": "` + providers.EncodeCursor("7d6c5b4a-3e2f-4a1b-9c8d-7e6f5a4b3c2d") + `"}`,
			wantMethod: http.MethodGet, wantPath: "/blocks/59833787-2cf9-4fdf-8782-e53db20768a5/children",
			wantQuery: url.Values{"page_size": {"30"}, "start_cursor": {"7d6c5b4a-3e2f-4a1b-9c8d-7e6f5a4b3c2d"}},
			want:      blocks,
		},
		{
			name: "append text after a block", tool: "notion_append_block_children", fixture: "appended.json",
			args:       `{"block_id": "59833787-2cf9-4fdf-8782-e53db20768a5", "text": "Decision: ship on Friday.", "after": "c02fc1d3-db8b-45c5-a222-27595b15aea7"}`,
			wantMethod: http.MethodPatch, wantPath: "/blocks/59833787-2cf9-4fdf-8782-e53db20768a5/children",
			wantBody: map[string]any{"children": []any{paragraph("Decision: ship on Friday.")}, "after": "c02fc1d3-db8b-45c5-a222-27595b15aea7"},
			want: notion.BlockList{Blocks: []notion.Block{{ID: "2b4d6f8a-1c3e-4a5b-9d7f-0e2c4a6b8d0f", Type: "paragraph", Text: "Decision: ship on Friday.",
				Data: map[string]any{"rich_text": []any{map[string]any{"type": "text", "text": map[string]any{"content": "Decision: ship on Friday.", "link": nil},
					"plain_text": "Decision: ship on Friday.", "href": nil}}, "color": "default"}}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}
