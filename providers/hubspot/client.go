package hubspot

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// providerName is the name HubSpot's errors carry.
const providerName = "hubspot"

// maxResponseBytes bounds what one answer may hold (a page of 100 records).
const maxResponseBytes = 16 << 20

// maxErrorBytes bounds how much of a failed answer is read for its message.
const maxErrorBytes = 64 << 10

// request is one call to the HubSpot API; path starts with "/" and is joined to the
// Call's base URL (https://api.hubapi.com).
type request struct {
	method string
	path   string
	query  url.Values
	body   any // encoded as JSON when not nil
}

// do sends the request and decodes a successful answer into out. A failed answer is an
// *providers.UpstreamError classified from HubSpot's error envelope.
func (r request) do(ctx context.Context, c *providers.Call, out any) error {
	return providers.JSONRequest{
		Provider: providerName, Title: "HubSpot", Method: r.method, Path: r.path, Query: r.query, Body: r.body,
		MaxBytes: maxResponseBytes, TooLarge: "ask for fewer records or properties",
	}.Do(ctx, c, out, func(resp *http.Response) error { return errorFrom(resp, c.Meta[metaTimeZone], time.Now()) })
}

// apiError is HubSpot's error envelope.
// https://developers.hubspot.com/docs/api/error-handling
type apiError struct {
	Status        string `json:"status"`
	Message       string `json:"message"`
	Category      string `json:"category"`
	CorrelationID string `json:"correlationId"`
	// Rate-limit answers carry errorType and policyName instead of a category.
	ErrorType  string `json:"errorType"`
	PolicyName string `json:"policyName"`
}

// errorFrom classifies a failed answer by HubSpot's category, falling back to the HTTP
// status, with a message an agent can act on. timeZone is the account's (for when its
// daily limit resets); now is the current time.
func errorFrom(resp *http.Response, timeZone string, now time.Time) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	var body apiError
	if json.Unmarshal(data, &body) != nil || (body.Status != "error" && body.Category == "" && body.ErrorType == "") {
		body = apiError{Message: http.StatusText(resp.StatusCode)}
	}
	reason := body.Category
	if reason == "" {
		reason = body.ErrorType
	}
	e := providers.StatusError(providerName, resp, reason, body.Message)
	hint := ""
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || body.Category == "RATE_LIMITS" || body.ErrorType == "RATE_LIMIT":
		e.Code = switchboard.CodeRateLimited
		if body.PolicyName == "DAILY" || resp.Header.Get("X-HubSpot-RateLimit-Daily-Remaining") == "0" {
			e.RetryAfter = max(e.RetryAfter, untilMidnight(now, timeZone))
			hint = "the HubSpot account's daily API limit is spent; it resets at midnight in the account's time zone"
		} else {
			e.RetryAfter = max(e.RetryAfter, rollingWindow(resp.Header, body.PolicyName))
			hint = "HubSpot's limit of requests per rolling window is spent (shared by every app of the account): retry after the wait given"
		}
	case body.Category == "INVALID_AUTHENTICATION" || body.Category == "EXPIRED_AUTHENTICATION" || resp.StatusCode == http.StatusUnauthorized:
		e.Code = switchboard.CodeReconnect
		hint = "HubSpot no longer accepts this connection's token (revoked, expired, or the app was uninstalled): reconnect HubSpot"
	case body.Category == "MISSING_SCOPES" || resp.StatusCode == http.StatusForbidden:
		e.Code = switchboard.CodeForbidden
		hint = "the token lacks a scope this needs: reconnect HubSpot granting it, or add it to the private app"
	case body.Category == "OBJECT_NOT_FOUND" || resp.StatusCode == http.StatusNotFound:
		e.Code = switchboard.CodeNotFound
		hint = "check the record ID; search_contacts, search_companies or search_deals find records"
	case body.Category == "CONFLICT" || body.Category == "OBJECT_ALREADY_EXISTS" || resp.StatusCode == http.StatusConflict:
		e.Code = switchboard.CodeConflict
		hint = "a record with this unique value (a contact's email, a company's domain) already exists: update it instead"
	case body.Category == "VALIDATION_ERROR" || body.Category == "PROPERTY_DOESNT_EXIST":
		e.Code = switchboard.CodeInvalid
		hint = "list_properties gives each property's internal name, type and allowed options"
	case resp.StatusCode >= 500:
		e.Code = switchboard.CodeUpstream
		hint = "HubSpot failed to answer; try again shortly"
	}
	if hint != "" {
		if e.Message != "" {
			e.Message += "; "
		}
		e.Message += hint
	}
	if body.CorrelationID != "" {
		e.Message += " (HubSpot correlation ID " + body.CorrelationID + ")"
	}
	return e
}

// rollingWindow is how long a spent rolling window lasts: the interval HubSpot's
// headers give, else one second for a secondly policy and ten for the others.
func rollingWindow(h http.Header, policy string) time.Duration {
	if ms, err := strconv.Atoi(h.Get("X-HubSpot-RateLimit-Interval-Milliseconds")); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	if policy == "SECONDLY" {
		return time.Second
	}
	return 10 * time.Second
}

// untilMidnight is the time from now to the next midnight in the account's time zone
// (UTC when it is unknown), when HubSpot resets the daily limit.
func untilMidnight(now time.Time, timeZone string) time.Duration {
	loc := time.UTC
	if timeZone != "" {
		if l, err := time.LoadLocation(timeZone); err == nil {
			loc = l
		}
	}
	local := now.In(loc)
	next := time.Date(local.Year(), local.Month(), local.Day()+1, 0, 0, 0, 0, loc)
	return next.Sub(now).Round(time.Second)
}
