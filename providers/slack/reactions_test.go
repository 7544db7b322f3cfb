package slack

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

func TestAddReaction(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     string
		answers  []answer
		wantName string
		want     ReactionOutput
		wantCode switchboard.Code
		// attempts is how many requests reach Slack.
		attempts int
	}{
		{
			name:     "added",
			args:     `{"channel":"C012AB3CD","timestamp":"1712345678.123456","name":"white_check_mark"}`,
			answers:  []answer{{body: `{"ok":true}`}},
			wantName: "white_check_mark",
			want:     ReactionOutput{Channel: "C012AB3CD", Timestamp: "1712345678.123456", Name: "white_check_mark"},
			attempts: 1,
		},
		{
			name:     "colons are dropped",
			args:     `{"channel":"C012AB3CD","timestamp":"1712345678.123456","name":":thumbsup::skin-tone-2:"}`,
			answers:  []answer{{body: `{"ok":true}`}},
			wantName: "thumbsup::skin-tone-2",
			want:     ReactionOutput{Channel: "C012AB3CD", Timestamp: "1712345678.123456", Name: "thumbsup::skin-tone-2"},
			attempts: 1,
		},
		{
			name:     "already there is a success",
			args:     `{"channel":"C012AB3CD","timestamp":"1712345678.123456","name":"eyes"}`,
			answers:  []answer{{body: `{"ok":false,"error":"already_reacted"}`}},
			wantName: "eyes",
			want:     ReactionOutput{Channel: "C012AB3CD", Timestamp: "1712345678.123456", Name: "eyes", AlreadyReacted: true},
			attempts: 1,
		},
		{
			// Idempotent, so retried: the first attempt may have landed, and the retry
			// then answers already_reacted, which is still a success.
			name:     "retried after a 503",
			args:     `{"channel":"C012AB3CD","timestamp":"1712345678.123456","name":"eyes"}`,
			answers:  []answer{{status: 503, header: map[string]string{"Content-Type": "text/plain"}, body: "upstream unavailable"}, {body: `{"ok":false,"error":"already_reacted"}`}},
			wantName: "eyes",
			want:     ReactionOutput{Channel: "C012AB3CD", Timestamp: "1712345678.123456", Name: "eyes", AlreadyReacted: true},
			attempts: 2,
		},
		{
			name:     "unknown emoji",
			args:     `{"channel":"C012AB3CD","timestamp":"1712345678.123456","name":"not_an_emoji"}`,
			answers:  []answer{{body: `{"ok":false,"error":"invalid_name"}`}},
			wantName: "not_an_emoji",
			wantCode: switchboard.CodeInvalid,
			attempts: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.answers...)
			got, err := invoke(t, f.call, "slack_add_reaction", tt.args)
			if tt.wantCode != "" {
				if codeOf(err) != tt.wantCode {
					t.Fatalf("error = %v, want code %s", err, tt.wantCode)
				}
			} else {
				if err != nil {
					t.Fatalf("invoke: %v", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("output (-want +got):\n%s", diff)
				}
				checkOutput(t, tool(t, "slack_add_reaction"), got)
			}
			if n := len(f.up.Requests()); n != tt.attempts {
				t.Errorf("attempts = %d, want %d", n, tt.attempts)
			}
			// Every attempt, the retry too, carries the whole form.
			for _, r := range f.up.Requests() {
				wantRequest{method: http.MethodPost, path: "/reactions.add",
					form: map[string]string{"channel": "C012AB3CD", "timestamp": "1712345678.123456", "name": tt.wantName}}.check(t, r)
			}
			for _, id := range f.checkRequests(t) {
				if id != "reactions_add" {
					t.Errorf("operation = %s, want reactions_add", id)
				}
			}
			last := tt.answers[len(tt.answers)-1]
			providertest.SlackDescription(t).CheckResponse(t, "reactions_add", http.StatusOK, []byte(last.body))
		})
	}
}
