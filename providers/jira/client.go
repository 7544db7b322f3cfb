package jira

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// providerName is the name Jira's errors carry.
const providerName = "jira"

// maxResponseBytes bounds what one answer may hold.
const maxResponseBytes = 8 << 20

// maxErrorBytes bounds how much of a failed answer is read for its message.
const maxErrorBytes = 64 << 10

// Meta keys Verify records on the connection.
const (
	metaCloudID = "cloud_id"
	metaSiteURL = "site_url"
)

// cloudIDPattern is an Atlassian cloud id (a UUID).
var cloudIDPattern = regexp.MustCompile(`^[0-9a-fA-F-]{36}$`)

// apiPath returns the Jira REST v3 path of the connection's site through the
// Atlassian API gateway: /ex/jira/{cloud_id}/rest/api/3{rest}.
func apiPath(c *providers.Call, rest string) (string, error) {
	id := c.Meta[metaCloudID]
	if id == "" || !cloudIDPattern.MatchString(id) {
		return "", &switchboard.Error{Code: switchboard.CodeReconnect,
			Message: "this Jira connection does not know its Atlassian site (no cloud id was recorded when it was connected); reconnect Jira"}
	}
	return "/ex/jira/" + id + "/rest/api/3" + rest, nil
}

// request is one call to the Jira Cloud REST API; path is what follows /rest/api/3.
type request struct {
	method string
	path   string // after /rest/api/3, built with issuePath so keys are escaped
	query  url.Values
	body   any
	// fields maps Jira's field names in a 400's errors object to the tool's argument
	// names, so the invalid error names what the caller sent; the "" entry names the
	// argument a 400 without field errors is about (the JQL of a search).
	fields map[string]string
}

// do sends the request to the connection's site and decodes a successful answer into
// out (when not nil and the answer has a body).
func (r request) do(ctx context.Context, c *providers.Call, out any) error {
	p, err := apiPath(c, r.path)
	if err != nil {
		return err
	}
	return send(ctx, c, r.method, p, r.query, r.body, r.fields, out)
}

// send is do for a path on the gateway itself.
func send(ctx context.Context, c *providers.Call, method, path string, query url.Values, body any, fields map[string]string, out any) error {
	return providers.JSONRequest{
		Provider: providerName, Title: "Jira", Method: method, Path: path, Query: query, Body: body,
		MaxBytes: maxResponseBytes, TooLarge: "ask for fewer results (limit)",
	}.Do(ctx, c, out, func(resp *http.Response) error { return errorFrom(resp, fields) })
}

// apiError is Atlassian's error envelope: messages about the request as a whole, and
// messages by field. The API gateway answers its own failures as {code, message}.
// Jira API docs: https://developer.atlassian.com/cloud/jira/platform/rest/v3/intro/#status-codes
type apiError struct {
	ErrorMessages []string          `json:"errorMessages"`
	Errors        map[string]string `json:"errors"`
	Message       string            `json:"message"`
}

// errorFrom classifies a failed answer with Atlassian's messages and what to do.
func errorFrom(resp *http.Response, fields map[string]string) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	var body apiError
	_ = json.Unmarshal(data, &body)
	parts := append([]string(nil), body.ErrorMessages...)
	var fieldNames []string
	for f := range body.Errors {
		fieldNames = append(fieldNames, f)
	}
	sort.Strings(fieldNames)
	for _, f := range fieldNames {
		parts = append(parts, f+": "+body.Errors[f])
	}
	if len(parts) == 0 && body.Message != "" {
		parts = append(parts, body.Message)
	}
	if len(parts) == 0 {
		parts = append(parts, http.StatusText(resp.StatusCode))
	}
	msg := strings.Join(parts, "; ")
	e := providers.StatusError(providerName, resp, "", "")
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		msg += "; Atlassian no longer accepts this connection's token (revoked, expired, or access to the site was removed): reconnect Jira"
	case e.Code == switchboard.CodeRateLimited:
		msg += "; Jira's rate limit is spent: retry after the wait given"
	case resp.StatusCode == http.StatusForbidden:
		msg += "; the Jira user behind this connection lacks the permission, or the connection lacks a scope (read:jira-work, write:jira-work, read:jira-user)"
	case resp.StatusCode == http.StatusNotFound:
		msg += "; check the key (e.g. PROJ-123); Jira also answers this for issues the user may not browse"
	case resp.StatusCode >= 500:
		msg += "; Jira failed to answer: try again shortly"
	}
	e.Message = msg
	if resp.StatusCode == http.StatusBadRequest {
		field := fields[""]
		if len(fieldNames) > 0 {
			field = fieldNames[0]
			if f, ok := fields[field]; ok {
				field = f
			}
		}
		if field != "" {
			return &switchboard.Error{Code: switchboard.CodeInvalid, Field: field, Message: msg, Err: e}
		}
	}
	return e
}

// keyPattern is an issue key (PROJ-123) or a numeric issue id.
var keyPattern = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_]{0,254}-[1-9][0-9]{0,17}|[1-9][0-9]{0,17})$`)

// issuePath builds /issue/{key}{rest} from an issue key or id, refusing anything else,
// so no input can steer the request to another path.
func issuePath(field, key, rest string) (string, string, error) {
	key = strings.TrimSpace(key)
	if !keyPattern.MatchString(key) {
		return "", "", switchboard.Invalid(field, "must be an issue key such as PROJ-123 (or a numeric issue id)")
	}
	key = strings.ToUpper(key)
	return "/issue/" + url.PathEscape(key) + rest, key, nil
}

// projectKeyPattern is a project key (PROJ) or a numeric project id.
var projectKeyPattern = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_]{0,254}|[1-9][0-9]{0,17})$`)

// browseURL is the issue's address on the connection's site, or "" when unknown.
func browseURL(c *providers.Call, key string) string {
	site := strings.TrimRight(c.Meta[metaSiteURL], "/")
	if site == "" || key == "" {
		return ""
	}
	return site + "/browse/" + url.PathEscape(key)
}
