package slack

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// UpdateMessage replaces the text of a message this connection posted.
// Slack API docs: https://api.slack.com/methods/chat.update
var UpdateMessage = &providers.Operation[UpdateMessageInput, UpdatedMessage]{
	Name:  "update_message",
	Title: "Update message",
	Description: "Replace the text of a Slack message that this connection posted earlier (a bot can only edit its own " +
		"messages; cant_update_message otherwise). Give the channel ID (C0123ABCD) and the message's ts (e.g. " +
		"1712345678.123456, from post_message or get_channel_history). The old text is overwritten, not kept. To add " +
		"to a conversation instead, use post_message or reply_to_thread. Returns the channel, the ts (unchanged) and " +
		"the new text as Slack stored it.",
	DocsURL: "https://api.slack.com/methods/chat.update",
	Scopes:  []string{"chat:write"},
	// Overwrites the old text (destructive); the same edit twice leaves the same text.
	Hints: providers.Hints{Destructive: true, Idempotent: true},
	Run:   updateMessage,
}

// UpdateMessageInput is the input of update_message.
type UpdateMessageInput struct {
	Channel string `json:"channel" jsonschema:"Conversation ID of the message's channel, e.g. C0123ABCD" schema:"example=C0123ABCD,pattern=^[CDG][A-Z0-9]+$"`
	TS      string `json:"ts" jsonschema:"The message's ts, e.g. 1712345678.123456" schema:"example=1712345678.123456,pattern=^[0-9]+\\.[0-9]+$"`
	Text    string `json:"text" jsonschema:"The new message text in Slack mrkdwn; it replaces the old text entirely" schema:"minLength=1,maxLength=40000,example=Deploy finished (edited)"`
}

// UpdatedMessage is a message after an edit.
type UpdatedMessage struct {
	Channel string `json:"channel" jsonschema:"Conversation ID of the message's channel"`
	TS      string `json:"ts" jsonschema:"The message's ts, unchanged by the edit"`
	Text    string `json:"text" jsonschema:"The new text as Slack stored it"`
}

type chatUpdateResponse struct {
	envelope
	Channel string `json:"channel"`
	TS      string `json:"ts"`
	Text    string `json:"text"`
}

func updateMessage(ctx context.Context, c *providers.Call, in UpdateMessageInput) (UpdatedMessage, error) {
	var r chatUpdateResponse
	form := url.Values{"channel": {in.Channel}, "ts": {in.TS}, "text": {in.Text}}
	if _, err := send(ctx, c, http.MethodPost, "chat.update", form, &r); err != nil {
		return UpdatedMessage{}, err
	}
	return UpdatedMessage{Channel: r.Channel, TS: r.TS, Text: r.Text}, nil
}

// DeleteMessage deletes a message.
// Slack API docs: https://api.slack.com/methods/chat.delete
var DeleteMessage = &providers.Operation[MessageRef, DeletedMessage]{
	Name:  "delete_message",
	Title: "Delete message",
	Description: "Delete a Slack message for everyone; it cannot be restored. A bot token deletes only the bot's own " +
		"messages, a user token the person's own (and any, for workspace admins). Give the channel ID (C0123ABCD) and " +
		"the message's ts (e.g. 1712345678.123456). Deleting a thread's parent leaves its replies. To change a message " +
		"instead, use update_message. Returns the channel and ts of the deleted message.",
	DocsURL: "https://api.slack.com/methods/chat.delete",
	Scopes:  []string{"chat:write"},
	// Deleting twice leaves the message as gone as deleting once; the second answer is
	// message_not_found.
	Hints: providers.Hints{Destructive: true, Idempotent: true},
	Run:   deleteMessage,
}

// MessageRef names one message.
type MessageRef struct {
	Channel string `json:"channel" jsonschema:"Conversation ID of the message's channel, e.g. C0123ABCD" schema:"example=C0123ABCD,pattern=^[CDG][A-Z0-9]+$"`
	TS      string `json:"ts" jsonschema:"The message's ts, e.g. 1712345678.123456" schema:"example=1712345678.123456,pattern=^[0-9]+\\.[0-9]+$"`
}

// DeletedMessage names the message Slack deleted, as chat.delete answers it. Its
// values are Slack's answer passed through, not values the hub checked, so the schema
// says only that they are strings: patterns belong to inputs the hub validates.
type DeletedMessage struct {
	Channel string `json:"channel" jsonschema:"Conversation ID of the message's channel"`
	TS      string `json:"ts" jsonschema:"The deleted message's ts"`
}

type chatDeleteResponse struct {
	envelope
	Channel string `json:"channel"`
	TS      string `json:"ts"`
}

func deleteMessage(ctx context.Context, c *providers.Call, in MessageRef) (DeletedMessage, error) {
	var r chatDeleteResponse
	if _, err := send(ctx, c, http.MethodPost, "chat.delete", url.Values{"channel": {in.Channel}, "ts": {in.TS}}, &r); err != nil {
		return DeletedMessage{}, err
	}
	return DeletedMessage{Channel: r.Channel, TS: r.TS}, nil
}

// maxScheduleAhead is how far ahead Slack schedules a message.
const maxScheduleAhead = 120 * 24 * time.Hour

// ScheduleMessage schedules a message to be posted later.
// Slack API docs: https://api.slack.com/methods/chat.scheduleMessage
var ScheduleMessage = &providers.Operation[ScheduleMessageInput, ScheduledMessage]{
	Name:  "schedule_message",
	Title: "Schedule message",
	Description: "Schedule a Slack message to be posted at a later time (post_at, Unix seconds, in the future and at most " +
		"120 days ahead), optionally as a thread reply. Use post_message to post now. The bot must be in the channel " +
		"when the time comes. Each call schedules another message: do not retry a call that succeeded. Returns the " +
		"scheduled_message_id (Q…), the channel ID and the time it will be posted.",
	DocsURL: "https://api.slack.com/methods/chat.scheduleMessage",
	Scopes:  []string{"chat:write"},
	Hints:   providers.Hints{},
	Run:     scheduleMessage,
}

// ScheduleMessageInput is the input of schedule_message.
type ScheduleMessageInput struct {
	Channel  string  `json:"channel" jsonschema:"Where to post: a conversation ID (C0123ABCD) or a #channel-name" schema:"minLength=1,example=C0123ABCD"`
	Text     string  `json:"text" jsonschema:"Message text in Slack mrkdwn" schema:"minLength=1,maxLength=40000,example=Stand-up starts in 5 minutes"`
	PostAt   int64   `json:"post_at" jsonschema:"When to post, in Unix seconds (e.g. 1767261600 is 2026-01-01 10:00 UTC); in the future and at most 120 days ahead" schema:"minimum=1,example=1767261600"`
	ThreadTS *string `json:"thread_ts,omitempty" jsonschema:"Timestamp of a parent message (e.g. 1712345678.123456), to post the message as a reply in its thread" schema:"example=1712345678.123456,pattern=^[0-9]+\\.[0-9]+$"`
}

// ScheduledMessage is a message Slack will post later.
type ScheduledMessage struct {
	ID      string `json:"scheduled_message_id" jsonschema:"The scheduled message's ID, e.g. Q1298393284"`
	Channel string `json:"channel" jsonschema:"Conversation ID the message will go to"`
	PostAt  int64  `json:"post_at" jsonschema:"When Slack will post it, in Unix seconds"`
}

type scheduleMessageResponse struct {
	envelope
	Channel            string `json:"channel"`
	PostAt             int64  `json:"post_at"`
	ScheduledMessageID string `json:"scheduled_message_id"`
}

func scheduleMessage(ctx context.Context, c *providers.Call, in ScheduleMessageInput) (ScheduledMessage, error) {
	now := time.Now()
	at := time.Unix(in.PostAt, 0)
	switch {
	case !at.After(now):
		return ScheduledMessage{}, switchboard.Invalid("post_at", fmt.Sprintf("is %s, which is not in the future (now is %d)", at.UTC().Format(time.RFC3339), now.Unix()))
	case at.Sub(now) > maxScheduleAhead:
		return ScheduledMessage{}, switchboard.Invalid("post_at", fmt.Sprintf("is %s, more than 120 days ahead, the furthest Slack schedules", at.UTC().Format(time.RFC3339)))
	}
	form := url.Values{"channel": {in.Channel}, "text": {in.Text}, "post_at": {strconv.FormatInt(in.PostAt, 10)}}
	setOpt(form, "thread_ts", in.ThreadTS)
	var r scheduleMessageResponse
	if _, err := send(ctx, c, http.MethodPost, "chat.scheduleMessage", form, &r); err != nil {
		return ScheduledMessage{}, err
	}
	return ScheduledMessage{ID: r.ScheduledMessageID, Channel: r.Channel, PostAt: r.PostAt}, nil
}

// PostEphemeral shows a message to one person in a channel.
// Slack API docs: https://api.slack.com/methods/chat.postEphemeral
var PostEphemeral = &providers.Operation[PostEphemeralInput, EphemeralMessage]{
	Name:  "post_ephemeral",
	Title: "Post ephemeral message",
	Description: "Show a message to one member of a Slack channel only (\"Only visible to you\"), for hints, confirmations " +
		"or private answers in a shared channel. The person must be in the channel (user_not_in_channel otherwise) and " +
		"the message is not stored: it cannot be edited, reacted to or read back, and it vanishes when they reload. " +
		"For a lasting private message, use post_message with their user ID. Each call shows another message: do not " +
		"retry a call that succeeded. Returns the ephemeral message's ts.",
	DocsURL: "https://api.slack.com/methods/chat.postEphemeral",
	Scopes:  []string{"chat:write"},
	Hints:   providers.Hints{},
	Run:     postEphemeral,
}

// PostEphemeralInput is the input of post_ephemeral.
type PostEphemeralInput struct {
	Channel  string  `json:"channel" jsonschema:"Conversation ID of the channel (C0123ABCD) or its #name" schema:"minLength=1,example=C0123ABCD"`
	User     string  `json:"user" jsonschema:"User ID of the one person who sees the message, e.g. U0123ABCD" schema:"example=U0123ABCD,pattern=^[UW][A-Z0-9]+$"`
	Text     string  `json:"text" jsonschema:"Message text in Slack mrkdwn" schema:"minLength=1,maxLength=40000,example=Only you can see this: the deploy is queued"`
	ThreadTS *string `json:"thread_ts,omitempty" jsonschema:"Timestamp of a thread's parent message (e.g. 1712345678.123456), to show the message in that thread" schema:"example=1712345678.123456,pattern=^[0-9]+\\.[0-9]+$"`
}

// EphemeralMessage is what Slack says about an ephemeral message.
type EphemeralMessage struct {
	MessageTS string `json:"message_ts" jsonschema:"The ephemeral message's timestamp; it names no stored message"`
	Channel   string `json:"channel" jsonschema:"The channel it was shown in, as given"`
	User      string `json:"user" jsonschema:"The user ID of the person who saw it"`
}

type postEphemeralResponse struct {
	envelope
	MessageTS string `json:"message_ts"`
}

func postEphemeral(ctx context.Context, c *providers.Call, in PostEphemeralInput) (EphemeralMessage, error) {
	form := url.Values{"channel": {in.Channel}, "user": {in.User}, "text": {in.Text}}
	setOpt(form, "thread_ts", in.ThreadTS)
	var r postEphemeralResponse
	if _, err := send(ctx, c, http.MethodPost, "chat.postEphemeral", form, &r); err != nil {
		return EphemeralMessage{}, err
	}
	return EphemeralMessage{MessageTS: r.MessageTS, Channel: in.Channel, User: in.User}, nil
}

// GetPermalink returns a message's permanent link.
// Slack API docs: https://api.slack.com/methods/chat.getPermalink
var GetPermalink = &providers.Operation[GetPermalinkInput, Permalink]{
	Name:  "get_permalink",
	Title: "Get message permalink",
	Description: "Get the permanent https link of a Slack message, to cite it elsewhere (an issue, an email, another " +
		"channel). Give the channel ID (C0123ABCD) and the message's ts (e.g. 1712345678.123456). Only people who can " +
		"see the channel can open the link. Returns the channel ID and the permalink.",
	DocsURL: "https://api.slack.com/methods/chat.getPermalink",
	// Slack's method page lists no required scope: any token that can see the channel works.
	Scopes: nil,
	Hints:  providers.Hints{ReadOnly: true, Idempotent: true},
	Run:    getPermalink,
}

// GetPermalinkInput is the input of get_permalink.
type GetPermalinkInput struct {
	Channel   string `json:"channel" jsonschema:"Conversation ID of the message's channel, e.g. C0123ABCD" schema:"example=C0123ABCD,pattern=^[CDG][A-Z0-9]+$"`
	MessageTS string `json:"message_ts" jsonschema:"The message's ts, e.g. 1712345678.123456" schema:"example=1712345678.123456,pattern=^[0-9]+\\.[0-9]+$"`
}

// Permalink is a message's permanent link.
type Permalink struct {
	Channel   string `json:"channel" jsonschema:"Conversation ID of the message's channel"`
	Permalink string `json:"permalink" jsonschema:"The message's link, e.g. https://acme.slack.com/archives/C0123ABCD/p1712345678123456" schema:"format=uri"`
}

type permalinkResponse struct {
	envelope
	Channel   string `json:"channel"`
	Permalink string `json:"permalink"`
}

func getPermalink(ctx context.Context, c *providers.Call, in GetPermalinkInput) (Permalink, error) {
	var r permalinkResponse
	if _, err := send(ctx, c, http.MethodGet, "chat.getPermalink", url.Values{"channel": {in.Channel}, "message_ts": {in.MessageTS}}, &r); err != nil {
		return Permalink{}, err
	}
	return Permalink{Channel: r.Channel, Permalink: r.Permalink}, nil
}
