package slack

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

func codeOf(err error) switchboard.Code { return switchboard.CodeOf(err) }

// flat turns single-valued url.Values into a map; a repeated key keeps all its values
// joined with "|" so that a test sees it.
func flat(v url.Values) map[string]string {
	out := make(map[string]string, len(v))
	for k, vs := range v {
		out[k] = strings.Join(vs, "|")
	}
	return out
}

func parseForm(body []byte) (map[string]string, error) {
	v, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, err
	}
	return flat(v), nil
}

// upstreamError returns the *providers.UpstreamError in err's chain.
func upstreamError(t *testing.T, err error) *providers.UpstreamError {
	t.Helper()
	var ue *providers.UpstreamError
	if !errors.As(err, &ue) {
		t.Fatalf("error %v (%T) is not an UpstreamError", err, err)
	}
	return ue
}

// TestSlackErrors sends Web API methods to a fake that answers ok:false (with HTTP 200,
// as Slack does) and checks each error code's classification. Each answer comes from
// the method that documents it, and is checked against that method's error schema in
// Slack's description unless the description's list of codes is behind the docs.
func TestSlackErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		httpMethod string
		method     string // the Web API method
		operation  string // its operationId in the description
		params     url.Values
		body       string
		// undescribed says why the answer is not checked against the description: the
		// method page documents the code but the description's enum does not list it.
		undescribed string
		wantCode    switchboard.Code
		wantMessage string // a part of the message
	}{
		{name: "invalid_auth", httpMethod: "GET", method: "auth.test", operation: "auth_test", body: `{"ok":false,"error":"invalid_auth"}`, wantCode: switchboard.CodeReconnect},
		{name: "not_authed", httpMethod: "GET", method: "auth.test", operation: "auth_test", body: `{"ok":false,"error":"not_authed"}`, wantCode: switchboard.CodeReconnect},
		{name: "account_inactive", httpMethod: "GET", method: "auth.test", operation: "auth_test", body: `{"ok":false,"error":"account_inactive"}`, wantCode: switchboard.CodeReconnect},
		{name: "token_revoked", httpMethod: "GET", method: "auth.test", operation: "auth_test", body: `{"ok":false,"error":"token_revoked"}`, wantCode: switchboard.CodeReconnect},
		{name: "token_expired", httpMethod: "GET", method: "auth.test", operation: "auth_test", body: `{"ok":false,"error":"token_expired"}`,
			undescribed: "token_expired comes with token rotation, which postdates the description", wantCode: switchboard.CodeReconnect},
		{name: "no_permission", httpMethod: "GET", method: "users.list", operation: "users_list", params: url.Values{"limit": {"30"}}, body: `{"ok":false,"error":"no_permission"}`, wantCode: switchboard.CodeForbidden},
		{name: "missing_scope names the needed scope", httpMethod: "GET", method: "conversations.list", operation: "conversations_list", params: url.Values{"limit": {"30"}},
			body: `{"ok":false,"error":"missing_scope","needed":"channels:read","provided":"chat:write,reactions:write"}`, wantCode: switchboard.CodeForbidden, wantMessage: "lacks the channels:read scope"},
		{name: "not_in_channel says to invite the app", httpMethod: "POST", method: "chat.postMessage", operation: "chat_postMessage", params: url.Values{"channel": {"C012AB3CD"}, "text": {"hi"}},
			body: `{"ok":false,"error":"not_in_channel"}`, wantCode: switchboard.CodeForbidden, wantMessage: "/invite @"},
		{name: "channel_not_found", httpMethod: "GET", method: "conversations.history", operation: "conversations_history", params: url.Values{"channel": {"C0NOPE1234"}},
			body: `{"ok":false,"error":"channel_not_found"}`, wantCode: switchboard.CodeNotFound},
		{name: "user_not_found", httpMethod: "GET", method: "users.info", operation: "users_info", params: url.Values{"user": {"U0NOPE1234"}}, body: `{"ok":false,"error":"user_not_found"}`, wantCode: switchboard.CodeNotFound},
		{name: "message_not_found", httpMethod: "POST", method: "reactions.add", operation: "reactions_add", params: url.Values{"channel": {"C012AB3CD"}, "timestamp": {"1712345678.123456"}, "name": {"eyes"}},
			body: `{"ok":false,"error":"message_not_found"}`, wantCode: switchboard.CodeNotFound},
		{name: "thread_not_found", httpMethod: "GET", method: "conversations.replies", operation: "conversations_replies", params: url.Values{"channel": {"C012AB3CD"}, "ts": {"1712345678.123456"}},
			body: `{"ok":false,"error":"thread_not_found"}`, wantCode: switchboard.CodeNotFound},
		{name: "no_reaction", httpMethod: "POST", method: "reactions.remove", operation: "reactions_remove", params: url.Values{"channel": {"C012AB3CD"}, "timestamp": {"1712345678.123456"}, "name": {"eyes"}},
			body: `{"ok":false,"error":"no_reaction"}`, wantCode: switchboard.CodeNotFound},
		{name: "already_reacted is a conflict for the client", httpMethod: "POST", method: "reactions.add", operation: "reactions_add", params: url.Values{"channel": {"C012AB3CD"}, "timestamp": {"1712345678.123456"}, "name": {"eyes"}},
			body: `{"ok":false,"error":"already_reacted"}`, wantCode: switchboard.CodeConflict},
		{name: "rate_limited on posting", httpMethod: "POST", method: "chat.postMessage", operation: "chat_postMessage", params: url.Values{"channel": {"C012AB3CD"}, "text": {"hi"}},
			body: `{"ok":false,"error":"rate_limited"}`, wantCode: switchboard.CodeRateLimited},
		{name: "ratelimited with HTTP 200", httpMethod: "GET", method: "conversations.list", operation: "conversations_list", params: url.Values{"limit": {"30"}},
			body: `{"ok":false,"error":"ratelimited"}`, undescribed: "the description lists ratelimited for no method; Slack documents it at https://api.slack.com/docs/rate-limits", wantCode: switchboard.CodeRateLimited},
		{name: "invalid_cursor", httpMethod: "GET", method: "users.list", operation: "users_list", params: url.Values{"cursor": {"dXNlcjpVMEc5V0ZYTlo="}, "limit": {"30"}},
			body: `{"ok":false,"error":"invalid_cursor"}`, wantCode: switchboard.CodeInvalid, wantMessage: "without a cursor"},
		{name: "invalid_arguments", httpMethod: "POST", method: "chat.postMessage", operation: "chat_postMessage", params: url.Values{"channel": {"C012AB3CD"}, "text": {"hi"}},
			body: `{"ok":false,"error":"invalid_arguments"}`, undescribed: "invalid_arguments postdates the description's error list", wantCode: switchboard.CodeInvalid},
		{name: "invalid_blocks", httpMethod: "POST", method: "chat.postMessage", operation: "chat_postMessage", params: url.Values{"channel": {"C012AB3CD"}, "text": {"hi"}},
			body: `{"ok":false,"error":"invalid_blocks"}`, undescribed: "invalid_blocks postdates the description's error list", wantCode: switchboard.CodeInvalid},
		{name: "msg_too_long", httpMethod: "POST", method: "chat.postMessage", operation: "chat_postMessage", params: url.Values{"channel": {"C012AB3CD"}, "text": {"hi"}},
			body: `{"ok":false,"error":"msg_too_long"}`, wantCode: switchboard.CodeInvalid},
		{name: "no_text", httpMethod: "POST", method: "chat.postMessage", operation: "chat_postMessage", params: url.Values{"channel": {"C012AB3CD"}, "text": {"hi"}},
			body: `{"ok":false,"error":"no_text"}`, wantCode: switchboard.CodeInvalid},
		{name: "is_archived", httpMethod: "POST", method: "chat.postMessage", operation: "chat_postMessage", params: url.Values{"channel": {"C012AB3CD"}, "text": {"hi"}},
			body: `{"ok":false,"error":"is_archived"}`, wantCode: switchboard.CodeConflict},
		{name: "an unlisted code is an upstream failure", httpMethod: "GET", method: "users.list", operation: "users_list", params: url.Values{"limit": {"30"}},
			body: `{"ok":false,"error":"fatal_error"}`, wantCode: switchboard.CodeUpstream},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, answer{body: tt.body})
			_, err := send(context.Background(), f.call, tt.httpMethod, tt.method, tt.params, nil)
			ue := upstreamError(t, err)
			if codeOf(err) != tt.wantCode || ue.Code != tt.wantCode {
				t.Errorf("code = %s, want %s (%v)", codeOf(err), tt.wantCode, err)
			}
			var env struct{ Error string }
			if err := json.Unmarshal([]byte(tt.body), &env); err != nil || env.Error == "" {
				t.Fatalf("bad canned body %s: %v", tt.body, err)
			}
			if ue.Reason != env.Error {
				t.Errorf("reason = %q, want Slack's code %q", ue.Reason, env.Error)
			}
			if ue.Status != http.StatusOK || ue.Provider != "slack" {
				t.Errorf("status, provider = %d, %q; want 200, slack", ue.Status, ue.Provider)
			}
			if ue.Message == "" || !strings.Contains(ue.Message, tt.wantMessage) {
				t.Errorf("message = %q, want it to contain %q", ue.Message, tt.wantMessage)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("error %q holds the token", err)
			}
			ids := f.checkRequests(t)
			if len(ids) != 1 || ids[0] != tt.operation {
				t.Errorf("operations = %v, want [%s]", ids, tt.operation)
			}
			if tt.undescribed == "" {
				providertest.SlackDescription(t).CheckResponse(t, tt.operation, http.StatusOK, []byte(tt.body))
			}
		})
	}
}

// TestHTTPFailures runs a read operation (retried when safe) and post_message (never
// retried) against a fake that fails with HTTP statuses.
func TestHTTPFailures(t *testing.T) {
	t.Parallel()
	const (
		historyArgs = `{"channel":"C012AB3CD"}`
		postArgs    = `{"channel":"C012AB3CD","text":"Deploy finished"}`
		slack5xx    = "<html><body><h1>503 Service Unavailable</h1></body></html>"
	)
	tests := []struct {
		name           string
		tool, args     string
		answer         answer
		wantCode       switchboard.Code
		wantReason     string
		wantRetryAfter [2]time.Duration // inclusive range
		wantAttempts   int
	}{
		{name: "401 read", tool: "slack_get_channel_history", args: historyArgs, answer: answer{status: 401, body: `{"ok":false,"error":"invalid_auth"}`},
			wantCode: switchboard.CodeReconnect, wantReason: "invalid_auth", wantAttempts: 1},
		{name: "403 read", tool: "slack_get_channel_history", args: historyArgs, answer: answer{status: 403, body: `{"ok":false,"error":"not_allowed_token_type"}`},
			wantCode: switchboard.CodeForbidden, wantReason: "not_allowed_token_type", wantAttempts: 1},
		{name: "404 read", tool: "slack_get_channel_history", args: historyArgs, answer: answer{status: 404, body: `{"ok":false,"error":"unknown_method","req_method":"conversations.history"}`},
			wantCode: switchboard.CodeNotFound, wantReason: "unknown_method", wantAttempts: 1},
		// Retry-After: 7 is longer than the spec's MaxWait, so even a read is not
		// retried: the agent is told to come back in 7 s.
		{name: "429 read", tool: "slack_get_channel_history", args: historyArgs, answer: answer{status: 429, header: map[string]string{"Retry-After": "7"}, body: `{"ok":false,"error":"ratelimited"}`},
			wantCode: switchboard.CodeRateLimited, wantReason: "ratelimited", wantRetryAfter: [2]time.Duration{7 * time.Second, 7 * time.Second}, wantAttempts: 1},
		{name: "429 post", tool: "slack_post_message", args: postArgs, answer: answer{status: 429, header: map[string]string{"Retry-After": "7"}, body: `{"ok":false,"error":"ratelimited"}`},
			wantCode: switchboard.CodeRateLimited, wantReason: "ratelimited", wantRetryAfter: [2]time.Duration{7 * time.Second, 7 * time.Second}, wantAttempts: 1},
		{name: "500 read is retried", tool: "slack_get_channel_history", args: historyArgs, answer: answer{status: 500, header: map[string]string{"Content-Type": "text/html"}, body: slack5xx},
			wantCode: switchboard.CodeUpstream, wantAttempts: 3},
		{name: "503 read is retried", tool: "slack_get_channel_history", args: historyArgs, answer: answer{status: 503, header: map[string]string{"Content-Type": "text/html"}, body: slack5xx},
			wantCode: switchboard.CodeUpstream, wantAttempts: 3},
		{name: "500 post is sent once", tool: "slack_post_message", args: postArgs, answer: answer{status: 500, header: map[string]string{"Content-Type": "text/html"}, body: slack5xx},
			wantCode: switchboard.CodeUpstream, wantAttempts: 1},
		{name: "503 post is sent once", tool: "slack_post_message", args: postArgs, answer: answer{status: 503, header: map[string]string{"Content-Type": "text/html"}, body: slack5xx},
			wantCode: switchboard.CodeUpstream, wantAttempts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.answer)
			out, err := invoke(t, f.call, tt.tool, tt.args)
			if err == nil {
				t.Fatalf("no error, output %+v", out)
			}
			ue := upstreamError(t, err)
			if got := codeOf(err); got != tt.wantCode {
				t.Errorf("code = %s, want %s (%v)", got, tt.wantCode, err)
			}
			if ue.Reason != tt.wantReason {
				t.Errorf("reason = %q, want %q", ue.Reason, tt.wantReason)
			}
			if ue.RetryAfter < tt.wantRetryAfter[0] || ue.RetryAfter > tt.wantRetryAfter[1] {
				t.Errorf("retry after = %v, want %v to %v", ue.RetryAfter, tt.wantRetryAfter[0], tt.wantRetryAfter[1])
			}
			if got := len(f.up.Requests()); got != tt.wantAttempts {
				t.Errorf("attempts = %d, want %d", got, tt.wantAttempts)
			}
			f.checkRequests(t)
		})
	}
}

// TestRetryAfterShortWait checks that a read waits out a short Retry-After and then
// succeeds on the second attempt.
func TestRetryAfterShortWait(t *testing.T) {
	t.Parallel()
	f := newFake(t,
		answer{status: 429, header: map[string]string{"Retry-After": "1"}, body: `{"ok":false,"error":"ratelimited"}`},
		answer{body: historyOK},
	)
	start := time.Now()
	out, err := invoke(t, f.call, "slack_get_channel_history", `{"channel":"C012AB3CD"}`)
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	if waited := time.Since(start); waited < 900*time.Millisecond {
		t.Errorf("the retry came after %v, before Retry-After's 1 s", waited)
	}
	if got := len(out.(MessagesOutput).Messages); got != 3 {
		t.Errorf("messages = %d, want 3", got)
	}
	if got := len(f.up.Requests()); got != 2 {
		t.Errorf("attempts = %d, want 2", got)
	}
	f.checkRequests(t)
}

// TestBadAnswers checks answers that are not Slack JSON.
func TestBadAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		answer answer
	}{
		{name: "HTML with 200", answer: answer{header: map[string]string{"Content-Type": "text/html"}, body: "<html>maintenance</html>"}},
		{name: "wrong shape", answer: answer{body: `{"ok":true,"messages":{"not":"a list"}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.answer)
			_, err := invoke(t, f.call, "slack_get_channel_history", `{"channel":"C012AB3CD"}`)
			ue := upstreamError(t, err)
			if ue.Code != switchboard.CodeUpstream || ue.Reason != "invalid_response" {
				t.Errorf("error = %+v, want upstream invalid_response", ue)
			}
			f.checkRequests(t)
		})
	}
}

// TestUnreachable checks that a Slack that cannot be reached is an upstream failure
// after the read's retries, with a message to try again.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	up := providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {})
	up.Close() // nothing listens at its address any more
	spec := Spec()
	call := providertest.NewCall(t, &spec, up.URL, testToken)
	_, err := invoke(t, call, "slack_get_users", `{}`)
	var se *switchboard.Error
	if !errors.As(err, &se) || se.Code != switchboard.CodeUpstream || !strings.Contains(se.Message, "could not be reached") {
		t.Fatalf("error = %v, want upstream: Slack could not be reached", err)
	}
	if strings.Contains(err.Error(), testToken) {
		t.Errorf("error %q holds the token", err)
	}
}
