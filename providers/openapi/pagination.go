package openapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/switchboard-hub/switchboard/providers"
)

// The styles of pagination a description can make plain.
const (
	pageCursor = "cursor" // a cursor parameter, and the next cursor in the answer
	pageNumber = "page"   // a page number, and the answer's page count, next page or "more"
	pageOffset = "offset" // an offset (and a size), and the answer's total or "more"
	pageLink   = "link"   // any of these parameters, and a Link header naming the next page
)

// Parameter and answer field names, compared without case, "_" or "-".
var (
	cursorParams = []string{"cursor", "pagetoken", "pagecursor", "after", "continuationtoken", "nexttoken", "marker", "starttoken", "nextpagetoken"}
	pageParams   = []string{"page", "pagenumber", "pageno", "pagenum"}
	offsetParams = []string{"offset", "skip", "startindex", "start"}
	sizeParams   = []string{"limit", "perpage", "pagesize", "maxresults", "size", "top", "count"}

	cursorFields = []string{"nextcursor", "nextpagetoken", "nexttoken", "nextmarker", "endcursor", "continuationtoken", "cursor", "next"}
	countFields  = []string{"totalpages", "pagecount", "lastpage", "numpages"}
	nextFields   = []string{"nextpage"}
	moreFields   = []string{"hasmore", "hasnextpage", "hasnext", "more", "moreresults"}
	totalFields  = []string{"total", "totalcount", "totalresults", "totalitems", "totalsize", "totalrecords"}
	offsetFields = []string{"nextoffset"}
)

// paging is how an operation's answers come in pages, when its description makes that
// plain: which argument moves to the next page, and where the answer says what it is.
type paging struct {
	style string
	param string   // the input property that names the page (cursor, page, offset)
	size  string   // the input property of the page size; "" when there is none
	field []string // the answer's field (a path into its body) that tells the next page
	// fieldKind says what field holds: the next cursor, a page count, the next page
	// number, whether there are more, the total, or the next offset.
	fieldKind   string
	query       string // the query parameter's own name of param
	numeric     bool   // param is a number, not a string
	sizeDefault int64  // the page size's default, when the description gives one
}

// normalName is a name compared without case, "_" or "-".
func normalName(s string) string {
	return strings.NewReplacer("_", "", "-", "", ".", "").Replace(strings.ToLower(s))
}

// detectPaging finds an operation's pagination: a query parameter named like a cursor,
// a page or an offset, and in its success answer a field that tells the next page (at
// the top of the body or one object down: meta, pagination, response_metadata) or a
// Link header. Nil when the description does not make it plain.
func detectPaging(o *operation, op *openapi3.Operation) *paging {
	var cursor, page, offset, size *param
	for i := range o.params {
		p := &o.params[i]
		if p.in != "query" {
			continue
		}
		n := normalName(p.name)
		switch {
		case cursor == nil && contains(anys(cursorParams), n):
			cursor = p
		case page == nil && contains(anys(pageParams), n):
			page = p
		case offset == nil && contains(anys(offsetParams), n):
			offset = p
		case size == nil && contains(anys(sizeParams), n):
			size = p
		}
	}
	if cursor == nil && page == nil && offset == nil {
		return nil
	}
	resp := successResponse(op)
	if resp == nil {
		return nil
	}
	pg := &paging{}
	defer func() {
		for _, p := range []*param{cursor, page, offset} {
			if p != nil && p.prop == pg.param {
				pg.query, pg.numeric = p.name, p.numeric
			}
		}
	}()
	if size != nil {
		pg.size = size.prop
		pg.sizeDefault = size.def
	}
	var body *openapi3.Schema
	for _, name := range sortedKeys(resp.Content) {
		if mt := resp.Content[name]; isJSON(name) && mt != nil && mt.Schema != nil && mt.Schema.Value != nil {
			body = mt.Schema.Value
			break
		}
	}
	find := func(names []string, kinds ...string) []string { return findField(body, names, kinds) }
	switch {
	case cursor != nil && find(cursorFields, "string") != nil:
		pg.style, pg.param, pg.field, pg.fieldKind = pageCursor, cursor.prop, find(cursorFields, "string"), "cursor"
	case page != nil && find(countFields, "integer", "number") != nil:
		pg.style, pg.param, pg.field, pg.fieldKind = pageNumber, page.prop, find(countFields, "integer", "number"), "count"
	case page != nil && find(nextFields, "integer", "number") != nil:
		pg.style, pg.param, pg.field, pg.fieldKind = pageNumber, page.prop, find(nextFields, "integer", "number"), "next"
	case page != nil && find(moreFields, "boolean") != nil:
		pg.style, pg.param, pg.field, pg.fieldKind = pageNumber, page.prop, find(moreFields, "boolean"), "more"
	case offset != nil && find(offsetFields, "integer", "number") != nil:
		pg.style, pg.param, pg.field, pg.fieldKind = pageOffset, offset.prop, find(offsetFields, "integer", "number"), "next"
	case offset != nil && size != nil && find(totalFields, "integer", "number") != nil:
		pg.style, pg.param, pg.field, pg.fieldKind = pageOffset, offset.prop, find(totalFields, "integer", "number"), "total"
	case offset != nil && size != nil && find(moreFields, "boolean") != nil:
		pg.style, pg.param, pg.field, pg.fieldKind = pageOffset, offset.prop, find(moreFields, "boolean"), "more"
	case hasHeader(resp, "Link"):
		pg.style = pageLink
		for _, p := range []*param{cursor, page, offset} {
			if p != nil {
				pg.param = p.prop
				break
			}
		}
	default:
		return nil
	}
	return pg
}

// anys converts names for contains.
func anys(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// findField is the path to a property of body named like one of names (in their order
// of preference) and of one of kinds, at its top or one object down; nil when none.
func findField(body *openapi3.Schema, names, kinds []string) []string {
	if body == nil {
		return nil
	}
	typed := func(s *openapi3.Schema) bool {
		if s == nil || s.Type == nil {
			return false
		}
		for _, k := range kinds {
			if s.Type.Includes(k) {
				return true
			}
		}
		return false
	}
	props := func(s *openapi3.Schema) []string {
		keys := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return keys
	}
	for _, want := range names {
		for _, k := range props(body) {
			if normalName(k) == want && body.Properties[k] != nil && typed(body.Properties[k].Value) {
				return []string{k}
			}
		}
	}
	for _, want := range names {
		for _, outer := range props(body) {
			ref := body.Properties[outer]
			if ref == nil || ref.Value == nil || ref.Value.Type == nil || !ref.Value.Type.Includes("object") {
				continue
			}
			for _, k := range props(ref.Value) {
				if normalName(k) == want && ref.Value.Properties[k] != nil && typed(ref.Value.Properties[k].Value) {
					return []string{outer, k}
				}
			}
		}
	}
	return nil
}

// hasHeader reports whether a response documents a header.
func hasHeader(r *openapi3.Response, name string) bool {
	for k := range r.Headers {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// successResponse is the operation's first success answer (2xx) that has JSON content
// or headers; nil when it documents none.
func successResponse(op *openapi3.Operation) *openapi3.Response {
	if op.Responses == nil {
		return nil
	}
	codes := op.Responses.Keys()
	sort.Strings(codes)
	for _, code := range codes {
		if !strings.HasPrefix(code, "2") {
			continue
		}
		if r := op.Responses.Value(code); r != nil && r.Value != nil {
			return r.Value
		}
	}
	return nil
}

// describe tells a caller how to get the next page, for the tool's description.
func (p *paging) describe() string {
	where := "the answer's " + strings.Join(p.field, ".")
	var how string
	switch {
	case p.style == pageLink:
		how = fmt.Sprintf("the next page is the one the answer's Link header names (rel=\"next\"), its %s", p.param)
	case p.fieldKind == "cursor":
		how = fmt.Sprintf("%s is the next page's %s", where, p.param)
	case p.fieldKind == "count":
		how = fmt.Sprintf("%s is increased by one until it passes %s", p.param, where)
	case p.fieldKind == "next":
		how = fmt.Sprintf("%s is the next page's %s", where, p.param)
	case p.fieldKind == "more" && p.style == pageNumber:
		how = fmt.Sprintf("%s is increased by one while %s is true", p.param, where)
	case p.fieldKind == "more":
		how = fmt.Sprintf("%s is increased by the page size (%s) while %s is true", p.param, p.size, where)
	case p.fieldKind == "total":
		how = fmt.Sprintf("%s is increased by the page size (%s) until it reaches %s", p.param, p.size, where)
	}
	return "Pages: the answer comes one page at a time; to get the next page, call again with the arguments in the result's next (" + how + "). The last page has no next."
}

// next returns the arguments of the next page's call, from this call's arguments and its
// answer; nil when this was the last page, or the answer does not say.
func (p *paging) next(args map[string]any, body any, header http.Header) map[string]any {
	out := make(map[string]any, len(args)+1)
	for k, v := range args {
		out[k] = v
	}
	if p.style == pageLink {
		link := providers.NextLink(header)
		if link == "" {
			return nil
		}
		u, err := url.Parse(link)
		if err != nil {
			return nil
		}
		// The Link names the next page by the same parameter (its page, cursor or offset).
		v := u.Query().Get(p.query)
		if v == "" {
			return nil
		}
		out[p.param] = v
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && p.numeric {
			out[p.param] = n
		}
		return out
	}
	value := fieldAt(body, p.field)
	switch p.fieldKind {
	case "cursor":
		s, ok := value.(string)
		if !ok || s == "" {
			return nil
		}
		if u, err := url.Parse(s); err == nil && u.IsAbs() { // "next": the next page's URL
			if v := u.Query().Get(p.param); v != "" {
				s = v
			} else {
				return nil
			}
		}
		out[p.param] = s
	case "next":
		n, ok := number(value)
		if !ok || n <= 0 {
			return nil
		}
		out[p.param] = p.value(n)
	case "count":
		total, ok := number(value)
		cur := p.current(args, 1)
		if !ok || cur >= total {
			return nil
		}
		out[p.param] = p.value(cur + 1)
	case "more":
		if more, _ := value.(bool); !more {
			return nil
		}
		if p.style == pageNumber {
			out[p.param] = p.value(p.current(args, 1) + 1)
			return out
		}
		size := p.pageSize(args)
		if size <= 0 {
			return nil
		}
		out[p.param] = p.value(p.current(args, 0) + size)
	case "total":
		total, ok := number(value)
		size := p.pageSize(args)
		nextOffset := p.current(args, 0) + size
		if !ok || size <= 0 || nextOffset >= total {
			return nil
		}
		out[p.param] = p.value(nextOffset)
	default:
		return nil
	}
	return out
}

// value is a page number or offset as the parameter takes it.
func (p *paging) value(n int64) any {
	if p.numeric {
		return n
	}
	return strconv.FormatInt(n, 10)
}

// current is the page (or offset) this call asked for, or def.
func (p *paging) current(args map[string]any, def int64) int64 {
	if n, ok := number(args[p.param]); ok {
		return n
	}
	return def
}

// pageSize is this call's page size: its argument, or the parameter's default.
func (p *paging) pageSize(args map[string]any) int64 {
	if n, ok := number(args[p.size]); ok {
		return n
	}
	return p.sizeDefault
}

// fieldAt walks a decoded body by keys.
func fieldAt(body any, path []string) any {
	for _, k := range path {
		m, ok := body.(map[string]any)
		if !ok {
			return nil
		}
		body = m[k]
	}
	return body
}

// number reads an integer from a decoded argument or answer.
func number(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	case float64:
		return int64(x), x == float64(int64(x))
	case int64:
		return x, true
	case int:
		return int64(x), true
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	}
	return 0, false
}
