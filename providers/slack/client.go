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

// classify maps Slack's error codes (https://api.slack.com/web#errors and each
// method's page) to a switchboard code and a message an agent can act on. ok is false
// for codes not listed, which are reported as upstream failures with Slack's code as
// the reason. missing_scope is handled by slackError, as its message names a scope.
func classify(slackCode string) (code switchboard.Code, message string, ok bool) {
	switch slackCode {
	// The credential is dead: only a new connection helps.
	case "invalid_auth":
		return switchboard.CodeReconnect, "Slack does not accept this connection's token; reconnect Slack", true
	case "not_authed":
		return switchboard.CodeReconnect, "no Slack token was sent; reconnect Slack", true
	case "account_inactive":
		return switchboard.CodeReconnect, "the Slack user or app behind this connection was deactivated; reconnect Slack with an active account", true
	case "token_revoked":
		return switchboard.CodeReconnect, "the Slack token of this connection was revoked; reconnect Slack", true
	case "token_expired":
		return switchboard.CodeReconnect, "the Slack token of this connection expired; reconnect Slack", true
	case "team_added_to_org":
		return switchboard.CodeReconnect, "the workspace moved into an Enterprise Grid org, which voids its tokens; reconnect Slack", true
	// The credential works, but may not do this.
	case "not_in_channel":
		return switchboard.CodeForbidden, "the Slack app is not a member of this channel; invite it by typing /invite @<app name> in the channel, then retry", true
	case "no_permission":
		return switchboard.CodeForbidden, "the workspace does not allow this connection to do that", true
	case "restricted_action":
		return switchboard.CodeForbidden, "a workspace preference forbids this connection to do that", true
	case "not_allowed_token_type":
		return switchboard.CodeForbidden, "this Slack method needs a user token (xoxp-…), and this connection holds a bot token (xoxb-…); connect Slack again with a user token: add a Slack connection with a user token (xoxp-…, from your app's OAuth & Permissions page, with the user scope the method needs, e.g. search:read) and use that connection", true
	case "cant_update_message":
		return switchboard.CodeForbidden, "this connection may only edit messages it posted itself", true
	case "cant_delete_message":
		return switchboard.CodeForbidden, "this connection may only delete messages it posted itself (a bot token cannot delete other people's messages)", true
	case "compliance_exports_prevent_deletion":
		return switchboard.CodeForbidden, "the workspace's compliance exports forbid deleting messages", true
	case "edit_window_closed":
		return switchboard.CodeForbidden, "the workspace's time window for editing that message has closed", true
	case "cant_archive_general":
		return switchboard.CodeForbidden, "the workspace's general channel cannot be archived", true
	case "permission_denied":
		return switchboard.CodeForbidden, "this connection may not change the pins of that channel", true
	case "user_is_restricted", "user_is_ultra_restricted":
		return switchboard.CodeForbidden, "the Slack account behind this connection is a guest and may not do that", true
	case "ekm_access_denied":
		return switchboard.CodeForbidden, "the workspace's key management denied access", true
	case "org_login_required":
		return switchboard.CodeForbidden, "the workspace is migrating to an Enterprise Grid org; try again later", true
	// The message or channel is in a state that refuses this.
	case "channel_is_archived":
		return switchboard.CodeConflict, "the channel is archived; nothing can be posted in it", true
	case "is_archived":
		return switchboard.CodeConflict, "the channel is archived; nothing can be posted in it", true
	case "already_reacted":
		return switchboard.CodeConflict, "that reaction is already on the message", true
	case "too_many_reactions":
		return switchboard.CodeConflict, "the message has as many reactions as Slack allows", true
	case "too_many_emoji":
		return switchboard.CodeConflict, "the message has as many distinct emoji as Slack allows", true
	case "already_archived":
		return switchboard.CodeConflict, "the channel is archived already", true
	case "already_pinned":
		return switchboard.CodeConflict, "that message is pinned already", true
	case "not_pinned":
		return switchboard.CodeConflict, "that message is not pinned", true
	case "already_in_channel":
		return switchboard.CodeConflict, "a user named in users is already a member of the channel; invite only the others", true
	case "name_taken":
		return switchboard.CodeConflict, "a channel with that name exists already (it may be archived); pick another name", true
	case "cannot_reply_to_message":
		return switchboard.CodeConflict, "that message cannot have thread replies", true
	// The thing named does not exist, or this connection cannot see it.
	case "channel_not_found":
		return switchboard.CodeNotFound, "no channel with that ID is visible to this connection; channel IDs look like C0123ABCD (use slack_list_channels)", true
	case "user_not_found":
		return switchboard.CodeNotFound, "no user with that ID in this workspace; user IDs look like U0123ABCD (use slack_get_users)", true
	case "user_not_visible":
		return switchboard.CodeNotFound, "that user is not visible to this connection", true
	case "message_not_found":
		return switchboard.CodeNotFound, "no message with that timestamp in the channel", true
	case "thread_not_found":
		return switchboard.CodeNotFound, "no thread with that parent timestamp in the channel", true
	case "users_not_found":
		return switchboard.CodeNotFound, "no user of this workspace has that email address (or it is hidden from this connection)", true
	case "user_not_in_channel":
		return switchboard.CodeNotFound, "that user is not a member of the channel, so an ephemeral message cannot reach them there", true
	case "no_reaction":
		return switchboard.CodeNotFound, "that reaction is not on the message", true
	// Slack's own rate limit; the wait comes from Retry-After where Slack sends it.
	case "ratelimited":
		return switchboard.CodeRateLimited, "Slack's rate limit for this method is spent; retry after the wait", true
	case "rate_limited":
		return switchboard.CodeRateLimited, "Slack's rate limit for posting is spent; retry after the wait", true
	// The request was wrong.
	case "invalid_arguments":
		return switchboard.CodeInvalid, "Slack rejected the arguments", true
	case "invalid_arg_name":
		return switchboard.CodeInvalid, "Slack rejected an argument name", true
	case "invalid_cursor":
		return switchboard.CodeInvalid, "the cursor is not valid any more; start again without a cursor", true
	case "invalid_blocks":
		return switchboard.CodeInvalid, "Slack rejected the message blocks", true
	case "invalid_ts_latest":
		return switchboard.CodeInvalid, "latest is not a Slack timestamp such as 1712345678.123456", true
	case "invalid_ts_oldest":
		return switchboard.CodeInvalid, "oldest is not a Slack timestamp such as 1712345678.123456", true
	case "bad_timestamp":
		return switchboard.CodeInvalid, "timestamp is not a message timestamp such as 1712345678.123456", true
	case "invalid_name":
		return switchboard.CodeInvalid, "name is not an emoji known to this workspace; pass it without colons, e.g. thumbsup", true
	case "msg_too_long":
		return switchboard.CodeInvalid, "text is too long for one Slack message (at most 40,000 characters)", true
	case "no_text":
		return switchboard.CodeInvalid, "text is empty; a message needs text", true
	case "too_many_attachments":
		return switchboard.CodeInvalid, "the message has too many attachments", true
	case "invalid_time":
		return switchboard.CodeInvalid, "post_at is not a valid Unix time in seconds", true
	case "time_in_past":
		return switchboard.CodeInvalid, "post_at is in the past; schedule a time in the future", true
	case "time_too_far":
		return switchboard.CodeInvalid, "post_at is more than 120 days ahead, the furthest Slack schedules", true
	case "invalid_name_required", "invalid_name_punctuation", "invalid_name_maxlength", "invalid_name_specials":
		return switchboard.CodeInvalid, "name is not a valid channel name: use at most 80 lowercase letters, digits, hyphens and underscores", true
	case "too_long":
		return switchboard.CodeInvalid, "the text is longer than Slack allows (250 characters for a topic or purpose)", true
	case "cant_invite_self":
		return switchboard.CodeInvalid, "users holds this connection's own user, which cannot invite itself", true
	case "not_pinnable":
		return switchboard.CodeInvalid, "that message cannot be pinned", true
	case "no_item_specified":
		return switchboard.CodeInvalid, "no message was named: give channel and timestamp", true
	case "limit_required":
		return switchboard.CodeInvalid, "this workspace requires a page limit", true
	}
	return "", "", false
}

// slackError classifies an ok:false answer. The reason is always Slack's own code.
func slackError(resp *http.Response, env envelope) *providers.UpstreamError {
	e := &providers.UpstreamError{Provider: "slack", Status: resp.StatusCode, Code: switchboard.CodeUpstream, Reason: env.Error}
	code, message, known := classify(env.Error)
	switch {
	case env.Error == "missing_scope":
		e.Code = switchboard.CodeForbidden
		e.Message = "this Slack connection lacks a scope the method needs"
		if env.Needed != "" {
			e.Message = fmt.Sprintf("this Slack connection lacks the %s scope; add it to the app under OAuth & Permissions, reinstall it and reconnect", env.Needed)
		}
		if env.Provided != "" {
			e.Message += fmt.Sprintf(" (it has %s)", env.Provided)
		}
	case known:
		e.Code, e.Message = code, message
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

// reword replaces the message of an UpstreamError whose Slack code is reason: some
// codes mean different things for different methods (invalid_name is an unknown emoji
// for reactions and a bad channel name for conversations.create).
func reword(err error, reason, message string) error {
	var ue *providers.UpstreamError
	if errors.As(err, &ue) && ue.Reason == reason {
		ue.Message = message
	}
	return err
}

// isReason reports whether err is Slack's ok:false answer with the given code.
func isReason(err error, reason string) bool {
	var ue *providers.UpstreamError
	return errors.As(err, &ue) && ue.Reason == reason
}
