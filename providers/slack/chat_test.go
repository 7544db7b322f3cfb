package slack

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers/providertest"
)

const (
	postMessageOK = `{"ok":true,"channel":"C012AB3CD","ts":"1712345702.000300","message":{
		"bot_id":"B0789IJKLM","type":"message","text":"Deploy finished: <https://ci.acme.dev/418|build 418>","user":"U0456EFGH",
		"ts":"1712345702.000300","team":"T0123ABCDE"}}`
	replyOK = `{"ok":true,"channel":"C012AB3CD","ts":"1712345710.000400","message":{
		"bot_id":"B0789IJKLM","type":"message","text":"On it","user":"U0456EFGH","ts":"1712345710.000400",
		"team":"T0123ABCDE","thread_ts":"1712345678.123456","parent_user_id":"U012AB3CDE"}}`
)

func TestPostMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		tool     string
		args     string
		answer   string
		wantForm map[string]string
		want     PostedMessage
	}{
		{
			name:     "post",
			tool:     "slack_post_message",
			args:     `{"channel":"C012AB3CD","text":"Deploy finished: <https://ci.acme.dev/418|build 418>"}`,
			answer:   postMessageOK,
			wantForm: map[string]string{"channel": "C012AB3CD", "text": "Deploy finished: <https://ci.acme.dev/418|build 418>"},
			want:     PostedMessage{Channel: "C012AB3CD", TS: "1712345702.000300", Text: "Deploy finished: <https://ci.acme.dev/418|build 418>"},
		},
		{
			name:     "post in a thread without unfurling",
			tool:     "slack_post_message",
			args:     `{"channel":"#deploys","text":"On it","thread_ts":"1712345678.123456","unfurl_links":false,"unfurl_media":false}`,
			answer:   replyOK,
			wantForm: map[string]string{"channel": "#deploys", "text": "On it", "thread_ts": "1712345678.123456", "unfurl_links": "false", "unfurl_media": "false"},
			want:     PostedMessage{Channel: "C012AB3CD", TS: "1712345710.000400", ThreadTS: "1712345678.123456", Text: "On it"},
		},
		{
			name:     "reply",
			tool:     "slack_reply_to_thread",
			args:     `{"channel":"C012AB3CD","thread_ts":"1712345678.123456","text":"On it"}`,
			answer:   replyOK,
			wantForm: map[string]string{"channel": "C012AB3CD", "thread_ts": "1712345678.123456", "text": "On it"},
			want:     PostedMessage{Channel: "C012AB3CD", TS: "1712345710.000400", ThreadTS: "1712345678.123456", Text: "On it"},
		},
		{
			name:     "reply broadcast to the channel",
			tool:     "slack_reply_to_thread",
			args:     `{"channel":"C012AB3CD","thread_ts":"1712345678.123456","text":"On it","reply_broadcast":true}`,
			answer:   replyOK,
			wantForm: map[string]string{"channel": "C012AB3CD", "thread_ts": "1712345678.123456", "text": "On it", "reply_broadcast": "true"},
			want:     PostedMessage{Channel: "C012AB3CD", TS: "1712345710.000400", ThreadTS: "1712345678.123456", Text: "On it"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, answer{body: tt.answer})
			got, err := invoke(t, f.call, tt.tool, tt.args)
			if err != nil {
				t.Fatalf("invoke: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			wantRequest{method: http.MethodPost, path: "/chat.postMessage", form: tt.wantForm}.check(t, f.up.Last(t))
			if diff := cmp.Diff([]string{"chat_postMessage"}, f.checkRequests(t)); diff != "" {
				t.Errorf("operations (-want +got):\n%s", diff)
			}
			providertest.SlackDescription(t).CheckResponse(t, "chat_postMessage", http.StatusOK, []byte(tt.answer))
			checkOutput(t, tool(t, tt.tool), got)
		})
	}
}
