package slack

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// apolloChannel is a conversation object as conversations.create, rename, invite,
// setTopic and setPurpose answer it, shaped like the examples on their method pages.
func apolloChannel(name, topic, purpose string, previous ...string) string {
	prev := "[]"
	if len(previous) > 0 {
		prev = `["` + strings.Join(previous, `","`) + `"]`
	}
	// An unset topic or purpose has no creator and was never set.
	creator := func(v string) string {
		if v == "" {
			return ""
		}
		return "U0456EFGH"
	}
	lastSet := func(v string, at int) int {
		if v == "" {
			return 0
		}
		return at
	}
	return fmt.Sprintf(`{"id":"C0APOLLO12","name":%q,"is_channel":true,"is_group":false,"is_im":false,"is_mpim":false,
		"is_private":true,"created":1712345000,"creator":"U0456EFGH","is_archived":false,"is_general":false,"unlinked":0,
		"name_normalized":%q,"is_shared":false,"is_ext_shared":false,"is_org_shared":false,"pending_shared":[],
		"is_pending_ext_shared":false,"is_member":true,"topic":{"value":%q,"creator":%q,"last_set":%d},
		"purpose":{"value":%q,"creator":%q,"last_set":%d},"previous_names":%s,"num_members":3}`,
		name, name, topic, creator(topic), lastSet(topic, 1712345100), purpose, creator(purpose), lastSet(purpose, 1712345200), prev)
}

// wantApollo is apolloChannel as the operations return it.
func wantApollo(name, topic, purpose string) Channel {
	return Channel{ID: "C0APOLLO12", Name: name, IsPrivate: true, IsMember: true, Topic: topic, Purpose: purpose, NumMembers: 3, Created: 1712345000}
}

const (
	chatUpdateOK = `{"ok":true,"channel":"C012AB3CD","ts":"1712345702.000300","text":"Deploy finished (edited)",
		"message":{"text":"Deploy finished (edited)"}}`
	chatDeleteOK    = `{"ok":true,"channel":"C012AB3CD","ts":"1712345702.000300"}`
	postEphemeralOK = `{"ok":true,"message_ts":"1712345710.000500"}`
	permalinkOK     = `{"ok":true,"channel":"C012AB3CD","permalink":"https://acme.slack.com/archives/C012AB3CD/p1712345678123456"}`
	usersLookupOK   = `{"ok":true,"user":` + userJane + `}`
	okOnly          = `{"ok":true}`
	runbookMessage  = `{"type":"message","user":"U012AB3CDE","text":"Runbook: restart api with make restart","ts":"1712345678.123456","pinned_to":["C012AB3CD"]}`
	pinsListOK      = `{"ok":true,"items":[{"type":"message","channel":"C012AB3CD","created":1712345800,"created_by":"U012AB3CDE","message":` + runbookMessage + `},
		{"type":"file","created":1712345700,"created_by":"U061F7AUR","file":{"id":"F0123ABCDE","name":"oncall.pdf","title":"On-call guide","created":1712345600,"user":"U061F7AUR"}}]}`
	uploadURLOK = `{"ok":true,"upload_url":"{{upstream}}/upload/v1/CwABAAAAXAoAAZnBgQ","file_id":"F07ABCDEFGH"}`
	uploadedOK  = `OK - 24`
	completeOK  = `{"ok":true,"files":[{"id":"F07ABCDEFGH","title":"Weekly sign-ups",
		"permalink":"https://acme.slack.com/files/U0456EFGH/F07ABCDEFGH/report.csv"}]}`
)

// searchOK is page page of pages of a search.messages answer, as its method page shows it.
func searchOK(page, pages int) string {
	return fmt.Sprintf(`{"ok":true,"query":"deploy failed","messages":{"total":3,
		"pagination":{"total_count":3,"page":%[1]d,"per_page":2,"page_count":%[2]d,"first":1,"last":2},
		"paging":{"count":2,"total":3,"page":%[1]d,"pages":%[2]d},
		"matches":[{"iid":"cb64bdaa-8c40-4b0b-9c05-3bd4e4b1f1f4","team":"T012AB3C4D","score":0,
		 "channel":{"id":"C012AB3CD","is_channel":true,"is_group":false,"is_im":false,"name":"ops","is_shared":false,
		  "is_org_shared":false,"is_ext_shared":false,"is_private":false,"is_mpim":false,"pending_shared":[],"is_pending_ext_shared":false},
		 "type":"message","user":"U012AB3CDE","username":"jane.doe","ts":"1712345678.123456","blocks":[],
		 "text":"deploy failed on api-3","permalink":"https://acme.slack.com/archives/C012AB3CD/p1712345678123456","no_reactions":true}]}}`, page, pages)
}

var wantSearchMatch = SearchMatch{Channel: "C012AB3CD", ChannelName: "ops", TS: "1712345678.123456", User: "U012AB3CDE",
	Username: "jane.doe", Text: "deploy failed on api-3", Permalink: "https://acme.slack.com/archives/C012AB3CD/p1712345678123456"}

// opCase runs one operation once against the fake: its arguments, Slack's answers in
// turn, the requests it must send and the output it must return.
type opCase struct {
	tool     string
	args     string
	answers  []answer
	requests []wantRequest
	// ops are the operations the requests match: the description's operationIds, or
	// the names of undescribedMethods.
	ops  []string
	want any
}

// operationCases holds one successful call of every Slack operation.
func operationCases(t *testing.T) []opCase {
	postAt := time.Now().Add(24 * time.Hour).Unix()
	historyNoMeta := string(withoutResponseMetadata(t, historyOK))
	const ch, ts = "C012AB3CD", "1712345678.123456"
	form := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	get := func(path string, q map[string]string) wantRequest {
		return wantRequest{method: http.MethodGet, path: path, query: q}
	}
	post := func(path string, f map[string]string) wantRequest {
		return wantRequest{method: http.MethodPost, path: path, form: f}
	}
	return []opCase{
		{tool: "slack_list_channels", args: `{}`, answers: []answer{{body: conversationsListPage2}},
			requests: []wantRequest{get("/conversations.list", form("types", "public_channel", "exclude_archived", "true", "limit", "30"))},
			ops:      []string{"conversations_list"},
			want: ListChannelsOutput{Channels: []Channel{{ID: "C0G9QKBBL", Name: "deploys", IsPrivate: true, IsMember: true,
				Purpose: "Release notes", NumMembers: 2, Created: 1449709280}}}},
		{tool: "slack_get_channel_history", args: `{"channel":"C012AB3CD","limit":3}`, answers: []answer{{body: historyNoMeta}},
			requests: []wantRequest{get("/conversations.history", form("channel", ch, "limit", "3"))},
			ops:      []string{"conversations_history"},
			want: MessagesOutput{Messages: []Message{
				{TS: ts, User: "U012AB3CDE", Text: "Deploy of api v2.3.1 finished :tada:", ThreadTS: ts, ReplyCount: 2,
					Reactions: []Reaction{{Name: "tada", Count: 2, Users: []string{"U061F7AUR", "U012AB3CDE"}}}},
				{TS: "1712345600.000100", BotID: "B0789IJKLM", Text: "Build #418 passed", Subtype: "bot_message"},
				{TS: "1712340000.000300", User: "U061F7AUR", Text: "<@U061F7AUR> has joined the channel", Subtype: "channel_join"},
			}}},
		{tool: "slack_get_thread_replies", args: `{"channel":"C012AB3CD","ts":"1712345678.123456"}`, answers: []answer{{body: repliesOK}},
			requests: []wantRequest{get("/conversations.replies", form("channel", ch, "ts", ts, "limit", "30"))},
			ops:      []string{"conversations_replies"},
			want: MessagesOutput{Messages: []Message{
				{TS: ts, User: "U012AB3CDE", Text: "Deploy of api v2.3.1 finished :tada:", ThreadTS: ts, ReplyCount: 2},
				{TS: "1712345690.000100", User: "U061F7AUR", Text: "Thanks! Any migrations?", ThreadTS: ts},
				{TS: "1712345699.000200", User: "U061F7AUR", Text: "Never mind, found them.", ThreadTS: ts},
			}}},
		{tool: "slack_post_message", args: `{"channel":"C012AB3CD","text":"Deploy finished: <https://ci.acme.dev/418|build 418>"}`,
			answers:  []answer{{body: postMessageOK}},
			requests: []wantRequest{post("/chat.postMessage", form("channel", ch, "text", "Deploy finished: <https://ci.acme.dev/418|build 418>"))},
			ops:      []string{"chat_postMessage"},
			want:     PostedMessage{Channel: ch, TS: "1712345702.000300", Text: "Deploy finished: <https://ci.acme.dev/418|build 418>"}},
		{tool: "slack_reply_to_thread", args: `{"channel":"C012AB3CD","thread_ts":"1712345678.123456","text":"On it"}`,
			answers:  []answer{{body: replyOK}},
			requests: []wantRequest{post("/chat.postMessage", form("channel", ch, "thread_ts", ts, "text", "On it"))},
			ops:      []string{"chat_postMessage"},
			want:     PostedMessage{Channel: ch, TS: "1712345710.000400", ThreadTS: ts, Text: "On it"}},
		{tool: "slack_add_reaction", args: `{"channel":"C012AB3CD","timestamp":"1712345678.123456","name":"eyes"}`,
			answers:  []answer{{body: okOnly}},
			requests: []wantRequest{post("/reactions.add", form("channel", ch, "timestamp", ts, "name", "eyes"))},
			ops:      []string{"reactions_add"},
			want:     ReactionOutput{Channel: ch, Timestamp: ts, Name: "eyes"}},
		{tool: "slack_get_users", args: `{}`, answers: []answer{{body: usersListOK}},
			requests: []wantRequest{get("/users.list", form("limit", "30"))},
			ops:      []string{"users_list"},
			want:     GetUsersOutput{Users: []User{wantJane, wantBot}, NextCursor: providers.EncodeCursor("dXNlcjpVMEc5V0ZYTlo=")}},
		{tool: "slack_get_user_profile", args: `{"user":"U012AB3CDE"}`, answers: []answer{{body: usersInfoOK}},
			requests: []wantRequest{get("/users.info", form("user", "U012AB3CDE"))},
			ops:      []string{"users_info"},
			want:     wantJane},
		{tool: "slack_update_message", args: `{"channel":"C012AB3CD","ts":"1712345702.000300","text":"Deploy finished (edited)"}`,
			answers:  []answer{{body: chatUpdateOK}},
			requests: []wantRequest{post("/chat.update", form("channel", ch, "ts", "1712345702.000300", "text", "Deploy finished (edited)"))},
			ops:      []string{"chat_update"},
			want:     UpdatedMessage{Channel: ch, TS: "1712345702.000300", Text: "Deploy finished (edited)"}},
		{tool: "slack_delete_message", args: `{"channel":"C012AB3CD","ts":"1712345702.000300"}`,
			answers:  []answer{{body: chatDeleteOK}},
			requests: []wantRequest{post("/chat.delete", form("channel", ch, "ts", "1712345702.000300"))},
			ops:      []string{"chat_delete"},
			want:     DeletedMessage{Channel: ch, TS: "1712345702.000300"}},
		{tool: "slack_schedule_message", args: fmt.Sprintf(`{"channel":"#standup","text":"Stand-up in 5 minutes","post_at":%d,"thread_ts":"1712345678.123456"}`, postAt),
			answers: []answer{{body: fmt.Sprintf(`{"ok":true,"channel":"C012AB3CD","scheduled_message_id":"Q1298393284","post_at":%d,
				"message":{"text":"Stand-up in 5 minutes","username":"switchboard","bot_id":"B0789IJKLM","type":"delayed_message",
				"user":"U0456EFGH","team":"T012AB3C4D"}}`, postAt)}},
			requests: []wantRequest{post("/chat.scheduleMessage", form("channel", "#standup", "text", "Stand-up in 5 minutes",
				"post_at", strconv.FormatInt(postAt, 10), "thread_ts", ts))},
			ops:  []string{"chat_scheduleMessage"},
			want: ScheduledMessage{ID: "Q1298393284", Channel: ch, PostAt: postAt}},
		{tool: "slack_post_ephemeral", args: `{"channel":"C012AB3CD","user":"U012AB3CDE","text":"Only you see this"}`,
			answers:  []answer{{body: postEphemeralOK}},
			requests: []wantRequest{post("/chat.postEphemeral", form("channel", ch, "user", "U012AB3CDE", "text", "Only you see this"))},
			ops:      []string{"chat_postEphemeral"},
			want:     EphemeralMessage{MessageTS: "1712345710.000500", Channel: ch, User: "U012AB3CDE"}},
		{tool: "slack_get_permalink", args: `{"channel":"C012AB3CD","message_ts":"1712345678.123456"}`,
			answers:  []answer{{body: permalinkOK}},
			requests: []wantRequest{get("/chat.getPermalink", form("channel", ch, "message_ts", ts))},
			ops:      []string{"chat_getPermalink"},
			want:     Permalink{Channel: ch, Permalink: "https://acme.slack.com/archives/C012AB3CD/p1712345678123456"}},
		{tool: "slack_create_channel", args: `{"name":"proj-apollo","is_private":true}`,
			answers:  []answer{{body: `{"ok":true,"channel":` + apolloChannel("proj-apollo", "", "") + `}`}},
			requests: []wantRequest{post("/conversations.create", form("name", "proj-apollo", "is_private", "true"))},
			ops:      []string{"conversations_create"},
			want:     wantApollo("proj-apollo", "", "")},
		{tool: "slack_archive_channel", args: `{"channel":"C0APOLLO12"}`, answers: []answer{{body: okOnly}},
			requests: []wantRequest{post("/conversations.archive", form("channel", "C0APOLLO12"))},
			ops:      []string{"conversations_archive"},
			want:     ArchiveChannelOutput{Channel: "C0APOLLO12"}},
		{tool: "slack_rename_channel", args: `{"channel":"C0APOLLO12","name":"proj-apollo-launch"}`,
			answers:  []answer{{body: `{"ok":true,"channel":` + apolloChannel("proj-apollo-launch", "", "", "proj-apollo") + `}`}},
			requests: []wantRequest{post("/conversations.rename", form("channel", "C0APOLLO12", "name", "proj-apollo-launch"))},
			ops:      []string{"conversations_rename"},
			want:     wantApollo("proj-apollo-launch", "", "")},
		{tool: "slack_invite_to_channel", args: `{"channel":"C0APOLLO12","users":["U012AB3CDE","U061F7AUR"]}`,
			answers:  []answer{{body: `{"ok":true,"channel":` + apolloChannel("proj-apollo", "", "") + `}`}},
			requests: []wantRequest{post("/conversations.invite", form("channel", "C0APOLLO12", "users", "U012AB3CDE,U061F7AUR"))},
			ops:      []string{"conversations_invite"},
			want:     wantApollo("proj-apollo", "", "")},
		{tool: "slack_set_channel_topic", args: `{"channel":"C0APOLLO12","topic":"Launch on Thursday"}`,
			answers:  []answer{{body: `{"ok":true,"channel":` + apolloChannel("proj-apollo", "Launch on Thursday", "") + `}`}},
			requests: []wantRequest{post("/conversations.setTopic", form("channel", "C0APOLLO12", "topic", "Launch on Thursday"))},
			ops:      []string{"conversations_setTopic"},
			want:     wantApollo("proj-apollo", "Launch on Thursday", "")},
		{tool: "slack_set_channel_purpose", args: `{"channel":"C0APOLLO12","purpose":"Coordination of the Apollo launch"}`,
			answers:  []answer{{body: `{"ok":true,"channel":` + apolloChannel("proj-apollo", "", "Coordination of the Apollo launch") + `}`}},
			requests: []wantRequest{post("/conversations.setPurpose", form("channel", "C0APOLLO12", "purpose", "Coordination of the Apollo launch"))},
			ops:      []string{"conversations_setPurpose"},
			want:     wantApollo("proj-apollo", "", "Coordination of the Apollo launch")},
		{tool: "slack_get_user_by_email", args: `{"email":"jane@acme.example"}`, answers: []answer{{body: usersLookupOK}},
			requests: []wantRequest{get("/users.lookupByEmail", form("email", "jane@acme.example"))},
			ops:      []string{"users_lookupByEmail"},
			want:     wantJane},
		{tool: "slack_remove_reaction", args: `{"channel":"C012AB3CD","timestamp":"1712345678.123456","name":":eyes:"}`,
			answers:  []answer{{body: okOnly}},
			requests: []wantRequest{post("/reactions.remove", form("channel", ch, "timestamp", ts, "name", "eyes"))},
			ops:      []string{"reactions_remove"},
			want:     RemoveReactionOutput{Channel: ch, Timestamp: ts, Name: "eyes"}},
		{tool: "slack_pin_message", args: `{"channel":"C012AB3CD","timestamp":"1712345678.123456"}`, answers: []answer{{body: okOnly}},
			requests: []wantRequest{post("/pins.add", form("channel", ch, "timestamp", ts))},
			ops:      []string{"pins_add"},
			want:     PinOutput{Channel: ch, Timestamp: ts, Changed: true}},
		{tool: "slack_unpin_message", args: `{"channel":"C012AB3CD","timestamp":"1712345678.123456"}`, answers: []answer{{body: okOnly}},
			requests: []wantRequest{post("/pins.remove", form("channel", ch, "timestamp", ts))},
			ops:      []string{"pins_remove"},
			want:     PinOutput{Channel: ch, Timestamp: ts, Changed: true}},
		{tool: "slack_list_pins", args: `{"channel":"C012AB3CD"}`, answers: []answer{{body: pinsListOK}},
			requests: []wantRequest{get("/pins.list", form("channel", ch))},
			ops:      []string{"pins_list"},
			want: ListPinsOutput{Pins: []Pin{
				{Type: "message", Created: 1712345800, CreatedBy: "U012AB3CDE",
					Message: &Message{TS: ts, User: "U012AB3CDE", Text: "Runbook: restart api with make restart"}},
				{Type: "file", Created: 1712345700, CreatedBy: "U061F7AUR", FileID: "F0123ABCDE", FileName: "oncall.pdf"},
			}}},
		{tool: "slack_search_messages", args: `{"query":"deploy failed in:#ops","sort":"timestamp","limit":2}`,
			answers:  []answer{{body: searchOK(1, 2)}},
			requests: []wantRequest{get("/search.messages", form("query", "deploy failed in:#ops", "sort", "timestamp", "count", "2", "page", "1"))},
			ops:      []string{"search_messages"},
			want: SearchMessagesOutput{Matches: []SearchMatch{wantSearchMatch}, Total: 3,
				NextCursor: providers.EncodeCursor("count=2&page=2")}},
		{tool: "slack_upload_file",
			args: `{"filename":"report.csv","content":"week,signups\n2024-18,42\n","title":"Weekly sign-ups","channel":"C012AB3CD",` +
				`"initial_comment":"This week's numbers","thread_ts":"1712345678.123456"}`,
			answers: []answer{{body: uploadURLOK}, {header: map[string]string{"Content-Type": "text/plain"}, body: uploadedOK}, {body: completeOK}},
			requests: []wantRequest{
				post("/files.getUploadURLExternal", form("filename", "report.csv", "length", "24")),
				{method: http.MethodPost, path: "/upload/v1/CwABAAAAXAoAAZnBgQ", contentType: "application/octet-stream", body: "week,signups\n2024-18,42\n"},
				post("/files.completeUploadExternal", form("files", `[{"id":"F07ABCDEFGH","title":"Weekly sign-ups"}]`,
					"channel_id", ch, "initial_comment", "This week's numbers", "thread_ts", ts)),
			},
			ops: []string{"files.getUploadURLExternal", "upload_url", "files.completeUploadExternal"},
			want: UploadedFile{ID: "F07ABCDEFGH", Title: "Weekly sign-ups", Channel: ch, Size: 24,
				Permalink: "https://acme.slack.com/files/U0456EFGH/F07ABCDEFGH/report.csv"}},
	}
}

// TestEveryOperationCheckedAgainstDescription runs every operation of the Spec once and
// checks each request it sends against Slack's API description (or, for the methods
// the description lacks, against their documented parameters: undescribedMethods) and
// each described answer of the fake against the description's response schema. It
// fails when an operation of the Spec has no case here.
func TestEveryOperationCheckedAgainstDescription(t *testing.T) {
	t.Parallel()
	r := providers.NewRegistry()
	if err := r.Register(Spec()); err != nil {
		t.Fatalf("register: %v", err)
	}
	cases := operationCases(t)
	var covered, tools []string
	for _, c := range cases {
		covered = append(covered, c.tool)
	}
	for _, tl := range r.Tools("slack") {
		tools = append(tools, tl.Name)
		if !slices.Contains(covered, tl.Name) {
			t.Errorf("%s: no request check: add a case to operationCases", tl.Name)
		}
	}
	for _, name := range covered {
		if !slices.Contains(tools, name) {
			t.Errorf("operationCases has %s, which the Spec does not", name)
		}
	}
	desc := providertest.SlackDescription(t)
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, c.answers...)
			got, err := invoke(t, f.call, c.tool, c.args)
			if err != nil {
				t.Fatalf("invoke: %v", err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			checkOutput(t, tool(t, c.tool), got)
			reqs := f.up.Requests()
			if len(reqs) != len(c.requests) {
				t.Fatalf("%d requests, want %d", len(reqs), len(c.requests))
			}
			for i, w := range c.requests {
				w.check(t, reqs[i])
			}
			ops := f.checkRequests(t)
			if diff := cmp.Diff(c.ops, ops); diff != "" {
				t.Errorf("operations (-want +got):\n%s", diff)
			}
			for i, op := range ops {
				if _, undescribed := undescribedFor(reqs[i].Path); !undescribed {
					desc.CheckResponse(t, op, http.StatusOK, []byte(c.answers[i].body))
				}
			}
		})
	}
}

// TestEveryOperationFailures sends every operation to a Slack that fails: HTTP 401,
// 403, 404, 429 with Retry-After, 503, and ok:false missing_scope. Each failure becomes
// its error code; only reads and idempotent operations are retried after a 503.
func TestEveryOperationFailures(t *testing.T) {
	t.Parallel()
	r := providers.NewRegistry()
	if err := r.Register(Spec()); err != nil {
		t.Fatalf("register: %v", err)
	}
	failures := []struct {
		name           string
		answer         answer
		wantCode       switchboard.Code
		wantReason     string
		wantMessage    string
		wantRetryAfter time.Duration
		retried        bool // a retryable operation sends it three times
	}{
		{name: "401", answer: answer{status: 401, body: `{"ok":false,"error":"invalid_auth"}`},
			wantCode: switchboard.CodeReconnect, wantReason: "invalid_auth", wantMessage: "reconnect Slack"},
		{name: "403", answer: answer{status: 403, body: `{"ok":false,"error":"access_denied"}`},
			wantCode: switchboard.CodeForbidden, wantReason: "access_denied"},
		{name: "404", answer: answer{status: 404, header: map[string]string{"Content-Type": "text/html"}, body: "<html>Not Found</html>"},
			wantCode: switchboard.CodeNotFound},
		{name: "429 with Retry-After", answer: answer{status: 429, header: map[string]string{"Retry-After": "30"}, body: `{"ok":false,"error":"ratelimited"}`},
			wantCode: switchboard.CodeRateLimited, wantReason: "ratelimited", wantRetryAfter: 30 * time.Second},
		{name: "503", answer: answer{status: 503, header: map[string]string{"Content-Type": "text/html"}, body: "<html>503 Service Unavailable</html>"},
			wantCode: switchboard.CodeUpstream, retried: true},
		{name: "ok false missing_scope", answer: answer{body: `{"ok":false,"error":"missing_scope","needed":"some:scope","provided":"identify"}`},
			wantCode: switchboard.CodeForbidden, wantReason: "missing_scope", wantMessage: "lacks the some:scope scope"},
	}
	for _, c := range operationCases(t) {
		tl, ok := r.Tool(c.tool)
		if !ok {
			t.Fatalf("no tool %s", c.tool)
		}
		for _, fl := range failures {
			t.Run(c.tool+"/"+fl.name, func(t *testing.T) {
				t.Parallel()
				f := newFake(t, fl.answer)
				out, err := invoke(t, f.call, c.tool, c.args)
				if err == nil {
					t.Fatalf("no error, output %+v", out)
				}
				ue := upstreamError(t, err)
				if codeOf(err) != fl.wantCode || ue.Reason != fl.wantReason {
					t.Errorf("error = %v (code %s, reason %q), want code %s, reason %q", err, codeOf(err), ue.Reason, fl.wantCode, fl.wantReason)
				}
				if !strings.Contains(ue.Message, fl.wantMessage) {
					t.Errorf("message = %q, want it to contain %q", ue.Message, fl.wantMessage)
				}
				if ue.RetryAfter != fl.wantRetryAfter {
					t.Errorf("retry after = %v, want %v", ue.RetryAfter, fl.wantRetryAfter)
				}
				wantAttempts := 1
				if fl.retried && tl.Info.Hints.Retryable() {
					wantAttempts = 3
				}
				reqs := f.up.Requests()
				if len(reqs) != wantAttempts {
					t.Errorf("attempts = %d, want %d", len(reqs), wantAttempts)
				}
				// Every attempt is the operation's first request, whole.
				for _, r := range reqs {
					c.requests[0].check(t, r)
				}
				f.checkRequests(t)
				if strings.Contains(err.Error(), testToken) {
					t.Errorf("error %q holds the token", err)
				}
			})
		}
	}
}
