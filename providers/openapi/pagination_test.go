package openapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/internal/describedfake"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// pagedDescription has one operation per style of pagination a description makes plain,
// and one whose page parameter nothing in its answer pairs with.
const pagedDescription = `openapi: 3.0.3
info: {title: Paged, version: "1"}
servers: [{url: "https://paged.example.test"}]
paths:
  /events:
    get:
      operationId: listEvents
      parameters:
        - {name: cursor, in: query, schema: {type: string}}
        - {name: limit, in: query, schema: {type: integer}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  data: {type: array, items: {type: string}}
                  meta: {type: object, properties: {next_cursor: {type: string, nullable: true}}}
  /users:
    get:
      operationId: listUsers
      parameters:
        - {name: page, in: query, schema: {type: integer, minimum: 1}}
        - {name: per_page, in: query, schema: {type: integer}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  items: {type: array, items: {type: string}}
                  total_pages: {type: integer}
  /orders:
    get:
      operationId: listOrders
      parameters:
        - {name: offset, in: query, schema: {type: integer}}
        - {name: limit, in: query, schema: {type: integer, default: 2}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  orders: {type: array, items: {type: string}}
                  total: {type: integer}
  /repos:
    get:
      operationId: listRepos
      parameters:
        - {name: page, in: query, schema: {type: string}}
      responses:
        "200":
          description: ok
          headers:
            Link: {schema: {type: string}}
          content:
            application/json:
              schema: {type: array, items: {type: string}}
  /tags:
    get:
      operationId: listTags
      parameters:
        - {name: page, in: query, schema: {type: integer}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: array, items: {type: string}}
`

// pagedAnswer serves 5 items (a..e) in pages in each operation's own style.
func pagedAnswer(w http.ResponseWriter, r *http.Request) {
	all := []string{"a", "b", "c", "d", "e"}
	q := r.URL.Query()
	window := func(from, n int) ([]string, bool) {
		to := min(from+n, len(all))
		return all[from:to], to < len(all)
	}
	w.Header().Set("Content-Type", "application/json")
	var body any
	switch r.URL.Path {
	case "/events": // the cursor is the next index, as text
		from, _ := strconv.Atoi(strings.TrimPrefix(q.Get("cursor"), "c"))
		items, more := window(from, 2)
		var next any
		if more {
			next = "c" + strconv.Itoa(from+2)
		}
		body = map[string]any{"data": items, "meta": map[string]any{"next_cursor": next}}
	case "/users":
		page, _ := strconv.Atoi(q.Get("page"))
		page = max(page, 1)
		per, _ := strconv.Atoi(q.Get("per_page"))
		items, _ := window((page-1)*per, per)
		body = map[string]any{"items": items, "total_pages": (len(all) + per - 1) / per}
	case "/orders":
		off, _ := strconv.Atoi(q.Get("offset"))
		n, _ := strconv.Atoi(q.Get("limit"))
		if n == 0 {
			n = 2
		}
		items, _ := window(off, n)
		body = map[string]any{"orders": items, "total": len(all)}
	case "/repos":
		page, _ := strconv.Atoi(q.Get("page"))
		page = max(page, 1)
		items, more := window((page-1)*2, 2)
		if more {
			w.Header().Set("Link", fmt.Sprintf(`<https://paged.example.test/repos?page=%d>; rel="next", <https://paged.example.test/repos?page=3>; rel="last"`, page+1))
		}
		body = items
	default:
		body = all
	}
	_ = json.NewEncoder(w).Encode(body)
}

// TestPagination: an operation whose description pairs a cursor, page or offset
// parameter with a field of its answer (or a Link header) says in its description how
// to get the next page, and its result's next holds the arguments of that call; called
// page after page against a fake upstream generated from the description (which checks
// every request), it returns every item once and stops at the last page. A page
// parameter that nothing in the answer pairs with is not taken for pagination.
func TestPagination(t *testing.T) {
	t.Parallel()
	doc, err := Load(t.Context(), []byte(pagedDescription))
	if err != nil {
		t.Fatal(err)
	}
	up := describedfake.New(t, doc, "", pagedAnswer)
	spec, err := FromDocument(t.Context(), doc, Options{Name: "paged"})
	if err != nil {
		t.Fatal(err)
	}
	tools := providertest.Tools(t, spec)
	tests := []struct {
		tool, first string
		items       func(any) []any
		describes   string
		wantArgs    []string // the arguments of each call, in order
	}{
		{tool: "paged_list_events", first: `{"limit":2}`, items: func(b any) []any { return b.(map[string]any)["data"].([]any) },
			describes: "the answer's meta.next_cursor is the next page's cursor",
			wantArgs:  []string{`{"limit":2}`, `{"cursor":"c2","limit":2}`, `{"cursor":"c4","limit":2}`}},
		{tool: "paged_list_users", first: `{"per_page":2}`, items: func(b any) []any { return b.(map[string]any)["items"].([]any) },
			describes: "page is increased by one until it passes the answer's total_pages",
			wantArgs:  []string{`{"per_page":2}`, `{"page":2,"per_page":2}`, `{"page":3,"per_page":2}`}},
		{tool: "paged_list_orders", first: `{}`, items: func(b any) []any { return b.(map[string]any)["orders"].([]any) },
			describes: "offset is increased by the page size (limit) until it reaches the answer's total",
			wantArgs:  []string{`{}`, `{"offset":2}`, `{"offset":4}`}},
		{tool: "paged_list_repos", first: `{}`, items: func(b any) []any { return b.([]any) },
			describes: `the answer's Link header names (rel="next"), its page`,
			wantArgs:  []string{`{}`, `{"page":"2"}`, `{"page":"3"}`}},
	}
	for _, tt := range tests {
		tool := tools[tt.tool]
		if !strings.Contains(tool.Info.Description, tt.describes) {
			t.Errorf("%s description = %q, want it to say %q", tt.tool, tool.Info.Description, tt.describes)
		}
		if at(schemaOf(t, tool.OutputSchema), "properties", "next", "type") != "object" {
			t.Errorf("%s output schema has no next: %s", tt.tool, tool.OutputSchema)
		}
		var got []any
		var calls []string
		args := tt.first
		for range 10 {
			calls = append(calls, args)
			out, err := providertest.Invoke(t, tool, providertest.NewCall(t, &spec, up.URL, "k"), args)
			if err != nil {
				t.Fatalf("%s %s: %v", tt.tool, args, err)
			}
			o := out.(Output)
			got = append(got, tt.items(o.Body)...)
			if o.Next == nil {
				break
			}
			raw, err := json.Marshal(o.Next)
			if err != nil {
				t.Fatal(err)
			}
			args = string(raw)
		}
		if diff := cmp.Diff([]any{"a", "b", "c", "d", "e"}, got); diff != "" {
			t.Errorf("%s items (-want +got):\n%s", tt.tool, diff)
		}
		if diff := cmp.Diff(tt.wantArgs, calls); diff != "" {
			t.Errorf("%s calls (-want +got):\n%s", tt.tool, diff)
		}
	}
	tags := tools["paged_list_tags"]
	if strings.Contains(tags.Info.Description, "Pages") || at(schemaOf(t, tags.OutputSchema), "properties", "next") != nil {
		t.Errorf("list_tags, whose answer says nothing of pages, is described as paged: %q %s", tags.Info.Description, tags.OutputSchema)
	}
	up.Check(t)
}
