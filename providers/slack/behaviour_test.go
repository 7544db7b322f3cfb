package slack

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// caseArgs returns the arguments operationCases uses for a tool.
func caseArgs(t *testing.T, tool string) string {
	t.Helper()
	for _, c := range operationCases(t) {
		if c.tool == tool {
			return c.args
		}
	}
	t.Fatalf("no case for %s", tool)
	return ""
}

// TestMethodErrors answers each operation with the ok:false codes its method page
// documents and checks what the agent is told. Each answer is checked against the
// method's error schema in Slack's description unless undescribed says why not.
func TestMethodErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		tool        string
		operation   string // the description's operationId
		slackCode   string
		undescribed string
		wantCode    switchboard.Code
		wantMessage string
	}{
		{name: "editing someone else's message", tool: "slack_update_message", operation: "chat_update", slackCode: "cant_update_message",
			wantCode: switchboard.CodeForbidden, wantMessage: "messages it posted itself"},
		{name: "edit window closed", tool: "slack_update_message", operation: "chat_update", slackCode: "edit_window_closed",
			wantCode: switchboard.CodeForbidden, wantMessage: "editing"},
		{name: "edited message gone", tool: "slack_update_message", operation: "chat_update", slackCode: "message_not_found",
			wantCode: switchboard.CodeNotFound},
		{name: "deleting someone else's message", tool: "slack_delete_message", operation: "chat_delete", slackCode: "cant_delete_message",
			wantCode: switchboard.CodeForbidden, wantMessage: "messages it posted itself"},
		{name: "compliance exports", tool: "slack_delete_message", operation: "chat_delete", slackCode: "compliance_exports_prevent_deletion",
			wantCode: switchboard.CodeForbidden},
		{name: "scheduled in the past by Slack's clock", tool: "slack_schedule_message", operation: "chat_scheduleMessage", slackCode: "time_in_past",
			wantCode: switchboard.CodeInvalid, wantMessage: "post_at is in the past"},
		{name: "scheduled too far", tool: "slack_schedule_message", operation: "chat_scheduleMessage", slackCode: "time_too_far",
			wantCode: switchboard.CodeInvalid, wantMessage: "120 days"},
		{name: "ephemeral to a non-member", tool: "slack_post_ephemeral", operation: "chat_postEphemeral", slackCode: "user_not_in_channel",
			wantCode: switchboard.CodeNotFound, wantMessage: "not a member of the channel"},
		{name: "permalink of a missing message", tool: "slack_get_permalink", operation: "chat_getPermalink", slackCode: "message_not_found",
			wantCode: switchboard.CodeNotFound},
		{name: "channel name taken", tool: "slack_create_channel", operation: "conversations_create", slackCode: "name_taken",
			wantCode: switchboard.CodeConflict, wantMessage: "pick another name"},
		{name: "bad channel name is about the channel, not an emoji", tool: "slack_create_channel", operation: "conversations_create", slackCode: "invalid_name",
			wantCode: switchboard.CodeInvalid, wantMessage: "not a valid Slack channel name"},
		{name: "bad new name", tool: "slack_rename_channel", operation: "conversations_rename", slackCode: "invalid_name",
			wantCode: switchboard.CodeInvalid, wantMessage: "not a valid Slack channel name"},
		{name: "name too long", tool: "slack_rename_channel", operation: "conversations_rename", slackCode: "invalid_name_maxlength",
			wantCode: switchboard.CodeInvalid, wantMessage: "80"},
		{name: "general cannot be archived", tool: "slack_archive_channel", operation: "conversations_archive", slackCode: "cant_archive_general",
			wantCode: switchboard.CodeForbidden},
		{name: "guest may not archive", tool: "slack_archive_channel", operation: "conversations_archive", slackCode: "user_is_restricted",
			wantCode: switchboard.CodeForbidden, wantMessage: "guest"},
		{name: "already a member", tool: "slack_invite_to_channel", operation: "conversations_invite", slackCode: "already_in_channel",
			wantCode: switchboard.CodeConflict, wantMessage: "invite only the others"},
		{name: "inviting oneself", tool: "slack_invite_to_channel", operation: "conversations_invite", slackCode: "cant_invite_self",
			wantCode: switchboard.CodeInvalid},
		{name: "topic too long", tool: "slack_set_channel_topic", operation: "conversations_setTopic", slackCode: "too_long",
			wantCode: switchboard.CodeInvalid, wantMessage: "250"},
		{name: "purpose in an archived channel", tool: "slack_set_channel_purpose", operation: "conversations_setPurpose", slackCode: "is_archived",
			wantCode: switchboard.CodeConflict},
		{name: "no one has that email", tool: "slack_get_user_by_email", operation: "users_lookupByEmail", slackCode: "users_not_found",
			wantCode: switchboard.CodeNotFound, wantMessage: "email"},
		{name: "pin of a missing message", tool: "slack_pin_message", operation: "pins_add", slackCode: "message_not_found",
			wantCode: switchboard.CodeNotFound},
		{name: "not pinnable", tool: "slack_pin_message", operation: "pins_add", slackCode: "not_pinnable",
			wantCode: switchboard.CodeInvalid},
		{name: "pins of a missing channel", tool: "slack_list_pins", operation: "pins_list", slackCode: "channel_not_found",
			wantCode: switchboard.CodeNotFound},
		{name: "unknown emoji to remove", tool: "slack_remove_reaction", operation: "reactions_remove", slackCode: "invalid_name",
			wantCode: switchboard.CodeInvalid, wantMessage: "emoji"},
		{name: "search with a bot token", tool: "slack_search_messages", operation: "search_messages", slackCode: "not_allowed_token_type",
			wantCode: switchboard.CodeForbidden, wantMessage: "connect Slack again with a user token"},
	}
	desc := providertest.SlackDescription(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := fmt.Sprintf(`{"ok":false,"error":%q}`, tt.slackCode)
			f := newFake(t, answer{body: body})
			out, err := invoke(t, f.call, tt.tool, caseArgs(t, tt.tool))
			if err == nil {
				t.Fatalf("no error, output %+v", out)
			}
			ue := upstreamError(t, err)
			if codeOf(err) != tt.wantCode || ue.Reason != tt.slackCode {
				t.Errorf("error = %v (code %s), want code %s, reason %s", err, codeOf(err), tt.wantCode, tt.slackCode)
			}
			if !strings.Contains(ue.Message, tt.wantMessage) {
				t.Errorf("message = %q, want it to contain %q", ue.Message, tt.wantMessage)
			}
			if n := len(f.up.Requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
			if diff := cmp.Diff([]string{tt.operation}, f.checkRequests(t)); diff != "" {
				t.Errorf("operations (-want +got):\n%s", diff)
			}
			if tt.undescribed == "" {
				desc.CheckResponse(t, tt.operation, http.StatusOK, []byte(body))
			}
		})
	}
}

// TestAlreadySo checks the operations for which Slack's "already so" answer means the
// caller's wish holds: a success that says nothing changed.
func TestAlreadySo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool      string
		operation string
		slackCode string
		want      any
	}{
		{tool: "slack_archive_channel", operation: "conversations_archive", slackCode: "already_archived",
			want: ArchiveChannelOutput{Channel: "C0APOLLO12", AlreadyArchived: true}},
		{tool: "slack_remove_reaction", operation: "reactions_remove", slackCode: "no_reaction",
			want: RemoveReactionOutput{Channel: "C012AB3CD", Timestamp: "1712345678.123456", Name: "eyes", AlreadyRemoved: true}},
		{tool: "slack_pin_message", operation: "pins_add", slackCode: "already_pinned",
			want: PinOutput{Channel: "C012AB3CD", Timestamp: "1712345678.123456"}},
		{tool: "slack_unpin_message", operation: "pins_remove", slackCode: "not_pinned",
			want: PinOutput{Channel: "C012AB3CD", Timestamp: "1712345678.123456"}},
	}
	desc := providertest.SlackDescription(t)
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			t.Parallel()
			body := fmt.Sprintf(`{"ok":false,"error":%q}`, tt.slackCode)
			// A 503 first: these operations are idempotent, so the client retries, and
			// the retry's "already so" is the success.
			f := newFake(t, answer{status: 503, header: map[string]string{"Content-Type": "text/plain"}, body: "unavailable"}, answer{body: body})
			got, err := invoke(t, f.call, tt.tool, caseArgs(t, tt.tool))
			if err != nil {
				t.Fatalf("invoke: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{tt.operation, tt.operation}, f.checkRequests(t)); diff != "" {
				t.Errorf("operations (-want +got):\n%s", diff)
			}
			desc.CheckResponse(t, tt.operation, http.StatusOK, []byte(body))
			checkOutput(t, tool(t, tt.tool), got)
		})
	}
}

// TestBadInputSendsNothing checks the inputs the schema cannot refuse: each is an
// invalid error naming the field and the reason, and nothing reaches Slack.
func TestBadInputSendsNothing(t *testing.T) {
	t.Parallel()
	now := time.Now()
	big := strings.Repeat("x", maxUploadBytes+1)
	tests := []struct {
		name       string
		tool, args string
		wantField  string
		wantReason string
	}{
		{name: "post_at in the past", tool: "slack_schedule_message",
			args:      fmt.Sprintf(`{"channel":"C012AB3CD","text":"hi","post_at":%d}`, now.Add(-time.Minute).Unix()),
			wantField: "post_at", wantReason: "not in the future"},
		{name: "post_at too far ahead", tool: "slack_schedule_message",
			args:      fmt.Sprintf(`{"channel":"C012AB3CD","text":"hi","post_at":%d}`, now.Add(121*24*time.Hour).Unix()),
			wantField: "post_at", wantReason: "120 days"},
		{name: "a user that is no user ID", tool: "slack_invite_to_channel", args: `{"channel":"C0APOLLO12","users":["U012AB3CDE","@jane"]}`,
			wantField: "users", wantReason: `"@jane"`},
		{name: "content and content_base64", tool: "slack_upload_file", args: `{"filename":"a.txt","content":"a","content_base64":"YQ=="}`,
			wantField: "content", wantReason: "not both"},
		{name: "no content", tool: "slack_upload_file", args: `{"filename":"a.txt"}`,
			wantField: "content", wantReason: "missing"},
		{name: "empty content", tool: "slack_upload_file", args: `{"filename":"a.txt","content":""}`,
			wantField: "content", wantReason: "empty"},
		{name: "not base64", tool: "slack_upload_file", args: `{"filename":"a.bin","content_base64":"not base64!"}`,
			wantField: "content_base64", wantReason: "not standard base64"},
		{name: "text too big", tool: "slack_upload_file", args: `{"filename":"a.txt","content":"` + big[:len(big)-4] + `éé"}`,
			wantField: "content", wantReason: fmt.Sprintf("holds %d bytes", maxUploadBytes+1)},
		{name: "base64 too big", tool: "slack_upload_file", args: `{"filename":"a.bin","content_base64":"` + strings.Repeat("AAAA", maxUploadBytes/3+1) + `"}`,
			wantField: "content_base64", wantReason: "at most 4194304 bytes"},
		{name: "comment without channel", tool: "slack_upload_file", args: `{"filename":"a.txt","content":"a","initial_comment":"see"}`,
			wantField: "initial_comment", wantReason: "needs channel"},
		{name: "thread without channel", tool: "slack_upload_file", args: `{"filename":"a.txt","content":"a","thread_ts":"1712345678.123456"}`,
			wantField: "thread_ts", wantReason: "needs channel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, answer{body: okOnly})
			_, err := invoke(t, f.call, tt.tool, tt.args)
			var se *switchboard.Error
			if !errors.As(err, &se) || se.Code != switchboard.CodeInvalid || se.Field != tt.wantField || !strings.Contains(se.Message, tt.wantReason) {
				t.Fatalf("error = %#v, want invalid on %s saying %q", err, tt.wantField, tt.wantReason)
			}
			if n := len(f.up.Requests()); n != 0 {
				t.Errorf("%d requests sent, want none", n)
			}
		})
	}
}
