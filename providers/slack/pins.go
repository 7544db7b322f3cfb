package slack

import (
	"context"
	"net/http"
	"net/url"

	"github.com/switchboard-hub/switchboard/providers"
)

// PinRef names a message to pin or unpin.
type PinRef struct {
	Channel   string `json:"channel" jsonschema:"Conversation ID of the message's channel, e.g. C0123ABCD" schema:"example=C0123ABCD,pattern=^[CDG][A-Z0-9]+$"`
	Timestamp string `json:"timestamp" jsonschema:"The message's ts, e.g. 1712345678.123456" schema:"example=1712345678.123456,pattern=^[0-9]+\\.[0-9]+$"`
}

// PinMessage pins a message to its channel.
// Slack API docs: https://api.slack.com/methods/pins.add
//
// Slack answers already_pinned for a message that is pinned; that is a success with
// already_pinned set, so the operation is idempotent and safe to retry.
var PinMessage = &providers.Operation[PinRef, PinOutput]{
	Name:  "pin_message",
	Title: "Pin message",
	Description: "Pin a Slack message to its channel, so members find it in the channel's pinned items (decisions, " +
		"runbooks, the current plan). The connection must be a member of the channel. Pinning a message that is pinned " +
		"already succeeds with changed false. Returns the message and whether anything changed.",
	DocsURL: "https://api.slack.com/methods/pins.add",
	Scopes:  []string{"pins:write"},
	Hints:   providers.Hints{Idempotent: true},
	Run:     pinMessage,
}

// PinOutput says which message is now pinned or unpinned.
type PinOutput struct {
	Channel   string `json:"channel" jsonschema:"Conversation ID of the message's channel"`
	Timestamp string `json:"timestamp" jsonschema:"The message's ts"`
	Changed   bool   `json:"changed" jsonschema:"False when the message was already in the wanted state (pinned, or not pinned), so nothing changed"`
}

func pinMessage(ctx context.Context, c *providers.Call, in PinRef) (PinOutput, error) {
	return pin(ctx, c, "pins.add", "already_pinned", in)
}

// pin calls pins.add or pins.remove; the Slack code that means "already so" is a success.
func pin(ctx context.Context, c *providers.Call, method, alreadyCode string, in PinRef) (PinOutput, error) {
	out := PinOutput{Channel: in.Channel, Timestamp: in.Timestamp, Changed: true}
	_, err := send(ctx, c, http.MethodPost, method, url.Values{"channel": {in.Channel}, "timestamp": {in.Timestamp}}, nil)
	if isReason(err, alreadyCode) {
		out.Changed = false
		return out, nil
	}
	if err != nil {
		return PinOutput{}, err
	}
	return out, nil
}

// UnpinMessage removes a message's pin.
// Slack API docs: https://api.slack.com/methods/pins.remove
var UnpinMessage = &providers.Operation[PinRef, PinOutput]{
	Name:  "unpin_message",
	Title: "Unpin message",
	Description: "Remove a message from its Slack channel's pinned items; the message itself stays. Unpinning a message " +
		"that is not pinned succeeds with changed false. list_pins shows what is pinned. Returns the message and " +
		"whether anything changed.",
	DocsURL: "https://api.slack.com/methods/pins.remove",
	Scopes:  []string{"pins:write"},
	Hints:   providers.Hints{Destructive: true, Idempotent: true},
	Run:     unpinMessage,
}

func unpinMessage(ctx context.Context, c *providers.Call, in PinRef) (PinOutput, error) {
	return pin(ctx, c, "pins.remove", "not_pinned", in)
}

// ListPins lists a channel's pinned items.
// Slack API docs: https://api.slack.com/methods/pins.list
var ListPins = &providers.Operation[ListPinsInput, ListPinsOutput]{
	Name:  "list_pins",
	Title: "List pins",
	Description: "List the pinned items of a Slack channel, newest pin first: pinned messages (with their text, author " +
		"and ts) and pinned files (with their ID and name). Use it to find a channel's runbooks, decisions or the " +
		"current plan. Slack answers every pin at once (a channel has at most 100), so there is no paging. Returns " +
		"the pins, each with who pinned it and when.",
	DocsURL: "https://api.slack.com/methods/pins.list",
	Scopes:  []string{"pins:read"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listPins,
}

// ListPinsInput is the input of list_pins.
type ListPinsInput struct {
	Channel string `json:"channel" jsonschema:"Conversation ID of the channel, e.g. C0123ABCD" schema:"example=C0123ABCD,pattern=^[CDG][A-Z0-9]+$"`
}

// ListPinsOutput is a channel's pins.
type ListPinsOutput struct {
	Pins []Pin `json:"pins" jsonschema:"The pinned items, newest pin first"`
}

// Pin is one pinned item.
type Pin struct {
	Type      string   `json:"type" jsonschema:"What is pinned: message or file"`
	Created   int64    `json:"created,omitempty" jsonschema:"When it was pinned, in Unix seconds"`
	CreatedBy string   `json:"created_by,omitempty" jsonschema:"User ID of the person who pinned it"`
	Message   *Message `json:"message,omitempty" jsonschema:"The pinned message, for type message"`
	FileID    string   `json:"file_id,omitempty" jsonschema:"The pinned file's ID (F…), for type file"`
	FileName  string   `json:"file_name,omitempty" jsonschema:"The pinned file's name, for type file"`
}

type pinsListResponse struct {
	envelope
	Items []struct {
		Type      string        `json:"type"`
		Created   int64         `json:"created"`
		CreatedBy string        `json:"created_by"`
		Message   *slackMessage `json:"message"`
		File      *struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"file"`
	} `json:"items"`
}

func listPins(ctx context.Context, c *providers.Call, in ListPinsInput) (ListPinsOutput, error) {
	var r pinsListResponse
	if _, err := send(ctx, c, http.MethodGet, "pins.list", url.Values{"channel": {in.Channel}}, &r); err != nil {
		return ListPinsOutput{}, err
	}
	out := ListPinsOutput{Pins: make([]Pin, 0, len(r.Items))}
	for _, it := range r.Items {
		p := Pin{Type: it.Type, Created: it.Created, CreatedBy: it.CreatedBy}
		if it.Message != nil {
			m := it.Message.message()
			p.Message = &m
		}
		if it.File != nil {
			p.FileID, p.FileName = it.File.ID, it.File.Name
		}
		out.Pins = append(out.Pins, p)
	}
	return out, nil
}
