package notion

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/switchboard-hub/switchboard/providers"
)

// Search finds pages and databases shared with the integration by title.
// Notion API docs: https://developers.notion.com/reference/post-search
var Search = &providers.Operation[SearchInput, SearchOutput]{
	Name:  "search",
	Title: "Search pages and databases",
	Description: "Find Notion pages and databases whose title matches query, among those shared with the integration " +
		"(Notion searches titles, not body text). Use it to turn a name into an ID for get_page, get_database, " +
		"query_database or create_page; narrow with object (page or database). With no query it lists everything " +
		"shared, most recently edited first. To filter a database's rows by column values, use query_database. " +
		"Returns matching pages and databases with ID, title, URL and parent, and next_cursor when more follow.",
	DocsURL: "https://developers.notion.com/reference/post-search",
	Scopes:  []string{"read_content"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     search,
}

// SearchInput is the input of search.
type SearchInput struct {
	Query     *string `json:"query,omitempty" jsonschema:"Text to look for in titles; omit it to list everything shared with the integration" schema:"maxLength=1000,example=Roadmap"`
	Object    *string `json:"object,omitempty" jsonschema:"Return only pages or only databases" schema:"enum=page|database"`
	Direction *string `json:"direction,omitempty" jsonschema:"Order by last edit time" schema:"enum=descending|ascending,default=descending"`
	providers.PageInput
}

// SearchOutput is one page of search results.
type SearchOutput struct {
	Results    []SearchResult `json:"results" jsonschema:"Matching pages and databases"`
	NextCursor string         `json:"next_cursor,omitempty" jsonschema:"Pass as cursor to fetch the next page; absent on the last page"`
}

// SearchResult is one page or database found.
type SearchResult struct {
	Object         string `json:"object" jsonschema:"page or database" schema:"enum=page|database"`
	ID             string `json:"id" jsonschema:"Its ID"`
	Title          string `json:"title" jsonschema:"Its title as plain text"`
	URL            string `json:"url" jsonschema:"Its address in Notion"`
	Parent         Parent `json:"parent" jsonschema:"Where it lives"`
	Archived       bool   `json:"archived" jsonschema:"Whether it is archived"`
	LastEditedTime string `json:"last_edited_time" jsonschema:"When it was last edited (RFC 3339)"`
}

func search(ctx context.Context, c *providers.Call, in SearchInput) (SearchOutput, error) {
	cursor, size, err := pageParams(in.PageInput)
	if err != nil {
		return SearchOutput{}, err
	}
	body := map[string]any{"page_size": size}
	if in.Query != nil && *in.Query != "" {
		body["query"] = *in.Query
	}
	if in.Object != nil {
		body["filter"] = map[string]any{"property": "object", "value": *in.Object}
	}
	if in.Direction != nil {
		body["sort"] = map[string]any{"timestamp": "last_edited_time", "direction": *in.Direction}
	}
	if cursor != "" {
		body["start_cursor"] = cursor
	}
	var r listResponse[json.RawMessage]
	if err := (request{method: http.MethodPost, path: "/search", body: body}).do(ctx, c, &r); err != nil {
		return SearchOutput{}, err
	}
	out := SearchOutput{Results: make([]SearchResult, 0, len(r.Results)), NextCursor: r.next()}
	for _, raw := range r.Results {
		var kind struct {
			Object string `json:"object"`
		}
		if json.Unmarshal(raw, &kind) != nil {
			continue
		}
		switch kind.Object {
		case "page":
			var p pageObject
			if json.Unmarshal(raw, &p) != nil {
				continue
			}
			pg := p.toPage()
			out.Results = append(out.Results, SearchResult{Object: "page", ID: pg.ID, Title: pg.Title, URL: pg.URL, Parent: pg.Parent,
				Archived: pg.Archived, LastEditedTime: pg.LastEditedTime})
		case "database":
			var d databaseObject
			if json.Unmarshal(raw, &d) != nil {
				continue
			}
			out.Results = append(out.Results, SearchResult{Object: "database", ID: d.ID, Title: plain(d.Title), URL: d.URL,
				Parent: d.Parent.toParent(), Archived: d.Archived, LastEditedTime: d.LastEditedTime})
		}
	}
	return out, nil
}
