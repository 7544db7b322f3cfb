package slack

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// userID matches a Slack user ID (U… or, on Enterprise Grid, W…).
var userID = regexp.MustCompile(`^[UW][A-Z0-9]+$`)

// invalidUsers is the error for an item of users that is not a user ID.
func invalidUsers(item string) error {
	return switchboard.Invalid("users", fmt.Sprintf("holds %q, which is not a user ID such as U0123ABCD (get_users and get_user_by_email find them)", item))
}

// channelNameRule is what Slack accepts as a channel name, said once for every message.
const channelNameRule = "name is not a valid Slack channel name: use 1 to 80 lowercase letters, digits, hyphens and underscores, e.g. proj-apollo"

// conversationResponse is the answer of the conversations.* methods that return the channel.
type conversationResponse struct {
	envelope
	Channel slackConversation `json:"channel"`
}

// CreateChannel creates a channel.
// Slack API docs: https://api.slack.com/methods/conversations.create
var CreateChannel = &providers.Operation[CreateChannelInput, Channel]{
	Name:  "create_channel",
	Title: "Create channel",
	Description: "Create a new Slack channel, public by default or private with is_private; the connection's user or bot " +
		"becomes its first member. Names are lowercase letters, digits, hyphens and underscores (at most 80), e.g. " +
		"proj-apollo; a name in use, archived channels included, answers name_taken (conflict). Add people afterwards " +
		"with invite_to_channel and describe it with set_channel_topic and set_channel_purpose. Returns the new " +
		"channel with its ID (C…), which other Slack tools take.",
	DocsURL: "https://api.slack.com/methods/conversations.create",
	Scopes:  []string{"channels:manage", "groups:write"},
	// A second call with the same name fails with name_taken rather than creating another.
	Hints: providers.Hints{},
	Run:   createChannel,
}

// CreateChannelInput is the input of create_channel.
type CreateChannelInput struct {
	Name      string `json:"name" jsonschema:"The channel name without #: lowercase letters, digits, hyphens and underscores" schema:"minLength=1,maxLength=80,example=proj-apollo,pattern=^[a-z0-9_-]+$"`
	IsPrivate *bool  `json:"is_private,omitempty" jsonschema:"Create a private channel (only invited members see it) instead of a public one; needs groups:write" schema:"default=false"`
}

func createChannel(ctx context.Context, c *providers.Call, in CreateChannelInput) (Channel, error) {
	form := url.Values{"name": {in.Name}}
	setOptBool(form, "is_private", in.IsPrivate)
	var r conversationResponse
	if _, err := send(ctx, c, http.MethodPost, "conversations.create", form, &r); err != nil {
		return Channel{}, reword(err, "invalid_name", channelNameRule)
	}
	return r.Channel.channel(), nil
}

// ArchiveChannel archives a channel.
// Slack API docs: https://api.slack.com/methods/conversations.archive
//
// Slack answers already_archived for a channel that is archived already; the caller
// wanted it archived and it is, so that is a success with already_archived set, which
// also makes the operation safe to retry.
var ArchiveChannel = &providers.Operation[ArchiveChannelInput, ArchiveChannelOutput]{
	Name:  "archive_channel",
	Title: "Archive channel",
	Description: "Archive a Slack channel: it becomes read-only, leaves the channel list and its members are removed; " +
		"its history stays searchable and a workspace member can unarchive it in Slack. The general channel cannot be " +
		"archived. Archiving a channel that is archived already succeeds with already_archived true. Returns the " +
		"channel ID and whether it was archived already.",
	DocsURL: "https://api.slack.com/methods/conversations.archive",
	Scopes:  []string{"channels:manage", "groups:write"},
	Hints:   providers.Hints{Destructive: true, Idempotent: true},
	Run:     archiveChannel,
}

// ArchiveChannelInput is the input of archive_channel.
type ArchiveChannelInput struct {
	Channel string `json:"channel" jsonschema:"Conversation ID of the channel to archive, e.g. C0123ABCD" schema:"example=C0123ABCD,pattern=^[CG][A-Z0-9]+$"`
}

// ArchiveChannelOutput says which channel is archived now.
type ArchiveChannelOutput struct {
	Channel         string `json:"channel" jsonschema:"Conversation ID of the archived channel"`
	AlreadyArchived bool   `json:"already_archived" jsonschema:"True when the channel was archived already, so nothing changed"`
}

func archiveChannel(ctx context.Context, c *providers.Call, in ArchiveChannelInput) (ArchiveChannelOutput, error) {
	out := ArchiveChannelOutput{Channel: in.Channel}
	_, err := send(ctx, c, http.MethodPost, "conversations.archive", url.Values{"channel": {in.Channel}}, nil)
	if isReason(err, "already_archived") {
		out.AlreadyArchived = true
		return out, nil
	}
	if err != nil {
		return ArchiveChannelOutput{}, err
	}
	return out, nil
}

// RenameChannel renames a channel.
// Slack API docs: https://api.slack.com/methods/conversations.rename
var RenameChannel = &providers.Operation[RenameChannelInput, Channel]{
	Name:  "rename_channel",
	Title: "Rename channel",
	Description: "Rename a Slack channel; its ID, members and history stay, and the old name is kept in its previous " +
		"names. Only the channel's creator, workspace admins or a member with the right permission may rename it. The " +
		"new name follows create_channel's rules (lowercase letters, digits, hyphens, underscores, at most 80) and must " +
		"not be taken. Returns the channel with its new name.",
	DocsURL: "https://api.slack.com/methods/conversations.rename",
	Scopes:  []string{"channels:manage", "groups:write"},
	// The old name is overwritten; the same rename twice leaves the same name.
	Hints: providers.Hints{Destructive: true, Idempotent: true},
	Run:   renameChannel,
}

// RenameChannelInput is the input of rename_channel.
type RenameChannelInput struct {
	Channel string `json:"channel" jsonschema:"Conversation ID of the channel to rename, e.g. C0123ABCD" schema:"example=C0123ABCD,pattern=^[CG][A-Z0-9]+$"`
	Name    string `json:"name" jsonschema:"The new name without #: lowercase letters, digits, hyphens and underscores" schema:"minLength=1,maxLength=80,example=proj-apollo-launch,pattern=^[a-z0-9_-]+$"`
}

func renameChannel(ctx context.Context, c *providers.Call, in RenameChannelInput) (Channel, error) {
	var r conversationResponse
	if _, err := send(ctx, c, http.MethodPost, "conversations.rename", url.Values{"channel": {in.Channel}, "name": {in.Name}}, &r); err != nil {
		return Channel{}, reword(err, "invalid_name", channelNameRule)
	}
	return r.Channel.channel(), nil
}

// InviteToChannel invites people to a channel.
// Slack API docs: https://api.slack.com/methods/conversations.invite
var InviteToChannel = &providers.Operation[InviteToChannelInput, Channel]{
	Name:  "invite_to_channel",
	Title: "Invite to channel",
	Description: "Add up to 1000 people (user IDs U…, from get_users or get_user_by_email) to a Slack channel the " +
		"connection is a member of. If any of them is already a member Slack refuses the whole call " +
		"(already_in_channel, a conflict): invite only the others. Returns the channel.",
	DocsURL: "https://api.slack.com/methods/conversations.invite",
	Scopes:  []string{"channels:manage", "groups:write"},
	// Adds members, removes nothing; a second call with the same users is refused
	// (already_in_channel), so it is not retried.
	Hints: providers.Hints{},
	Run:   inviteToChannel,
}

// InviteToChannelInput is the input of invite_to_channel.
type InviteToChannelInput struct {
	Channel string   `json:"channel" jsonschema:"Conversation ID of the channel, e.g. C0123ABCD" schema:"example=C0123ABCD,pattern=^[CG][A-Z0-9]+$"`
	Users   []string `json:"users" jsonschema:"User IDs of the people to add, e.g. [\"U0123ABCD\"]" schema:"minItems=1,maxItems=1000,example=U0123ABCD|U0456EFGH"`
}

func inviteToChannel(ctx context.Context, c *providers.Call, in InviteToChannelInput) (Channel, error) {
	for _, u := range in.Users {
		if !userID.MatchString(u) {
			return Channel{}, invalidUsers(u)
		}
	}
	var r conversationResponse
	form := url.Values{"channel": {in.Channel}, "users": {strings.Join(in.Users, ",")}}
	if _, err := send(ctx, c, http.MethodPost, "conversations.invite", form, &r); err != nil {
		return Channel{}, err
	}
	return r.Channel.channel(), nil
}

// SetChannelTopic sets a channel's topic.
// Slack API docs: https://api.slack.com/methods/conversations.setTopic
var SetChannelTopic = &providers.Operation[SetChannelTopicInput, Channel]{
	Name:  "set_channel_topic",
	Title: "Set channel topic",
	Description: "Set the topic of a Slack channel: the short line shown beside its name (what is being worked on now, " +
		"e.g. the on-call person or the current release). It replaces the old topic; an empty topic clears it. For the " +
		"lasting description of what the channel is for, use set_channel_purpose. The connection must be a member. " +
		"Returns the channel with its new topic.",
	DocsURL: "https://api.slack.com/methods/conversations.setTopic",
	Scopes:  []string{"channels:manage", "groups:write"},
	Hints:   providers.Hints{Destructive: true, Idempotent: true},
	Run:     setChannelTopic,
}

// SetChannelTopicInput is the input of set_channel_topic.
type SetChannelTopicInput struct {
	Channel string `json:"channel" jsonschema:"Conversation ID of the channel, e.g. C0123ABCD" schema:"example=C0123ABCD,pattern=^[CG][A-Z0-9]+$"`
	Topic   string `json:"topic" jsonschema:"The new topic, plain text without formatting; empty clears it" schema:"maxLength=250,example=On call: @jane; release 2.4 on Thursday"`
}

func setChannelTopic(ctx context.Context, c *providers.Call, in SetChannelTopicInput) (Channel, error) {
	var r conversationResponse
	if _, err := send(ctx, c, http.MethodPost, "conversations.setTopic", url.Values{"channel": {in.Channel}, "topic": {in.Topic}}, &r); err != nil {
		return Channel{}, err
	}
	return r.Channel.channel(), nil
}

// SetChannelPurpose sets a channel's purpose.
// Slack API docs: https://api.slack.com/methods/conversations.setPurpose
var SetChannelPurpose = &providers.Operation[SetChannelPurposeInput, Channel]{
	Name:  "set_channel_purpose",
	Title: "Set channel purpose",
	Description: "Set the purpose of a Slack channel: its lasting description, shown in the channel details and the " +
		"channel browser (what the channel is for and who should join). It replaces the old purpose; an empty purpose " +
		"clears it. For the short, changing line beside the name, use set_channel_topic. The connection must be a " +
		"member. Returns the channel with its new purpose.",
	DocsURL: "https://api.slack.com/methods/conversations.setPurpose",
	Scopes:  []string{"channels:manage", "groups:write"},
	Hints:   providers.Hints{Destructive: true, Idempotent: true},
	Run:     setChannelPurpose,
}

// SetChannelPurposeInput is the input of set_channel_purpose.
type SetChannelPurposeInput struct {
	Channel string `json:"channel" jsonschema:"Conversation ID of the channel, e.g. C0123ABCD" schema:"example=C0123ABCD,pattern=^[CG][A-Z0-9]+$"`
	Purpose string `json:"purpose" jsonschema:"The new purpose, plain text; empty clears it" schema:"maxLength=250,example=Coordination of the Apollo launch: plans; status and decisions"`
}

func setChannelPurpose(ctx context.Context, c *providers.Call, in SetChannelPurposeInput) (Channel, error) {
	var r conversationResponse
	if _, err := send(ctx, c, http.MethodPost, "conversations.setPurpose", url.Values{"channel": {in.Channel}, "purpose": {in.Purpose}}, &r); err != nil {
		return Channel{}, err
	}
	return r.Channel.channel(), nil
}
