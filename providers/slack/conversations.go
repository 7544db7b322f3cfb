package slack

import (
	"context"
	"net/http"
	"net/url"

	"github.com/switchboard-hub/switchboard/providers"
)

// ListChannels lists the workspace's conversations of one type.
// Slack API docs: https://api.slack.com/methods/conversations.list
var ListChannels = &providers.Operation[ListChannelsInput, ListChannelsOutput]{
	Name:  "list_channels",
	Title: "List channels",
	Description: "List the Slack workspace's channels with their IDs (C0123ABCD for channels, D… for direct messages, " +
		"G… for some private channels), names, topics and whether this connection is a member. Use it to find the channel ID " +
		"other Slack tools need. One type per call (public channels by default); archived channels are left out unless " +
		"exclude_archived is false. Returns the channels of this page and next_cursor: pass it back as cursor for the next page.",
	DocsURL: "https://api.slack.com/methods/conversations.list",
	Scopes:  []string{"channels:read", "groups:read", "im:read", "mpim:read"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listChannels,
}

// ListChannelsInput is the input of list_channels.
type ListChannelsInput struct {
	Types           *string `json:"types,omitempty" jsonschema:"Which conversations to list: public_channel, private_channel (needs groups:read), mpim (group DMs) or im (direct messages)" schema:"enum=public_channel|private_channel|mpim|im,default=public_channel"`
	ExcludeArchived *bool   `json:"exclude_archived,omitempty" jsonschema:"Leave archived channels out of the list" schema:"default=true"`
	providers.PageInput
}

// ListChannelsOutput is the output of list_channels.
type ListChannelsOutput struct {
	Channels   []Channel `json:"channels" jsonschema:"The conversations in this page"`
	NextCursor string    `json:"next_cursor,omitempty" jsonschema:"Pass as cursor to fetch the next page; absent on the last page"`
}

// Channel is one Slack conversation.
type Channel struct {
	ID         string `json:"id" jsonschema:"Conversation ID, e.g. C0123ABCD; pass it as channel to other Slack tools"`
	Name       string `json:"name,omitempty" jsonschema:"Channel name without the #, e.g. general; absent for direct messages"`
	IsPrivate  bool   `json:"is_private" jsonschema:"True for private channels and group DMs"`
	IsArchived bool   `json:"is_archived" jsonschema:"True when the channel is archived and read-only"`
	IsMember   bool   `json:"is_member" jsonschema:"True when this connection's user or bot is in the channel and can post and read history there"`
	IsIM       bool   `json:"is_im" jsonschema:"True for a direct message with one person"`
	IsMPIM     bool   `json:"is_mpim" jsonschema:"True for a group direct message"`
	User       string `json:"user,omitempty" jsonschema:"For a direct message: the other person's user ID (U…)"`
	Topic      string `json:"topic,omitempty" jsonschema:"The channel topic"`
	Purpose    string `json:"purpose,omitempty" jsonschema:"The channel purpose (description)"`
	NumMembers int    `json:"num_members,omitempty" jsonschema:"Number of members, where Slack reports it"`
	Created    int64  `json:"created,omitempty" jsonschema:"When the channel was created, in Unix seconds"`
}

// slackConversation is a conversation object as the Web API sends it.
type slackConversation struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	IsPrivate  bool   `json:"is_private"`
	IsArchived bool   `json:"is_archived"`
	IsMember   bool   `json:"is_member"`
	IsIM       bool   `json:"is_im"`
	IsMPIM     bool   `json:"is_mpim"`
	User       string `json:"user"`
	Created    int64  `json:"created"`
	NumMembers int    `json:"num_members"`
	Topic      struct {
		Value string `json:"value"`
	} `json:"topic"`
	Purpose struct {
		Value string `json:"value"`
	} `json:"purpose"`
}

type conversationsListResponse struct {
	envelope
	Channels []slackConversation `json:"channels"`
}

func listChannels(ctx context.Context, c *providers.Call, in ListChannelsInput) (ListChannelsOutput, error) {
	q := url.Values{}
	q.Set("types", "public_channel")
	setOpt(q, "types", in.Types)
	excludeArchived := true
	if in.ExcludeArchived != nil {
		excludeArchived = *in.ExcludeArchived
	}
	q.Set("exclude_archived", formBool(excludeArchived))
	if err := setPage(q, in.PageInput, 30); err != nil {
		return ListChannelsOutput{}, err
	}
	var r conversationsListResponse
	if _, err := send(ctx, c, http.MethodGet, "conversations.list", q, &r); err != nil {
		return ListChannelsOutput{}, err
	}
	out := ListChannelsOutput{Channels: make([]Channel, 0, len(r.Channels)), NextCursor: providers.EncodeCursor(r.ResponseMetadata.NextCursor)}
	for _, ch := range r.Channels {
		out.Channels = append(out.Channels, ch.channel())
	}
	return out, nil
}

// channel converts the Web API's conversation object.
func (ch slackConversation) channel() Channel {
	return Channel{
		ID: ch.ID, Name: ch.Name, IsPrivate: ch.IsPrivate, IsArchived: ch.IsArchived, IsMember: ch.IsMember,
		IsIM: ch.IsIM, IsMPIM: ch.IsMPIM, User: ch.User, Topic: ch.Topic.Value, Purpose: ch.Purpose.Value,
		NumMembers: ch.NumMembers, Created: ch.Created,
	}
}

// GetChannelHistory reads a channel's messages, newest first.
// Slack API docs: https://api.slack.com/methods/conversations.history
var GetChannelHistory = &providers.Operation[GetChannelHistoryInput, MessagesOutput]{
	Name:  "get_channel_history",
	Title: "Get channel history",
	Description: "Read the messages of a Slack channel, newest first, with their timestamps (ts, e.g. 1712345678.123456), " +
		"authors (user IDs U…) and reply counts. Thread replies are not included: for a message with reply_count > 0, " +
		"call get_thread_replies with its ts. Narrow the time range with oldest/latest (Slack timestamps). " +
		"The connection must be a member of the channel (not_in_channel otherwise). Returns the messages of this page " +
		"(ts, user, text, thread and reaction data) and next_cursor: pass it back as cursor for older messages.",
	DocsURL: "https://api.slack.com/methods/conversations.history",
	Scopes:  []string{"channels:history", "groups:history", "im:history", "mpim:history"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getChannelHistory,
}

// GetChannelHistoryInput is the input of get_channel_history.
type GetChannelHistoryInput struct {
	Channel string  `json:"channel" jsonschema:"Conversation ID, e.g. C0123ABCD (from list_channels); not a #name" schema:"example=C0123ABCD,pattern=^[CDG][A-Z0-9]+$"`
	Oldest  *string `json:"oldest,omitempty" jsonschema:"Only messages after this Slack timestamp, e.g. 1712345678.123456 (Unix seconds with microseconds)" schema:"example=1712345678.123456,pattern=^[0-9]+(\\.[0-9]+)?$"`
	Latest  *string `json:"latest,omitempty" jsonschema:"Only messages before this Slack timestamp, e.g. 1712345678.123456; defaults to now" schema:"example=1712400000.000000,pattern=^[0-9]+(\\.[0-9]+)?$"`
	providers.PageInput
}

// MessagesOutput is a page of messages.
type MessagesOutput struct {
	Messages   []Message `json:"messages" jsonschema:"The messages in this page"`
	NextCursor string    `json:"next_cursor,omitempty" jsonschema:"Pass as cursor to fetch the next page; absent on the last page"`
}

// Message is one Slack message.
type Message struct {
	TS         string     `json:"ts" jsonschema:"The message's timestamp, e.g. 1712345678.123456: its ID within the channel"`
	User       string     `json:"user,omitempty" jsonschema:"Author's user ID (U…); absent for some bot and system messages"`
	BotID      string     `json:"bot_id,omitempty" jsonschema:"Bot ID (B…) when a bot or app posted the message"`
	Text       string     `json:"text" jsonschema:"Message text in Slack mrkdwn; <@U…> is a mention, <#C…> a channel link"`
	Subtype    string     `json:"subtype,omitempty" jsonschema:"Kind of message when not a plain one, e.g. channel_join, bot_message"`
	ThreadTS   string     `json:"thread_ts,omitempty" jsonschema:"Timestamp of the thread's parent message, when the message starts or is in a thread"`
	ReplyCount int        `json:"reply_count,omitempty" jsonschema:"Number of replies in the thread this message starts"`
	Reactions  []Reaction `json:"reactions,omitempty" jsonschema:"Emoji reactions on the message"`
}

// Reaction is one emoji on a message.
type Reaction struct {
	Name  string   `json:"name" jsonschema:"Emoji name without colons, e.g. thumbsup"`
	Count int      `json:"count" jsonschema:"How many people reacted with it"`
	Users []string `json:"users" jsonschema:"User IDs of (some of) the people who reacted"`
}

// slackMessage is a message object as the Web API sends it.
type slackMessage struct {
	TS         string `json:"ts"`
	User       string `json:"user"`
	BotID      string `json:"bot_id"`
	Text       string `json:"text"`
	Subtype    string `json:"subtype"`
	ThreadTS   string `json:"thread_ts"`
	ReplyCount int    `json:"reply_count"`
	Reactions  []struct {
		Name  string   `json:"name"`
		Count int      `json:"count"`
		Users []string `json:"users"`
	} `json:"reactions"`
}

func (m slackMessage) message() Message {
	out := Message{TS: m.TS, User: m.User, BotID: m.BotID, Text: m.Text, Subtype: m.Subtype, ThreadTS: m.ThreadTS, ReplyCount: m.ReplyCount}
	for _, r := range m.Reactions {
		users := r.Users
		if users == nil {
			users = []string{}
		}
		out.Reactions = append(out.Reactions, Reaction{Name: r.Name, Count: r.Count, Users: users})
	}
	return out
}

type messagesResponse struct {
	envelope
	Messages []slackMessage `json:"messages"`
}

func (r messagesResponse) output() MessagesOutput {
	out := MessagesOutput{Messages: make([]Message, 0, len(r.Messages)), NextCursor: providers.EncodeCursor(r.ResponseMetadata.NextCursor)}
	for _, m := range r.Messages {
		out.Messages = append(out.Messages, m.message())
	}
	return out
}

func getChannelHistory(ctx context.Context, c *providers.Call, in GetChannelHistoryInput) (MessagesOutput, error) {
	q := url.Values{"channel": {in.Channel}}
	setOpt(q, "oldest", in.Oldest)
	setOpt(q, "latest", in.Latest)
	if err := setPage(q, in.PageInput, 30); err != nil {
		return MessagesOutput{}, err
	}
	var r messagesResponse
	if _, err := send(ctx, c, http.MethodGet, "conversations.history", q, &r); err != nil {
		return MessagesOutput{}, err
	}
	return r.output(), nil
}

// GetThreadReplies reads a thread: its parent message and the replies, oldest first.
// Slack API docs: https://api.slack.com/methods/conversations.replies
var GetThreadReplies = &providers.Operation[GetThreadRepliesInput, MessagesOutput]{
	Name:  "get_thread_replies",
	Title: "Get thread replies",
	Description: "Read a Slack thread: the parent message first, then its replies, oldest first. Give the channel ID " +
		"(C…) and the parent message's ts (e.g. 1712345678.123456, from get_channel_history; a reply's thread_ts works too). " +
		"Returns the parent and the replies of this page and next_cursor: pass it back as cursor for later replies.",
	DocsURL: "https://api.slack.com/methods/conversations.replies",
	Scopes:  []string{"channels:history", "groups:history", "im:history", "mpim:history"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getThreadReplies,
}

// GetThreadRepliesInput is the input of get_thread_replies.
type GetThreadRepliesInput struct {
	Channel string `json:"channel" jsonschema:"Conversation ID of the thread's channel, e.g. C0123ABCD" schema:"example=C0123ABCD,pattern=^[CDG][A-Z0-9]+$"`
	TS      string `json:"ts" jsonschema:"Timestamp of the thread's parent message, e.g. 1712345678.123456" schema:"example=1712345678.123456,pattern=^[0-9]+\\.[0-9]+$"`
	providers.PageInput
}

func getThreadReplies(ctx context.Context, c *providers.Call, in GetThreadRepliesInput) (MessagesOutput, error) {
	q := url.Values{"channel": {in.Channel}, "ts": {in.TS}}
	if err := setPage(q, in.PageInput, 30); err != nil {
		return MessagesOutput{}, err
	}
	var r messagesResponse
	if _, err := send(ctx, c, http.MethodGet, "conversations.replies", q, &r); err != nil {
		return MessagesOutput{}, err
	}
	return r.output(), nil
}
