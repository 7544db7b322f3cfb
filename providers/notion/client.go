package notion

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// providerName is the name Notion's errors carry.
const providerName = "notion"

// maxResponseBytes bounds what one answer may hold (a page of 100 blocks or results).
const maxResponseBytes = 8 << 20

// maxErrorBytes bounds how much of a failed answer is read for its message.
const maxErrorBytes = 64 << 10

// request is one call to the Notion API; path starts with "/" and is joined to the
// Call's base URL (https://api.notion.com/v1). Build paths with idPath so every ID is
// checked and escaped.
type request struct {
	method string
	path   string
	query  url.Values
	body   any // encoded as JSON when not nil
}

// do sends the request and decodes a successful answer into out. A failed answer is an
// *providers.UpstreamError classified from Notion's error object.
func (r request) do(ctx context.Context, c *providers.Call, out any) error {
	return providers.JSONRequest{
		Provider: providerName, Title: "Notion", Method: r.method, Path: r.path, Query: r.query, Body: r.body,
		MaxBytes: maxResponseBytes, TooLarge: "ask for a smaller page (limit)",
	}.Do(ctx, c, out, errorFrom)
}

// apiError is Notion's error object.
// https://developers.notion.com/reference/status-codes
type apiError struct {
	Object  string `json:"object"`
	Status  int    `json:"status"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// errorFrom classifies a failed answer by Notion's error code, falling back to the
// HTTP status, with a message an agent can act on.
func errorFrom(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	var body apiError
	if json.Unmarshal(data, &body) != nil || body.Object != "error" {
		body = apiError{Message: http.StatusText(resp.StatusCode)}
	}
	e := providers.StatusError(providerName, resp, body.Code, body.Message)
	hint := ""
	switch body.Code {
	case "unauthorized":
		e.Code = switchboard.CodeReconnect
		hint = "Notion no longer accepts this connection's token (revoked, or the integration was removed): reconnect Notion"
	case "restricted_resource":
		e.Code = switchboard.CodeForbidden
		hint = "the integration lacks the capability this needs (read, update or insert content, or comments): enable it in the integration's settings"
	case "object_not_found":
		e.Code = switchboard.CodeNotFound
		hint = "check the ID; Notion also answers this for pages and databases not shared with the integration: share them with it (••• menu, Connections)"
	case "validation_error", "invalid_json", "invalid_request_url", "invalid_request", "missing_version":
		e.Code = switchboard.CodeInvalid
	case "conflict_error":
		e.Code = switchboard.CodeConflict
		hint = "the data changed while Notion was saving it; read it again and retry"
	case "rate_limited":
		e.Code = switchboard.CodeRateLimited
		hint = "Notion's rate limit (about 3 requests a second per integration) is spent: retry after the wait given"
	case "internal_server_error", "service_unavailable", "database_connection_unavailable", "gateway_timeout":
		e.Code = switchboard.CodeUpstream
		hint = "Notion failed to answer; try again shortly"
	default:
		if resp.StatusCode == http.StatusUnauthorized {
			hint = "Notion no longer accepts this connection's token: reconnect Notion"
		}
	}
	if hint != "" {
		if e.Message != "" {
			e.Message += "; "
		}
		e.Message += hint
	}
	return e
}

// idPattern is a Notion ID: 32 hex digits, with or without the UUID dashes.
var idPattern = regexp.MustCompile(`^(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$`)

// normalizeID accepts a Notion ID (with or without dashes) or a Notion URL ending in
// one (https://www.notion.so/Title-1a2b…), and returns the dashed UUID, so no input
// can steer a request to another path.
func normalizeID(field, v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", switchboard.Invalid(field, "is required")
	}
	candidate := v
	if u, err := url.Parse(v); err == nil && u.Scheme != "" && u.Host != "" {
		candidate = path.Base(u.Path)
		if !idPattern.MatchString(candidate) && len(candidate) > 32 {
			candidate = candidate[len(candidate)-32:] // Title-<id>
		}
	}
	if !idPattern.MatchString(candidate) {
		return "", switchboard.Invalid(field, "must be a Notion ID (32 hex digits, e.g. 59833787-2cf9-4fdf-8782-e53db20768a5) or a Notion page URL")
	}
	h := strings.ToLower(strings.ReplaceAll(candidate, "-", ""))
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

// Page sizes: Notion's default and its maximum page_size.
const (
	defaultPageSize = 30
	maxPageSize     = 100
)

// pageParams reads the hub's page input as Notion's start_cursor and page_size.
func pageParams(p providers.PageInput) (cursor string, size int, err error) {
	size = p.LimitOr(defaultPageSize)
	if size < 1 || size > maxPageSize {
		return "", 0, switchboard.Invalid("limit", fmt.Sprintf("must be between 1 and %d", maxPageSize))
	}
	cursor, err = p.DecodedCursor()
	return cursor, size, err
}

// listResponse is Notion's paginated list envelope.
// https://developers.notion.com/reference/intro#pagination
type listResponse[T any] struct {
	Object     string  `json:"object"`
	Results    []T     `json:"results"`
	NextCursor *string `json:"next_cursor"`
	HasMore    bool    `json:"has_more"`
}

// next returns the opaque next_cursor of a list answer, "" on its last page.
func (l listResponse[T]) next() string {
	if !l.HasMore || l.NextCursor == nil {
		return ""
	}
	return providers.EncodeCursor(*l.NextCursor)
}

// richText is one element of a Notion rich text array.
type richText struct {
	PlainText string `json:"plain_text"`
}

// plain joins a rich text array's plain text.
func plain(rt []richText) string {
	var b strings.Builder
	for _, r := range rt {
		b.WriteString(r.PlainText)
	}
	return b.String()
}

// textValue builds a rich text array holding one plain text run, as Notion takes it in
// requests; text longer than Notion's 2,000 characters per run is split into runs.
func textValue(s string) []map[string]any {
	out := []map[string]any{}
	runes := []rune(s)
	for len(runes) > 0 {
		n := min(len(runes), maxRunLength)
		out = append(out, map[string]any{"type": "text", "text": map[string]any{"content": string(runes[:n])}})
		runes = runes[n:]
	}
	return out
}

// maxRunLength is the most characters Notion takes in one rich text run.
const maxRunLength = 2000

// parentRef is a page's or database's parent.
type parentRef struct {
	Type        string `json:"type"`
	PageID      string `json:"page_id,omitempty"`
	DatabaseID  string `json:"database_id,omitempty"`
	BlockID     string `json:"block_id,omitempty"`
	WorkspaceID bool   `json:"workspace,omitempty"`
}

// toParent renders a parent for outputs.
func (p parentRef) toParent() Parent {
	out := Parent{Type: p.Type}
	switch p.Type {
	case "page_id":
		out.ID = p.PageID
	case "database_id":
		out.ID = p.DatabaseID
	case "block_id":
		out.ID = p.BlockID
	}
	return out
}

// Parent is where a page, database or block lives.
type Parent struct {
	Type string `json:"type" jsonschema:"What the parent is: page_id, database_id, block_id or workspace (top level)"`
	ID   string `json:"id,omitempty" jsonschema:"The parent's ID; empty for the workspace"`
}

// itoa formats an int for a query parameter.
func itoa(n int) string { return strconv.Itoa(n) }
