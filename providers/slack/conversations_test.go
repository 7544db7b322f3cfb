package slack

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// Canned answers, shaped like the examples on Slack's method pages and checked against
// the response schemas of Slack's API description.
const (
	conversationsListPage1 = `{"ok":true,"channels":[
		{"id":"C012AB3CD","name":"general","is_channel":true,"is_group":false,"is_im":false,"is_mpim":false,"is_private":false,
		 "created":1449252889,"creator":"U012A3CDE","is_archived":false,"is_general":true,"unlinked":0,"name_normalized":"general",
		 "is_shared":false,"is_ext_shared":false,"is_org_shared":false,"pending_shared":[],"is_pending_ext_shared":false,
		 "is_member":true,"topic":{"value":"Company-wide announcements and work-based matters","creator":"","last_set":0},
		 "purpose":{"value":"This channel is for workspace-wide communication and announcements.","creator":"U012A3CDE","last_set":1449709364},
		 "previous_names":[],"num_members":4},
		{"id":"C061EG9T2","name":"random","is_channel":true,"is_group":false,"is_im":false,"is_mpim":false,"is_private":false,
		 "created":1449252889,"creator":"U061F7AUR","is_archived":false,"is_general":false,"unlinked":0,"name_normalized":"random",
		 "is_shared":false,"is_ext_shared":false,"is_org_shared":false,"pending_shared":[],"is_pending_ext_shared":false,
		 "is_member":false,"topic":{"value":"Non-work banter and water cooler conversation","creator":"","last_set":0},
		 "purpose":{"value":"A place for non-work-related flimflam.","creator":"","last_set":0},"previous_names":[],"num_members":4}
	],"response_metadata":{"next_cursor":"dGVhbTpDMDYxRkE1UEI="}}`
	conversationsListPage2 = `{"ok":true,"channels":[
		{"id":"C0G9QKBBL","name":"deploys","is_channel":true,"is_group":false,"is_im":false,"is_mpim":false,"is_private":true,
		 "created":1449709280,"creator":"U061F7AUR","is_archived":false,"is_general":false,"unlinked":0,"name_normalized":"deploys",
		 "is_shared":false,"is_ext_shared":false,"is_org_shared":false,"pending_shared":[],"is_pending_ext_shared":false,
		 "is_member":true,"topic":{"value":"","creator":"","last_set":0},"purpose":{"value":"Release notes","creator":"U061F7AUR","last_set":1449709280},
		 "previous_names":["releases"],"num_members":2}
	],"response_metadata":{"next_cursor":""}}`
	historyOK = `{"ok":true,"messages":[
		{"type":"message","user":"U012AB3CDE","text":"Deploy of api v2.3.1 finished :tada:","ts":"1712345678.123456",
		 "thread_ts":"1712345678.123456","reply_count":2,"reply_users_count":1,"latest_reply":"1712345699.000200",
		 "reply_users":["U061F7AUR"],"subscribed":false,"team":"T012AB3C4D",
		 "reactions":[{"name":"tada","users":["U061F7AUR","U012AB3CDE"],"count":2}]},
		{"type":"message","subtype":"bot_message","text":"Build #418 passed","ts":"1712345600.000100","bot_id":"B0789IJKLM","username":"ci"},
		{"type":"message","subtype":"channel_join","user":"U061F7AUR","text":"<@U061F7AUR> has joined the channel","ts":"1712340000.000300"}
	],"has_more":true,"pin_count":0,"channel_actions_ts":null,"channel_actions_count":0,
	"response_metadata":{"next_cursor":"bmV4dF90czoxNzEyMzQwMDAwMDAwMzAw"}}`
	repliesOK = `{"ok":true,"messages":[
		{"type":"message","user":"U012AB3CDE","text":"Deploy of api v2.3.1 finished :tada:","thread_ts":"1712345678.123456",
		 "reply_count":2,"subscribed":true,"last_read":"1712345699.000200","unread_count":0,"ts":"1712345678.123456"},
		{"type":"message","user":"U061F7AUR","text":"Thanks! Any migrations?","thread_ts":"1712345678.123456",
		 "parent_user_id":"U012AB3CDE","ts":"1712345690.000100"},
		{"type":"message","user":"U061F7AUR","text":"Never mind, found them.","thread_ts":"1712345678.123456",
		 "parent_user_id":"U012AB3CDE","ts":"1712345699.000200"}
	],"has_more":false}`
)

func TestListChannels(t *testing.T) {
	t.Parallel()
	f := newFake(t, answer{body: conversationsListPage1}, answer{body: conversationsListPage2})

	got1, err := invoke(t, f.call, "slack_list_channels", `{}`)
	if err != nil {
		t.Fatalf("page 1: %v", err)
	}
	want1 := ListChannelsOutput{
		Channels: []Channel{
			{ID: "C012AB3CD", Name: "general", IsMember: true, Topic: "Company-wide announcements and work-based matters",
				Purpose: "This channel is for workspace-wide communication and announcements.", NumMembers: 4, Created: 1449252889},
			{ID: "C061EG9T2", Name: "random", Topic: "Non-work banter and water cooler conversation",
				Purpose: "A place for non-work-related flimflam.", NumMembers: 4, Created: 1449252889},
		},
		NextCursor: providers.EncodeCursor("dGVhbTpDMDYxRkE1UEI="),
	}
	if diff := cmp.Diff(want1, got1); diff != "" {
		t.Errorf("page 1 (-want +got):\n%s", diff)
	}
	wantRequest{method: http.MethodGet, path: "/conversations.list",
		query: map[string]string{"types": "public_channel", "exclude_archived": "true", "limit": "30"}}.check(t, f.up.Last(t))

	got2, err := invoke(t, f.call, "slack_list_channels",
		`{"types":"private_channel","exclude_archived":false,"limit":50,"cursor":"`+want1.NextCursor+`"}`)
	if err != nil {
		t.Fatalf("page 2: %v", err)
	}
	want2 := ListChannelsOutput{Channels: []Channel{
		{ID: "C0G9QKBBL", Name: "deploys", IsPrivate: true, IsMember: true, Purpose: "Release notes", NumMembers: 2, Created: 1449709280},
	}}
	if diff := cmp.Diff(want2, got2); diff != "" {
		t.Errorf("page 2 (-want +got):\n%s", diff)
	}
	// The second call sends Slack's own cursor back.
	wantRequest{method: http.MethodGet, path: "/conversations.list",
		query: map[string]string{"types": "private_channel", "exclude_archived": "false", "limit": "50", "cursor": "dGVhbTpDMDYxRkE1UEI="}}.check(t, f.up.Last(t))

	if diff := cmp.Diff([]string{"conversations_list", "conversations_list"}, f.checkRequests(t)); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	desc := providertest.SlackDescription(t)
	desc.CheckResponse(t, "conversations_list", http.StatusOK, []byte(conversationsListPage1))
	desc.CheckResponse(t, "conversations_list", http.StatusOK, []byte(conversationsListPage2))
	tl := tool(t, "slack_list_channels")
	checkOutput(t, tl, got1)
	checkOutput(t, tl, got2)
}

func TestListChannelsForeignCursor(t *testing.T) {
	t.Parallel()
	f := newFake(t, answer{body: conversationsListPage1})
	// A raw Slack cursor was not handed out by this hub: refused before anything is sent.
	_, err := invoke(t, f.call, "slack_list_channels", `{"cursor":"dGVhbTpDMDYxRkE1UEI="}`)
	var se *switchboard.Error
	if !errors.As(err, &se) || se.Code != switchboard.CodeInvalid || se.Field != "cursor" {
		t.Fatalf("error = %v, want invalid on field cursor", err)
	}
	if n := len(f.up.Requests()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

func TestGetChannelHistory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		args      string
		wantQuery map[string]string
	}{
		{name: "defaults", args: `{"channel":"C012AB3CD"}`, wantQuery: map[string]string{"channel": "C012AB3CD", "limit": "30"}},
		{
			name:      "time range and page",
			args:      `{"channel":"C012AB3CD","oldest":"1712300000.000000","latest":"1712400000","limit":5,"cursor":"` + providers.EncodeCursor("bmV4dF90czoxNzEy") + `"}`,
			wantQuery: map[string]string{"channel": "C012AB3CD", "oldest": "1712300000.000000", "latest": "1712400000", "limit": "5", "cursor": "bmV4dF90czoxNzEy"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, answer{body: historyOK})
			got, err := invoke(t, f.call, "slack_get_channel_history", tt.args)
			if err != nil {
				t.Fatalf("invoke: %v", err)
			}
			want := MessagesOutput{
				Messages: []Message{
					{TS: "1712345678.123456", User: "U012AB3CDE", Text: "Deploy of api v2.3.1 finished :tada:", ThreadTS: "1712345678.123456", ReplyCount: 2,
						Reactions: []Reaction{{Name: "tada", Count: 2, Users: []string{"U061F7AUR", "U012AB3CDE"}}}},
					{TS: "1712345600.000100", BotID: "B0789IJKLM", Text: "Build #418 passed", Subtype: "bot_message"},
					{TS: "1712340000.000300", User: "U061F7AUR", Text: "<@U061F7AUR> has joined the channel", Subtype: "channel_join"},
				},
				NextCursor: providers.EncodeCursor("bmV4dF90czoxNzEyMzQwMDAwMDAwMzAw"),
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			wantRequest{method: http.MethodGet, path: "/conversations.history", query: tt.wantQuery}.check(t, f.up.Last(t))
			if diff := cmp.Diff([]string{"conversations_history"}, f.checkRequests(t)); diff != "" {
				t.Errorf("operations (-want +got):\n%s", diff)
			}
			providertest.SlackDescription(t).CheckResponse(t, "conversations_history", http.StatusOK, withoutResponseMetadata(t, historyOK))
			checkOutput(t, tool(t, "slack_get_channel_history"), got)
		})
	}
}

func TestGetThreadReplies(t *testing.T) {
	t.Parallel()
	f := newFake(t, answer{body: repliesOK})
	got, err := invoke(t, f.call, "slack_get_thread_replies", `{"channel":"C012AB3CD","ts":"1712345678.123456","limit":100}`)
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	want := MessagesOutput{Messages: []Message{
		{TS: "1712345678.123456", User: "U012AB3CDE", Text: "Deploy of api v2.3.1 finished :tada:", ThreadTS: "1712345678.123456", ReplyCount: 2},
		{TS: "1712345690.000100", User: "U061F7AUR", Text: "Thanks! Any migrations?", ThreadTS: "1712345678.123456"},
		{TS: "1712345699.000200", User: "U061F7AUR", Text: "Never mind, found them.", ThreadTS: "1712345678.123456"},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	wantRequest{method: http.MethodGet, path: "/conversations.replies",
		query: map[string]string{"channel": "C012AB3CD", "ts": "1712345678.123456", "limit": "100"}}.check(t, f.up.Last(t))
	if diff := cmp.Diff([]string{"conversations_replies"}, f.checkRequests(t)); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	providertest.SlackDescription(t).CheckResponse(t, "conversations_replies", http.StatusOK, []byte(repliesOK))
	checkOutput(t, tool(t, "slack_get_thread_replies"), got)
}

// withoutResponseMetadata drops response_metadata from a conversations.history answer.
// Slack's description declares no response_metadata there (and forbids additional
// properties), yet the method's documentation shows it, and its next_cursor is how
// conversations.history pages (https://api.slack.com/methods/conversations.history#pagination).
// The rest of the answer is still checked against the description.
func withoutResponseMetadata(t *testing.T, body string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("canned answer: %v", err)
	}
	if _, ok := m["response_metadata"]; !ok {
		t.Fatalf("canned answer has no response_metadata")
	}
	delete(m, "response_metadata")
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("canned answer: %v", err)
	}
	return out
}
