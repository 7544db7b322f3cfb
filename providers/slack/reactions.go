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
var AddReaction = &providers.Operation[AddReactionInput, AddReactionOutput]{
	Name:  "add_reaction",
	Title: "Add reaction",
	Description: "Add an emoji reaction to a Slack message. channel is the conversation ID (C0123ABCD), timestamp the " +
		"message's ts (e.g. 1712345678.123456, from get_channel_history or post_message), name the emoji name without " +
		"colons (thumbsup, white_check_mark, eyes, or a custom emoji's name). Adding a reaction that is already there " +
		"succeeds with already_reacted true.",
	DocsURL: "https://api.slack.com/methods/reactions.add",
	Scopes:  []string{"reactions:write"},
	Hints:   providers.Hints{Idempotent: true},
	Run:     addReaction,
}

// AddReactionInput is the input of add_reaction.
type AddReactionInput struct {
	Channel   string `json:"channel" jsonschema:"Conversation ID of the message's channel, e.g. C0123ABCD" schema:"pattern=^[CDG][A-Z0-9]+$"`
	Timestamp string `json:"timestamp" jsonschema:"The message's ts, e.g. 1712345678.123456" schema:"pattern=^[0-9]+\\.[0-9]+$"`
	Name      string `json:"name" jsonschema:"Emoji name without colons, e.g. thumbsup; a skin tone is written thumbsup::skin-tone-2" schema:"minLength=1,maxLength=100"`
}

// AddReactionOutput says which reaction is now on which message.
type AddReactionOutput struct {
	Channel        string `json:"channel" jsonschema:"Conversation ID of the message's channel"`
	Timestamp      string `json:"timestamp" jsonschema:"The message's ts"`
	Name           string `json:"name" jsonschema:"The emoji name, without colons"`
	AlreadyReacted bool   `json:"already_reacted" jsonschema:"True when the reaction was already there, so nothing changed"`
}

func addReaction(ctx context.Context, c *providers.Call, in AddReactionInput) (AddReactionOutput, error) {
	name := strings.Trim(strings.TrimSpace(in.Name), ":")
	form := url.Values{"channel": {in.Channel}, "timestamp": {in.Timestamp}, "name": {name}}
	out := AddReactionOutput{Channel: in.Channel, Timestamp: in.Timestamp, Name: name}
	_, err := send(ctx, c, http.MethodPost, "reactions.add", form, nil)
	var ue *providers.UpstreamError
	if errors.As(err, &ue) && ue.Reason == "already_reacted" {
		out.AlreadyReacted = true
		return out, nil
	}
	if err != nil {
		return AddReactionOutput{}, err
	}
	return out, nil
}
