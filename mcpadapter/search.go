package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// The tools of tool search mode, which replace the full list for catalogs too large
// for a model's context.
const (
	searchToolName   = providers.SearchToolName
	describeToolName = providers.DescribeToolName
	callToolName     = providers.CallToolName
)

// searchIndex holds each hub tool's words, weighted by where they appear: the name
// counts most, then the title and description, then the parameters.
type searchIndex struct {
	docs  []searchDoc
	vocab []string // every indexed word, sorted, for prefix matches
}

type searchDoc struct {
	name    string
	weights map[string]float64
}

// Field weights of the search: a word of the tool's name counts more than one of its
// description, which counts more than one of a parameter.
const (
	weightName        = 5
	weightTitle       = 3
	weightDescription = 2
	weightParameter   = 1
)

func newSearchIndex(st *scopeState) *searchIndex {
	idx := &searchIndex{docs: make([]searchDoc, 0, len(st.order))}
	for _, name := range st.order {
		t := st.hub[name].tool()
		d := searchDoc{name: name, weights: map[string]float64{}}
		add := func(text string, w float64) {
			for _, word := range words(text) {
				d.weights[word] = max(d.weights[word], w)
			}
		}
		add(t.Name, weightName)
		add(t.Title, weightTitle)
		add(t.Description, weightDescription)
		for _, p := range schemaParameters(t.RawInputSchema) {
			add(p, weightParameter)
		}
		idx.docs = append(idx.docs, d)
	}
	seen := map[string]bool{}
	for _, d := range idx.docs {
		for w := range d.weights {
			if !seen[w] {
				seen[w] = true
				idx.vocab = append(idx.vocab, w)
			}
		}
	}
	slices.Sort(idx.vocab)
	return idx
}

// withPrefix returns the indexed words that start with q and are longer than it.
func (idx *searchIndex) withPrefix(q string) []string {
	i, _ := slices.BinarySearch(idx.vocab, q)
	var out []string
	for ; i < len(idx.vocab) && strings.HasPrefix(idx.vocab[i], q); i++ {
		if idx.vocab[i] != q {
			out = append(out, idx.vocab[i])
		}
	}
	return out
}

// schemaParameters returns the names and descriptions of a schema's properties, nested
// ones included.
func schemaParameters(raw json.RawMessage) []string {
	var schema map[string]any
	if json.Unmarshal(raw, &schema) != nil {
		return nil
	}
	var out []string
	var walk func(s map[string]any, depth int)
	walk = func(s map[string]any, depth int) {
		if depth > 4 {
			return
		}
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			out = append(out, name)
			ps, _ := p.(map[string]any)
			if d, ok := ps["description"].(string); ok {
				out = append(out, d)
			}
			walk(ps, depth+1)
			if items, ok := ps["items"].(map[string]any); ok {
				walk(items, depth+1)
			}
		}
	}
	walk(schema, 0)
	return out
}

// stopWord reports whether w is left out of the index and of queries: such words
// match everything.
func stopWord(w string) bool {
	switch w {
	case "a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "with", "by", "is", "it", "as", "at", "from", "this", "that":
		return true
	}
	return false
}

// words splits text into lower-case words, breaking snake_case and camelCase, without
// stop words.
func words(text string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 && !stopWord(b.String()) {
			out = append(out, b.String())
		}
		b.Reset()
	}
	prevLower := false
	for _, r := range text {
		switch {
		case unicode.IsUpper(r):
			if prevLower {
				flush()
			}
			b.WriteRune(unicode.ToLower(r))
			prevLower = false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
			prevLower = true
		default:
			flush()
			prevLower = false
		}
	}
	flush()
	return out
}

// searchHit is one result of search_tools.
type searchHit struct {
	Name        string  `json:"name"`
	Title       string  `json:"title,omitempty"`
	Description string  `json:"description"`
	Score       float64 `json:"score"`
}

// search scores every tool against the query's words (a word matches a tool's word
// exactly, or as its prefix for half the weight) and returns the best first.
func (idx *searchIndex) search(query string, limit int) []searchHit {
	qs := words(query)
	type scored struct {
		i     int
		score float64
	}
	prefixed := make([][]string, len(qs))
	for j, q := range qs {
		if len(q) >= 3 {
			prefixed[j] = idx.withPrefix(q)
		}
	}
	var hits []scored
	for i, d := range idx.docs {
		score := 0.0
		for j, q := range qs {
			best := d.weights[q]
			if best == 0 {
				for _, w := range prefixed[j] {
					best = max(best, d.weights[w]/2)
				}
			}
			score += best
		}
		if score > 0 {
			hits = append(hits, scored{i, score})
		}
	}
	slices.SortStableFunc(hits, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return strings.Compare(idx.docs[a.i].name, idx.docs[b.i].name)
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	out := make([]searchHit, 0, len(hits))
	for _, h := range hits {
		out = append(out, searchHit{Name: idx.docs[h.i].name, Score: h.score})
	}
	return out
}

type searchIn struct {
	Query string `json:"query"`
	Limit *int   `json:"limit,omitempty"`
}

type nameIn struct {
	Name string `json:"name"`
}

type callIn struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// searchTools returns search_tools, describe_tool and call_tool for the scope.
func (s *scope) searchTools() []server.ServerTool {
	readOnly := mcp.ToolAnnotation{ReadOnlyHint: mcp.ToBoolPtr(true), DestructiveHint: mcp.ToBoolPtr(false), IdempotentHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false)}
	search := mcp.Tool{
		Name:  searchToolName,
		Title: "Search tools",
		Description: "Search this endpoint's tools by keywords (matched against tool names, descriptions and parameters); " +
			"returns the best matches first. Then read a tool's full definition with describe_tool and run it with call_tool.",
		RawInputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","minLength":1,"description":"Keywords, for example \"create github issue\""},` +
			`"limit":{"type":"integer","minimum":1,"maximum":50,"default":10,"description":"Maximum number of tools to return"}},"required":["query"],"additionalProperties":false}`),
		Annotations: readOnly,
	}
	describe := mcp.Tool{
		Name:           describeToolName,
		Title:          "Describe tool",
		Description:    "Return one tool's full definition: description, input schema (its arguments), output schema and annotations.",
		RawInputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"The tool's name, from search_tools"}},"required":["name"],"additionalProperties":false}`),
		Annotations:    readOnly,
	}
	call := mcp.Tool{
		Name:  callToolName,
		Title: "Call tool",
		Description: "Run one of this endpoint's tools by name with its arguments (an object matching the input schema describe_tool returns). " +
			"The result is the tool's own result.",
		RawInputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"The tool's name, from search_tools"},` +
			`"arguments":{"type":"object","description":"The tool's arguments"}},"required":["name"],"additionalProperties":false}`),
		Annotations: mcp.ToolAnnotation{ReadOnlyHint: mcp.ToBoolPtr(false), DestructiveHint: mcp.ToBoolPtr(true), IdempotentHint: mcp.ToBoolPtr(false), OpenWorldHint: mcp.ToBoolPtr(true)},
	}
	return []server.ServerTool{
		{Tool: search, Handler: s.handleSearch},
		{Tool: describe, Handler: s.handleDescribe},
		{Tool: call, Handler: s.handleCall},
	}
}

func decodeArgs(req mcp.CallToolRequest, v any) error {
	raw, err := rawArguments(req)
	if err != nil {
		return switchboard.Invalid("arguments", "must be a JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return switchboard.Invalid("arguments", "must be a JSON object with the documented fields: "+err.Error())
	}
	return nil
}

func (s *scope) handleSearch(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in searchIn
	if err := decodeArgs(req, &in); err != nil {
		return s.adapter.toolError(err), nil
	}
	if strings.TrimSpace(in.Query) == "" {
		return s.adapter.toolError(switchboard.Invalid("query", "is required")), nil
	}
	limit := 10
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > 50 {
			return s.adapter.toolError(switchboard.Invalid("limit", "must be between 1 and 50")), nil
		}
		limit = *in.Limit
	}
	st := s.state.Load()
	hits := []searchHit{}
	if st.index != nil {
		hits = st.index.search(in.Query, limit)
	}
	for i := range hits {
		t := st.hub[hits[i].Name].tool()
		hits[i].Title, hits[i].Description = t.Title, t.Description
	}
	return jsonResult(map[string]any{"tools": hits, "count": len(hits)})
}

func (s *scope) handleDescribe(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in nameIn
	if err := decodeArgs(req, &in); err != nil {
		return s.adapter.toolError(err), nil
	}
	t, ok := s.state.Load().hub[in.Name]
	if !ok {
		return s.adapter.toolError(switchboard.Invalid("name", fmt.Sprintf("%q is not a tool of this endpoint; find one with search_tools", in.Name))), nil
	}
	return jsonResult(t.tool())
}

func (s *scope) handleCall(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in callIn
	if err := decodeArgs(req, &in); err != nil {
		return s.adapter.toolError(err), nil
	}
	st := s.state.Load()
	_, ok := st.hub[in.Name]
	if !ok {
		return s.adapter.toolError(switchboard.Invalid("name", fmt.Sprintf("%q is not a tool of this endpoint; find one with search_tools", in.Name))), nil
	}
	inner := req
	inner.Params.Name = in.Name
	inner.Params.Arguments = nil
	inner.Params.RawArguments = in.Arguments
	if len(in.Arguments) == 0 || string(in.Arguments) == "null" {
		inner.Params.RawArguments = json.RawMessage("{}")
	}
	return st.handler(ctx, inner)
}

func jsonResult(v any) (*mcp.CallToolResult, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(raw))}, StructuredContent: json.RawMessage(raw)}, nil
}
