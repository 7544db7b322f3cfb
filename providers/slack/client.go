package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// maxResponseBytes bounds what one Web API answer may hold.
const maxResponseBytes = 16 << 20

// envelope is what every Web API answer carries besides its payload.
type envelope struct {
	OK               bool   `json:"ok"`
	Error            string `json:"error"`
	Needed           string `json:"needed"`   // with missing_scope: the scope the method needs
	Provided         string `json:"provided"` // with missing_scope: the scopes the token has
	ResponseMetadata struct {
		NextCursor string   `json:"next_cursor"`
		Messages   []string `json:"messages"`
	} `json:"response_metadata"`
}

// send calls one Web API method (for example "chat.postMessage") with the HTTP method
// Slack's API description declares for it: GET sends params in the query, POST as an
// application/x-www-form-urlencoded body. The token is set by the call's client
// (Authorization: Bearer), never here. A 200 answer with "ok": false becomes an
// *providers.UpstreamError classified by slackError; out receives the whole answer.
func send(ctx context.Context, c *providers.Call, httpMethod, method string, params url.Values, out any) (http.Header, error) {
	var (
		req *http.Request
		err error
	)
	switch httpMethod {
	case http.MethodGet:
		u := c.URL("/" + method)
		if len(params) > 0 {
			u += "?" + params.Encode()
		}
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	case http.MethodPost:
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, c.URL("/"+method), strings.NewReader(params.Encode()))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	default:
		return nil, fmt.Errorf("slack %s: unsupported HTTP method %s", method, httpMethod)
	}
	if err != nil {
		return nil, fmt.Errorf("slack %s: build request: %w", method, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		var ue *providers.UpstreamError
		if errors.As(err, &ue) || ctx.Err() != nil {
			return nil, fmt.Errorf("slack %s: %w", method, err)
		}
		return nil, &switchboard.Error{Code: switchboard.CodeUpstream, Message: "Slack could not be reached; try again shortly", Err: fmt.Errorf("slack %s: %w", method, err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, &switchboard.Error{Code: switchboard.CodeUpstream, Message: "Slack's answer was cut off; try again shortly", Err: fmt.Errorf("slack %s: read answer: %w", method, err)}
	}
	var env envelope
	jsonErr := json.Unmarshal(body, &env)
	if resp.StatusCode != http.StatusOK {
		// Slack answers most failures with 200 and ok:false, but rate limits come as 429
		// with Retry-After, and outages as 5xx; the status decides the code there.
		return nil, providers.StatusError("slack", resp, env.Error, statusMessage(resp.StatusCode))
	}
	if jsonErr != nil {
		return nil, &providers.UpstreamError{Provider: "slack", Status: resp.StatusCode, Code: switchboard.CodeUpstream,
			Reason: "invalid_response", Message: "Slack answered with something that is not JSON; try again shortly"}
	}
	if !env.OK {
		return nil, slackError(resp, env)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return nil, &providers.UpstreamError{Provider: "slack", Status: resp.StatusCode, Code: switchboard.CodeUpstream,
				Reason: "invalid_response", Message: fmt.Sprintf("Slack's answer to %s has an unexpected shape", method)}
		}
	}
	return resp.Header, nil
}

// statusMessage says what to do about a non-200 answer.
func statusMessage(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "Slack's rate limit for this method is spent; retry after the wait"
	case status == http.StatusUnauthorized:
		return "Slack no longer accepts this connection's token; reconnect Slack"
	case status >= 500:
		return "Slack failed to answer; try again shortly"
	default:
		return "Slack refused the request"
	}
}

// errorClass is how one Slack error code is reported.
type errorClass struct {
	code    switchboard.Code
	message string
}

// errorClasses maps Slack's error codes (https://api.slack.com/web#errors and each
// method's page) to switchboard codes and a message an agent can act on. Codes not
// listed are reported as upstream failures with Slack's code as the reason.
var errorClasses = map[string]errorClass{
	// The credential is dead: only a new connection helps.
	"invalid_auth":      {switchboard.CodeReconnect, "Slack does not accept this connection's token; reconnect Slack"},
	"not_authed":        {switchboard.CodeReconnect, "no Slack token was sent; reconnect Slack"},
	"account_inactive":  {switchboard.CodeReconnect, "the Slack user or app behind this connection was deactivated; reconnect Slack with an active account"},
	"token_revoked":     {switchboard.CodeReconnect, "the Slack token of this connection was revoked; reconnect Slack"},
	"token_expired":     {switchboard.CodeReconnect, "the Slack token of this connection expired; reconnect Slack"},
	"team_added_to_org": {switchboard.CodeReconnect, "the workspace moved into an Enterprise Grid org, which voids its tokens; reconnect Slack"},

	// The credential works, but may not do this.
	"not_in_channel":          {switchboard.CodeForbidden, "the Slack app is not a member of this channel; invite it by typing /invite @<app name> in the channel, then retry"},
	"no_permission":           {switchboard.CodeForbidden, "the workspace does not allow this connection to do that"},
	"restricted_action":       {switchboard.CodeForbidden, "a workspace preference forbids this connection to do that"},
	"ekm_access_denied":       {switchboard.CodeForbidden, "the workspace's key management denied access"},
	"org_login_required":      {switchboard.CodeForbidden, "the workspace is migrating to an Enterprise Grid org; try again later"},
	"channel_is_archived":     {switchboard.CodeConflict, "the channel is archived; nothing can be posted in it"},
	"is_archived":             {switchboard.CodeConflict, "the channel is archived; nothing can be posted in it"},
	"already_reacted":         {switchboard.CodeConflict, "that reaction is already on the message"},
	"too_many_reactions":      {switchboard.CodeConflict, "the message has as many reactions as Slack allows"},
	"too_many_emoji":          {switchboard.CodeConflict, "the message has as many distinct emoji as Slack allows"},
	"cannot_reply_to_message": {switchboard.CodeConflict, "that message cannot have thread replies"},

	// The thing named does not exist, or this connection cannot see it.
	"channel_not_found": {switchboard.CodeNotFound, "no channel with that ID is visible to this connection; channel IDs look like C0123ABCD (use slack_list_channels)"},
	"user_not_found":    {switchboard.CodeNotFound, "no user with that ID in this workspace; user IDs look like U0123ABCD (use slack_get_users)"},
	"user_not_visible":  {switchboard.CodeNotFound, "that user is not visible to this connection"},
	"message_not_found": {switchboard.CodeNotFound, "no message with that timestamp in the channel"},
	"thread_not_found":  {switchboard.CodeNotFound, "no thread with that parent timestamp in the channel"},
	"no_reaction":       {switchboard.CodeNotFound, "that reaction is not on the message"},

	// Slack's own rate limit.
	"ratelimited":  {switchboard.CodeRateLimited, "Slack's rate limit for this method is spent; retry after the wait"},
	"rate_limited": {switchboard.CodeRateLimited, "Slack's rate limit for posting is spent; retry after the wait"},

	// The request was wrong.
	"invalid_arguments":    {switchboard.CodeInvalid, "Slack rejected the arguments"},
	"invalid_arg_name":     {switchboard.CodeInvalid, "Slack rejected an argument name"},
	"invalid_cursor":       {switchboard.CodeInvalid, "the cursor is not valid any more; start again without a cursor"},
	"invalid_blocks":       {switchboard.CodeInvalid, "Slack rejected the message blocks"},
	"invalid_ts_latest":    {switchboard.CodeInvalid, "latest is not a Slack timestamp such as 1712345678.123456"},
	"invalid_ts_oldest":    {switchboard.CodeInvalid, "oldest is not a Slack timestamp such as 1712345678.123456"},
	"bad_timestamp":        {switchboard.CodeInvalid, "timestamp is not a message timestamp such as 1712345678.123456"},
	"invalid_name":         {switchboard.CodeInvalid, "name is not an emoji known to this workspace; pass it without colons, e.g. thumbsup"},
	"msg_too_long":         {switchboard.CodeInvalid, "text is too long; Slack truncates beyond 40,000 characters and refuses far longer text"},
	"no_text":              {switchboard.CodeInvalid, "text is empty; a message needs text"},
	"too_many_attachments": {switchboard.CodeInvalid, "the message has too many attachments"},
	"limit_required":       {switchboard.CodeInvalid, "this workspace requires a page limit"},
}

// slackError classifies an ok:false answer. The reason is always Slack's own code.
func slackError(resp *http.Response, env envelope) *providers.UpstreamError {
	e := &providers.UpstreamError{Provider: "slack", Status: resp.StatusCode, Code: switchboard.CodeUpstream, Reason: env.Error}
	class, known := errorClasses[env.Error]
	switch {
	case env.Error == "missing_scope":
		e.Code = switchboard.CodeForbidden
		e.Message = "this Slack connection lacks a scope the method needs"
		if env.Needed != "" {
			e.Message = fmt.Sprintf("this Slack connection lacks the %s scope; add it to the app under OAuth & Permissions, reinstall it and reconnect", env.Needed)
		}
	case known:
		e.Code, e.Message = class.code, class.message
	default:
		e.Message = "Slack refused the request"
		if len(env.ResponseMetadata.Messages) > 0 {
			e.Message += ": " + strings.Join(env.ResponseMetadata.Messages, "; ")
		}
	}
	if e.Code == switchboard.CodeRateLimited {
		if wait, limited := providers.RateLimitWait(resp.Header, time.Now()); limited {
			e.RetryAfter = wait
		}
	}
	return e
}

// formBool renders a boolean the way Slack's form and query parameters take it.
func formBool(b bool) string { return strconv.FormatBool(b) }

// setOpt sets key to *v when the caller gave it.
func setOpt(v url.Values, key string, val *string) {
	if val != nil && *val != "" {
		v.Set(key, *val)
	}
}

// setOptBool sets key to *b when the caller gave it.
func setOptBool(v url.Values, key string, b *bool) {
	if b != nil {
		v.Set(key, formBool(*b))
	}
}

// setPage sets Slack's limit and cursor from the hub's page input; def is the limit
// when the caller gave none. A cursor this hub did not hand out is an invalid error.
func setPage(v url.Values, p providers.PageInput, def int) error {
	cursor, err := p.DecodedCursor()
	if err != nil {
		return err
	}
	v.Set("limit", strconv.Itoa(p.LimitOr(def)))
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	return nil
}
