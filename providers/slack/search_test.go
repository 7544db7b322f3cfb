package slack

import (
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// TestSearchMessagesPages follows search pages: a later page keeps the first page's
// count whatever limit says (Slack numbers pages in units of count), and the last page
// has no next_cursor.
func TestSearchMessagesPages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		args      string
		answer    string
		wantQuery map[string]string
		wantNext  string
	}{
		{name: "first page with the default size", args: `{"query":"deploy failed"}`, answer: searchOK(1, 2),
			wantQuery: map[string]string{"query": "deploy failed", "count": "30", "page": "1"},
			wantNext:  providers.EncodeCursor("count=30&page=2")},
		{name: "a later page keeps the cursor's count", args: `{"query":"deploy failed","limit":50,"sort_dir":"asc","cursor":"` + providers.EncodeCursor("count=2&page=2") + `"}`,
			answer:    searchOK(2, 2),
			wantQuery: map[string]string{"query": "deploy failed", "count": "2", "page": "2", "sort_dir": "asc"}},
		{name: "Slack serves no page after the hundredth", args: `{"query":"deploy failed","cursor":"` + providers.EncodeCursor("count=1&page=100") + `"}`,
			answer:    searchOK(100, 150),
			wantQuery: map[string]string{"query": "deploy failed", "count": "1", "page": "100"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, answer{body: tt.answer})
			got, err := invoke(t, f.call, "slack_search_messages", tt.args)
			if err != nil {
				t.Fatalf("invoke: %v", err)
			}
			want := SearchMessagesOutput{Matches: []SearchMatch{wantSearchMatch}, Total: 3, NextCursor: tt.wantNext}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			wantRequest{method: http.MethodGet, path: "/search.messages", query: tt.wantQuery}.check(t, f.up.Last(t))
			if diff := cmp.Diff([]string{"search_messages"}, f.checkRequests(t)); diff != "" {
				t.Errorf("operations (-want +got):\n%s", diff)
			}
			providertest.SlackDescription(t).CheckResponse(t, "search_messages", http.StatusOK, []byte(tt.answer))
			checkOutput(t, tool(t, "slack_search_messages"), got)
		})
	}
}

// TestSearchMessagesForeignCursor checks that cursors search_messages did not hand out
// (another tool's, a raw Slack page number, a page out of range) are refused before
// anything is sent.
func TestSearchMessagesForeignCursor(t *testing.T) {
	t.Parallel()
	for _, cursor := range []string{"2", providers.EncodeCursor("dXNlcjpVMEc5V0ZYTlo="), providers.EncodeCursor("count=2&page=101"),
		providers.EncodeCursor("count=500&page=2"), providers.EncodeCursor("count=2&page=1")} {
		t.Run(cursor, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, answer{body: searchOK(1, 2)})
			_, err := invoke(t, f.call, "slack_search_messages", `{"query":"deploy","cursor":"`+cursor+`"}`)
			var se *switchboard.Error
			if !errors.As(err, &se) || se.Code != switchboard.CodeInvalid || se.Field != "cursor" {
				t.Fatalf("error = %v, want invalid on field cursor", err)
			}
			if n := len(f.up.Requests()); n != 0 {
				t.Errorf("%d requests sent, want none", n)
			}
		})
	}
}
