package hubspot

import (
	"context"
	"net/http"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// CreateNote logs a note on the timelines of contacts, companies or deals.
// HubSpot API docs: https://developers.hubspot.com/docs/api/crm/notes
var CreateNote = &providers.Operation[CreateNoteInput, Note]{
	Name:  "create_note",
	Title: "Create note",
	Description: "Log a note (a call summary, meeting minutes, a reminder) on the timeline of one or more HubSpot " +
		"contacts, companies or deals: give the note text and at least one record ID in contact_ids, company_ids or " +
		"deal_ids. Use update_contact, update_company or update_deal to change a record's fields instead. Each call " +
		"logs a new note: do not retry one that succeeded. Returns the note's ID, text, timestamp and the records it " +
		"is attached to.",
	DocsURL: "https://developers.hubspot.com/docs/api/crm/notes",
	Scopes:  []string{"crm.objects.contacts.write"},
	Hints:   providers.Hints{},
	Run:     createNote,
}

// CreateNoteInput is the input of create_note.
type CreateNoteInput struct {
	Body       string   `json:"body" jsonschema:"The note's text; simple HTML (<b>, <i>, <br>, <ul>) is kept" schema:"minLength=1,maxLength=65536,example=Called Ada: she wants a quote by Friday."`
	ContactIDs []string `json:"contact_ids,omitempty" jsonschema:"IDs of contacts whose timelines show the note" schema:"maxItems=20,example=51"`
	CompanyIDs []string `json:"company_ids,omitempty" jsonschema:"IDs of companies whose timelines show the note" schema:"maxItems=20,example=1011"`
	DealIDs    []string `json:"deal_ids,omitempty" jsonschema:"IDs of deals whose timelines show the note" schema:"maxItems=20,example=2001"`
	Timestamp  *string  `json:"timestamp,omitempty" jsonschema:"When the noted event happened, which places the note on the timeline (RFC 3339); now when omitted" schema:"format=date-time,example=2026-11-20T15:04:05Z"`
	OwnerID    *string  `json:"owner_id,omitempty" jsonschema:"The HubSpot owner (user) ID shown as the note's author" schema:"example=91011,pattern=^[0-9]{1,20}$"`
}

// Note is the output of create_note.
type Note struct {
	ID         string              `json:"id" jsonschema:"The note's ID"`
	Body       string              `json:"body" jsonschema:"The note's text"`
	Timestamp  string              `json:"timestamp" jsonschema:"Where the note sits on the timeline (RFC 3339)"`
	CreatedAt  string              `json:"created_at" jsonschema:"When the note was created (RFC 3339)"`
	AttachedTo map[string][]string `json:"attached_to" jsonschema:"IDs of the records the note is attached to, by object type"`
}

func createNote(ctx context.Context, c *providers.Call, in CreateNoteInput) (Note, error) {
	ts := time.Now().UTC().Format(time.RFC3339)
	if in.Timestamp != nil {
		t, err := time.Parse(time.RFC3339, *in.Timestamp)
		if err != nil {
			return Note{}, switchboard.Invalid("timestamp", "must be an RFC 3339 time, e.g. 2026-11-20T15:04:05Z")
		}
		ts = t.UTC().Format(time.RFC3339)
	}
	var list []Association
	attached := map[string][]string{}
	for _, g := range []struct {
		typ string
		ids []string
	}{{"contacts", in.ContactIDs}, {"companies", in.CompanyIDs}, {"deals", in.DealIDs}} {
		for _, id := range g.ids {
			list = append(list, Association{ObjectType: g.typ, ID: id})
		}
		if len(g.ids) > 0 {
			attached[g.typ] = g.ids
		}
	}
	if len(list) == 0 {
		return Note{}, switchboard.Invalid("contact_ids", "give at least one record to attach the note to: contact_ids, company_ids or deal_ids")
	}
	for _, g := range []struct {
		field string
		ids   []string
	}{{"contact_ids", in.ContactIDs}, {"company_ids", in.CompanyIDs}, {"deal_ids", in.DealIDs}} {
		for i, id := range g.ids {
			if err := checkID(g.field+"."+itoa(i), id); err != nil {
				return Note{}, err
			}
		}
	}
	assoc, err := associationsBody("notes", list, "associations")
	if err != nil {
		return Note{}, err
	}
	props := map[string]string{"hs_note_body": in.Body, "hs_timestamp": ts}
	if in.OwnerID != nil {
		props["hubspot_owner_id"] = *in.OwnerID
	}
	var r recordObject
	if err := (request{method: http.MethodPost, path: "/crm/v3/objects/notes", body: map[string]any{"properties": props, "associations": assoc}}).do(ctx, c, &r); err != nil {
		return Note{}, err
	}
	out := Note{ID: r.ID, CreatedAt: r.CreatedAt, AttachedTo: attached}
	if v := r.Properties["hs_note_body"]; v != nil {
		out.Body = *v
	}
	if v := r.Properties["hs_timestamp"]; v != nil {
		out.Timestamp = *v
	}
	return out, nil
}
