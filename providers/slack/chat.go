package slack

import (
	"context"
	"net/http"
	"net/url"

	"github.com/switchboard-hub/switchboard/providers"
)

// PostMessage posts a message to a channel, or a reply in a thread.
// Slack API docs: https://api.slack.com/methods/chat.postMessage
var PostMessage = &providers.Operation[PostMessageInput, PostedMessage]{
	Name:  "post_message",
	Title: "Post message",
	Description: "Post a message to a Slack channel as this connection's bot (or user, for a user token). channel is a " +
		"conversation ID (C0123ABCD, or D… for a direct message; list_channels finds them) or a #name; to message a person " +
		"directly pass their user ID (U…). text is Slack mrkdwn (*bold*, _italic_, <@U0123ABCD> mentions, <https://x|label> links). " +
		"Set thread_ts to a message's ts (e.g. 1712345678.123456) to reply in its thread. The bot must be in the channel " +
		"(not_in_channel otherwise). Each call posts a new message: do not retry a call that succeeded. Returns the " +
		"conversation ID, the new message's ts (its ID, for replies, reactions, edits) and the stored text.",
	DocsURL: "https://api.slack.com/methods/chat.postMessage",
	Scopes:  []string{"chat:write"},
	// Not read-only, not idempotent (a second call posts a second message, so the
	// client never retries it), not destructive (nothing existing is changed).
	Hints: providers.Hints{},
	Run:   postMessage,
}

// PostMessageInput is the input of post_message.
type PostMessageInput struct {
	Channel     string  `json:"channel" jsonschema:"Where to post: a conversation ID (C0123ABCD, D… for a DM), a #channel-name, or a user ID (U…) for a direct message" schema:"minLength=1,example=C0123ABCD"`
	Text        string  `json:"text" jsonschema:"Message text in Slack mrkdwn" schema:"minLength=1,maxLength=40000,example=Deploy of *api* finished :white_check_mark:"`
	ThreadTS    *string `json:"thread_ts,omitempty" jsonschema:"Timestamp of the parent message (e.g. 1712345678.123456), to post the message as a reply in its thread" schema:"example=1712345678.123456,pattern=^[0-9]+\\.[0-9]+$"`
	UnfurlLinks *bool   `json:"unfurl_links,omitempty" jsonschema:"Show previews of text-based links in the message" schema:"default=false"`
	UnfurlMedia *bool   `json:"unfurl_media,omitempty" jsonschema:"Show previews of images and videos linked in the message" schema:"default=true"`
}

// PostedMessage is the message Slack stored.
type PostedMessage struct {
	Channel  string `json:"channel" jsonschema:"Conversation ID the message went to, e.g. C0123ABCD (a #name or user ID is resolved to it)"`
	TS       string `json:"ts" jsonschema:"The new message's timestamp, e.g. 1712345678.123456: its ID, for replies, reactions and edits"`
	ThreadTS string `json:"thread_ts,omitempty" jsonschema:"The thread's parent timestamp, when the message is a thread reply"`
	Text     string `json:"text" jsonschema:"The text as Slack stored it (mentions and links may be normalised)"`
}

type postMessageResponse struct {
	envelope
	Channel string       `json:"channel"`
	TS      string       `json:"ts"`
	Message slackMessage `json:"message"`
}

func postMessage(ctx context.Context, c *providers.Call, in PostMessageInput) (PostedMessage, error) {
	form := url.Values{"channel": {in.Channel}, "text": {in.Text}}
	setOpt(form, "thread_ts", in.ThreadTS)
	setOptBool(form, "unfurl_links", in.UnfurlLinks)
	setOptBool(form, "unfurl_media", in.UnfurlMedia)
	return post(ctx, c, form)
}

// post sends chat.postMessage once and reports the stored message.
func post(ctx context.Context, c *providers.Call, form url.Values) (PostedMessage, error) {
	var r postMessageResponse
	if _, err := send(ctx, c, http.MethodPost, "chat.postMessage", form, &r); err != nil {
		return PostedMessage{}, err
	}
	return PostedMessage{Channel: r.Channel, TS: r.TS, ThreadTS: r.Message.ThreadTS, Text: r.Message.Text}, nil
}

// ReplyToThread posts a reply in a message's thread.
// Slack API docs: https://api.slack.com/methods/chat.postMessage
var ReplyToThread = &providers.Operation[ReplyToThreadInput, PostedMessage]{
	Name:  "reply_to_thread",
	Title: "Reply to thread",
	Description: "Reply in the thread of a Slack message. channel is the conversation ID (C0123ABCD) of the parent " +
		"message and thread_ts its ts (e.g. 1712345678.123456, from get_channel_history; replying to a reply means " +
		"using that reply's thread_ts). Set reply_broadcast to also show the reply in the channel. Each call posts a new " +
		"reply: do not retry a call that succeeded. Returns the conversation ID, the reply's ts, the thread's parent ts " +
		"and the stored text.",
	DocsURL: "https://api.slack.com/methods/chat.postMessage",
	Scopes:  []string{"chat:write"},
	// As post_message: each call adds a reply, so it is never retried.
	Hints: providers.Hints{},
	Run:   replyToThread,
}

// ReplyToThreadInput is the input of reply_to_thread.
type ReplyToThreadInput struct {
	Channel        string `json:"channel" jsonschema:"Conversation ID of the parent message's channel, e.g. C0123ABCD" schema:"minLength=1,example=C0123ABCD"`
	ThreadTS       string `json:"thread_ts" jsonschema:"Timestamp of the thread's parent message, e.g. 1712345678.123456" schema:"example=1712345678.123456,pattern=^[0-9]+\\.[0-9]+$"`
	Text           string `json:"text" jsonschema:"Reply text in Slack mrkdwn" schema:"minLength=1,maxLength=40000,example=On it: rolling back now"`
	ReplyBroadcast *bool  `json:"reply_broadcast,omitempty" jsonschema:"Also post the reply to the channel itself, not only in the thread" schema:"default=false"`
}

func replyToThread(ctx context.Context, c *providers.Call, in ReplyToThreadInput) (PostedMessage, error) {
	form := url.Values{"channel": {in.Channel}, "thread_ts": {in.ThreadTS}, "text": {in.Text}}
	setOptBool(form, "reply_broadcast", in.ReplyBroadcast)
	return post(ctx, c, form)
}
