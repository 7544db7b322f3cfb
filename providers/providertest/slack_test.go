package providertest

import (
	"net/http"
	"net/url"
	"testing"
)

func formRequest(path string, form url.Values) Request {
	return Request{
		Method: "POST", Path: path, Query: url.Values{},
		Header: http.Header{
			"Authorization": {"Bearer xoxb-test"},
			"Content-Type":  {"application/x-www-form-urlencoded"},
		},
		ContentType: "application/x-www-form-urlencoded",
		Body:        []byte(form.Encode()),
	}
}

func getRequest(path string, q url.Values) Request {
	return Request{Method: "GET", Path: path, Query: q, Header: http.Header{"Authorization": {"Bearer xoxb-test"}}}
}

func withoutAuth(r Request) Request {
	r.Header = r.Header.Clone()
	r.Header.Del("Authorization")
	return r
}

func TestSlackCheckRequest(t *testing.T) {
	t.Parallel()
	d := SlackDescription(t)
	t.Logf("Slack description: %d operations, loaded in %v", len(d.byID), d.load)
	jsonPost := jsonRequest("POST", "/chat.postMessage", `{"channel":"C123","text":"hi","unfurl_links":false}`)
	jsonPost.Header.Set("Authorization", "Bearer xoxb-test")
	tests := []struct {
		name     string
		req      Request
		wantID   string
		wantErrs []string
	}{
		{
			name:   "chat.postMessage form POST",
			req:    formRequest("/chat.postMessage", url.Values{"channel": {"C123"}, "text": {"hello"}, "thread_ts": {"1700000000.000100"}}),
			wantID: "chat_postMessage",
		},
		{
			name:   "chat.postMessage under the /api base path",
			req:    formRequest("/api/chat.postMessage", url.Values{"channel": {"C123"}, "text": {"hello"}}),
			wantID: "chat_postMessage",
		},
		{
			name:   "chat.postMessage JSON POST",
			req:    jsonPost,
			wantID: "chat_postMessage",
		},
		{
			name:   "conversations.list GET",
			req:    getRequest("/conversations.list", url.Values{"limit": {"100"}, "types": {"public_channel,private_channel"}, "cursor": {"dXNlcjpVMDYxTkZUVDI="}}),
			wantID: "conversations_list",
		},
		{
			name:   "token as a query parameter",
			req:    withoutAuth(getRequest("/conversations.history", url.Values{"channel": {"C123"}, "token": {"xoxb-test"}})),
			wantID: "conversations_history",
		},
		{
			name:     "bogus method",
			req:      formRequest("/chat.teleport", url.Values{"channel": {"C123"}}),
			wantErrs: []string{"Slack API", "/chat.teleport", "matches no operation"},
		},
		{
			name:     "GET of a POST method",
			req:      getRequest("/chat.postMessage", url.Values{"channel": {"C123"}}),
			wantErrs: []string{"not with method GET"},
		},
		{
			name:     "form missing a required field",
			req:      formRequest("/chat.postMessage", url.Values{"text": {"hello"}}),
			wantID:   "chat_postMessage",
			wantErrs: []string{"chat_postMessage", `"channel"`},
		},
		{
			name:     "misspelt form field",
			req:      formRequest("/chat.postMessage", url.Values{"channel": {"C123"}, "text": {"hi"}, "thread": {"1.2"}}),
			wantID:   "chat_postMessage",
			wantErrs: []string{`body field "thread" is not in the request body schema`},
		},
		{
			name:     "wrong form field type",
			req:      formRequest("/chat.postMessage", url.Values{"channel": {"C123"}, "text": {"hi"}, "unfurl_links": {"maybe"}}),
			wantID:   "chat_postMessage",
			wantErrs: []string{"unfurl_links"},
		},
		{
			name:   "token as a form field",
			req:    withoutAuth(formRequest("/chat.postMessage", url.Values{"channel": {"C123"}, "text": {"hi"}, "token": {"xoxb-test"}})),
			wantID: "chat_postMessage",
		},
		{
			name:     "wrong query parameter type",
			req:      getRequest("/conversations.list", url.Values{"limit": {"lots"}}),
			wantID:   "conversations_list",
			wantErrs: []string{"conversations_list", `query parameter "limit"`},
		},
		{
			name:     "undeclared query parameter",
			req:      getRequest("/conversations.list", url.Values{"channel_types": {"im"}}),
			wantID:   "conversations_list",
			wantErrs: []string{`query parameter "channel_types" is not a parameter`},
		},
		{
			name:     "no token at all",
			req:      withoutAuth(formRequest("/chat.postMessage", url.Values{"channel": {"C123"}, "text": {"hello"}})),
			wantID:   "chat_postMessage",
			wantErrs: []string{"no token", "Authorization: Bearer"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var id string
			rec := record(t, func(tb testing.TB) { id = d.CheckRequest(tb, tt.req) })
			if id != tt.wantID {
				t.Errorf("CheckRequest() = %q, want %q", id, tt.wantID)
			}
			assertFailures(t, rec, tt.wantErrs)
		})
	}
}

func TestSlackCheckResponse(t *testing.T) {
	t.Parallel()
	d := SlackDescription(t)
	tests := []struct {
		name     string
		op       string
		status   int
		body     string
		wantErrs []string
	}{
		{
			name:   "postMessage ok",
			op:     "chat_postMessage",
			status: 200,
			body: `{"ok":true,"channel":"C1234567890","ts":"1503435956.000247",
			  "message":{"type":"message","text":"hello","user":"U0123456789","ts":"1503435956.000247"}}`,
		},
		{
			name:   "error answer",
			op:     "chat_postMessage",
			status: 200,
			body:   `{"ok":false,"error":"channel_not_found"}`,
		},
		{
			name:   "conversations.list ok",
			op:     "conversations_list",
			status: 200,
			body:   `{"ok":true,"channels":[],"response_metadata":{"next_cursor":""}}`,
		},
		{
			name:     "field Slack never sends",
			op:       "chat_postMessage",
			status:   200,
			body:     `{"ok":true,"channel":"C1234567890","ts":"1503435956.000247","message":{"type":"message","text":"hi","user":"U0123456789","ts":"1503435956.000247"},"extra":1}`,
			wantErrs: []string{"chat_postMessage", "extra"},
		},
		{
			name:     "channels is not a list",
			op:       "conversations_list",
			status:   200,
			body:     `{"ok":true,"channels":null}`,
			wantErrs: []string{"conversations_list", "channels"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := record(t, func(tb testing.TB) { d.CheckResponse(tb, tt.op, tt.status, []byte(tt.body)) })
			assertFailures(t, rec, tt.wantErrs)
		})
	}
}
