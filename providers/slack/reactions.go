package slack

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboard-hub/switchboard/providers"
)

// AddReaction adds an emoji reaction to a message.
// Slack API docs: https://api.slack.com/methods/reactions.add
//
// Slack answers already_reacted when the reaction is there already. The caller wanted
// the reaction on the message and it is, so that answer is a success (with
// already_reacted set) rather than a conflict; that makes the operation idempotent, and
// so safe for the client to retry after a 5xx or a lost answer.
var AddReaction = &providers.Operation[ReactionInput, ReactionOutput]{
	Name:  "add_reaction",
	Title: "Add reaction",
	Description: "Add an emoji reaction to a Slack message. channel is the conversation ID (C0123ABCD), timestamp the " +
		"message's ts (e.g. 1712345678.123456, from get_channel_history or post_message), name the emoji name without " +
		"colons (thumbsup, white_check_mark, eyes, or a custom emoji's name). Adding a reaction that is already there " +
		"succeeds with already_reacted true. Returns the message, the emoji name as sent and whether it was there already.",
	DocsURL: "https://api.slack.com/methods/reactions.add",
	Scopes:  []string{"reactions:write"},
	Hints:   providers.Hints{Idempotent: true},
	Run:     addReaction,
}

// ReactionInput names a reaction on a message: the input of add_reaction and remove_reaction.
type ReactionInput struct {
	Channel   string `json:"channel" jsonschema:"Conversation ID of the message's channel, e.g. C0123ABCD" schema:"example=C0123ABCD,pattern=^[CDG][A-Z0-9]+$"`
	Timestamp string `json:"timestamp" jsonschema:"The message's ts, e.g. 1712345678.123456" schema:"example=1712345678.123456,pattern=^[0-9]+\\.[0-9]+$"`
	Name      string `json:"name" jsonschema:"Emoji name without colons, e.g. thumbsup; a skin tone is written thumbsup::skin-tone-2" schema:"minLength=1,maxLength=100,example=white_check_mark"`
}

// ReactionOutput says which reaction is now on which message.
type ReactionOutput struct {
	Channel        string `json:"channel" jsonschema:"Conversation ID of the message's channel"`
	Timestamp      string `json:"timestamp" jsonschema:"The message's ts"`
	Name           string `json:"name" jsonschema:"The emoji name, without colons"`
	AlreadyReacted bool   `json:"already_reacted" jsonschema:"True when the reaction was already there, so nothing changed"`
}

func addReaction(ctx context.Context, c *providers.Call, in ReactionInput) (ReactionOutput, error) {
	name := strings.Trim(strings.TrimSpace(in.Name), ":")
	form := url.Values{"channel": {in.Channel}, "timestamp": {in.Timestamp}, "name": {name}}
	out := ReactionOutput{Channel: in.Channel, Timestamp: in.Timestamp, Name: name}
	_, err := send(ctx, c, http.MethodPost, "reactions.add", form, nil)
	var ue *providers.UpstreamError
	if errors.As(err, &ue) && ue.Reason == "already_reacted" {
		out.AlreadyReacted = true
		return out, nil
	}
	if err != nil {
		return ReactionOutput{}, err
	}
	return out, nil
}

// RemoveReaction removes an emoji reaction from a message.
// Slack API docs: https://api.slack.com/methods/reactions.remove
//
// As add_reaction treats already_reacted, a reaction that is not there (no_reaction) is
// a success with already_removed set: the caller wanted it gone and it is.
var RemoveReaction = &providers.Operation[ReactionInput, RemoveReactionOutput]{
	Name:  "remove_reaction",
	Title: "Remove reaction",
	Description: "Remove an emoji reaction that this connection's user or bot added to a Slack message (nobody else's " +
		"reactions can be removed). Takes the same channel, timestamp and emoji name (without colons) as add_reaction. " +
		"Removing a reaction that is not there succeeds with already_removed true. Returns the message and emoji.",
	DocsURL: "https://api.slack.com/methods/reactions.remove",
	Scopes:  []string{"reactions:write"},
	Hints:   providers.Hints{Destructive: true, Idempotent: true},
	Run:     removeReaction,
}

// RemoveReactionOutput says which reaction is now off which message.
type RemoveReactionOutput struct {
	Channel        string `json:"channel" jsonschema:"Conversation ID of the message's channel"`
	Timestamp      string `json:"timestamp" jsonschema:"The message's ts"`
	Name           string `json:"name" jsonschema:"The emoji name, without colons"`
	AlreadyRemoved bool   `json:"already_removed" jsonschema:"True when the reaction was not on the message, so nothing changed"`
}

func removeReaction(ctx context.Context, c *providers.Call, in ReactionInput) (RemoveReactionOutput, error) {
	name := strings.Trim(strings.TrimSpace(in.Name), ":")
	form := url.Values{"channel": {in.Channel}, "timestamp": {in.Timestamp}, "name": {name}}
	out := RemoveReactionOutput{Channel: in.Channel, Timestamp: in.Timestamp, Name: name}
	_, err := send(ctx, c, http.MethodPost, "reactions.remove", form, nil)
	if isReason(err, "no_reaction") {
		out.AlreadyRemoved = true
		return out, nil
	}
	if err != nil {
		return RemoveReactionOutput{}, err
	}
	return out, nil
}
