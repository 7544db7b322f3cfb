package airtable

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// providerName is the name Airtable's errors carry.
const providerName = "airtable"

// maxResponseBytes bounds what one answer may hold (a page of 100 records).
const maxResponseBytes = 16 << 20

// maxErrorBytes bounds how much of a failed answer is read for its message.
const maxErrorBytes = 64 << 10

// rateLimitPause is how long Airtable asks a client to stay silent after a 429.
// https://airtable.com/developers/web/api/rate-limits
const rateLimitPause = 30 * time.Second

// request is one call to the Airtable API; path starts with "/" and is joined to the
// Call's base URL (https://api.airtable.com/v0). Build paths with tablePath so every
// ID is checked and every name escaped.
type request struct {
	method string
	path   string
	query  url.Values
	body   any // encoded as JSON when not nil
}

// do sends the request and decodes a successful answer into out. A failed answer is an
// *providers.UpstreamError classified from Airtable's error object.
func (r request) do(ctx context.Context, c *providers.Call, out any) error {
	return providers.JSONRequest{
		Provider: providerName, Title: "Airtable", Method: r.method, Path: r.path, Query: r.query, Body: r.body,
		MaxBytes: maxResponseBytes, TooLarge: "ask for fewer records or fields",
	}.Do(ctx, c, out, errorFrom)
}

// apiError is Airtable's error envelope: {"error": {"type": …, "message": …}}, or
// {"error": "NOT_FOUND"} on some routes.
// https://airtable.com/developers/web/api/errors
type apiError struct {
	Type    string
	Message string
}

// parseError reads either form of the envelope; ok is false when the body is neither.
func parseError(data []byte) (e apiError, ok bool) {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &env) != nil || len(env.Error) == 0 {
		return apiError{}, false
	}
	var s string
	if json.Unmarshal(env.Error, &s) == nil {
		return apiError{Type: s}, s != ""
	}
	var obj struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	if json.Unmarshal(env.Error, &obj) != nil || obj.Type == "" {
		return apiError{}, false
	}
	return apiError{Type: obj.Type, Message: obj.Message}, true
}

// errorFrom classifies a failed answer by Airtable's error type, falling back to the
// HTTP status, with a message an agent can act on.
func errorFrom(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	body, ok := parseError(data)
	if !ok {
		body = apiError{Message: http.StatusText(resp.StatusCode)}
	}
	e := providers.StatusError(providerName, resp, body.Type, body.Message)
	hint := ""
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || body.Type == "RATE_LIMIT_REACHED" || body.Type == "TOO_MANY_REQUESTS":
		e.Code = switchboard.CodeRateLimited
		e.RetryAfter = max(e.RetryAfter, rateLimitPause)
		hint = "Airtable allows 5 requests a second per base and asks for 30 seconds of silence after a 429: wait, then retry"
	case body.Type == "AUTHENTICATION_REQUIRED" || body.Type == "UNAUTHORIZED" || resp.StatusCode == http.StatusUnauthorized:
		e.Code = switchboard.CodeReconnect
		hint = "Airtable no longer accepts this connection's token (revoked, expired or deleted): reconnect Airtable with a new personal access token"
	case body.Type == "INVALID_PERMISSIONS_OR_MODEL_NOT_FOUND" || body.Type == "INVALID_PERMISSIONS":
		e.Code = switchboard.CodeForbidden
		hint = "the base, table or record does not exist, or the token may not reach it: check the IDs (list_bases, get_base_schema), " +
			"and that the token has the scope this needs and lists the base under Access"
	case body.Type == "NOT_FOUND" || body.Type == "MODEL_ID_NOT_FOUND" || body.Type == "TABLE_NOT_FOUND" ||
		body.Type == "VIEW_NAME_NOT_FOUND" || body.Type == "ROW_DOES_NOT_EXIST":
		e.Code = switchboard.CodeNotFound
		hint = "check the base, table, view or record ID; get_base_schema lists a base's tables and views"
	case body.Type == "UNKNOWN_FIELD_NAME" || body.Type == "INVALID_VALUE_FOR_COLUMN" || body.Type == "INVALID_MULTIPLE_CHOICE_OPTIONS":
		e.Code = switchboard.CodeInvalid
		hint = "get_base_schema lists the table's field names, types and select options; typecast: true converts text to options"
	case body.Type == "INVALID_FILTER_BY_FORMULA":
		e.Code = switchboard.CodeInvalid
		hint = "check the formula: field names go in braces and text in quotes, e.g. AND({Status}='Done', {Priority}>2)"
	case resp.StatusCode >= 500:
		e.Code = switchboard.CodeUpstream
		hint = "Airtable failed to answer; try again shortly"
	}
	if hint != "" {
		if e.Message != "" {
			e.Message += "; "
		}
		e.Message += hint
	}
	return e
}

// Airtable IDs: a three-letter prefix and fourteen letters or digits.
var (
	baseIDPattern   = regexp.MustCompile(`^app[A-Za-z0-9]{14}$`)
	recordIDPattern = regexp.MustCompile(`^rec[A-Za-z0-9]{14}$`)
)

// checkBaseID refuses anything but a base ID, so no input can steer a request to
// another path.
func checkBaseID(id string) error {
	if !baseIDPattern.MatchString(id) {
		return switchboard.Invalid("base_id", "must be a base ID: app followed by 14 letters or digits, e.g. appLkNDICXNqxSDhG (list_bases gives them)")
	}
	return nil
}

// checkRecordID refuses anything but a record ID.
func checkRecordID(field, id string) error {
	if !recordIDPattern.MatchString(id) {
		return switchboard.Invalid(field, "must be a record ID: rec followed by 14 letters or digits, e.g. rec560UJdUtocSouk")
	}
	return nil
}

// tablePath returns /{base}/{table}, with the table's ID or name escaped as one path
// segment.
func tablePath(baseID, table string) (string, error) {
	if err := checkBaseID(baseID); err != nil {
		return "", err
	}
	if strings.TrimSpace(table) == "" {
		return "", switchboard.Invalid("table", "is required: a table ID (tbl…) or its name")
	}
	return "/" + baseID + "/" + url.PathEscape(table), nil
}

// Page sizes: the hub's default and Airtable's maximum pageSize.
const (
	defaultPageSize = 30
	maxPageSize     = 100
)

// Record is one Airtable record.
type Record struct {
	ID          string         `json:"id" jsonschema:"The record's ID (rec…); pass it to get_record, update_records or delete_records"`
	CreatedTime string         `json:"created_time" jsonschema:"When the record was created (RFC 3339)"`
	Fields      map[string]any `json:"fields" jsonschema:"The record's cell values by field name; Airtable leaves out empty fields"`
}

// recordObject is a record as Airtable returns it.
type recordObject struct {
	ID          string         `json:"id"`
	CreatedTime string         `json:"createdTime"`
	Fields      map[string]any `json:"fields"`
}

func (r recordObject) toRecord() Record {
	f := r.Fields
	if f == nil {
		f = map[string]any{}
	}
	return Record{ID: r.ID, CreatedTime: r.CreatedTime, Fields: f}
}

func toRecords(in []recordObject) []Record {
	out := make([]Record, 0, len(in))
	for _, r := range in {
		out = append(out, r.toRecord())
	}
	return out
}
