package notion

import (
	"context"
	"net/http"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// AddComment comments on a page or replies in a discussion.
// Notion API docs: https://developers.notion.com/reference/create-a-comment
var AddComment = &providers.Operation[AddCommentInput, Comment]{
	Name:  "add_comment",
	Title: "Add comment",
	Description: "Post a comment on a Notion page (page_id starts a new discussion at the page's top) or reply in an " +
		"existing discussion thread (discussion_id); give exactly one. The integration needs the Insert comments " +
		"capability. Each call posts a new comment: do not retry one that succeeded. Returns the new comment with its " +
		"discussion_id, for replies.",
	DocsURL: "https://developers.notion.com/reference/create-a-comment",
	Scopes:  []string{"insert_comments"},
	Hints:   providers.Hints{},
	Run:     addComment,
}

// AddCommentInput is the input of add_comment.
type AddCommentInput struct {
	PageID       *string `json:"page_id,omitempty" jsonschema:"ID or URL of the page to comment on; give this or discussion_id" schema:"minLength=1,example=59833787-2cf9-4fdf-8782-e53db20768a5"`
	DiscussionID *string `json:"discussion_id,omitempty" jsonschema:"ID of the discussion thread to reply in; give this or page_id" schema:"minLength=1,example=f1407351-36f5-4c49-a13c-49f8ba11776d"`
	Text         string  `json:"text" jsonschema:"The comment's text" schema:"minLength=1,maxLength=2000,example=Looks good to me."`
}

// Comment is a comment Notion stored.
type Comment struct {
	ID           string `json:"id" jsonschema:"The comment's ID"`
	DiscussionID string `json:"discussion_id" jsonschema:"The discussion thread it belongs to; pass it as discussion_id to reply"`
	Text         string `json:"text" jsonschema:"The comment's text as plain text"`
	CreatedTime  string `json:"created_time" jsonschema:"When it was posted (RFC 3339)"`
}

type commentObject struct {
	ID           string     `json:"id"`
	DiscussionID string     `json:"discussion_id"`
	RichText     []richText `json:"rich_text"`
	CreatedTime  string     `json:"created_time"`
}

func addComment(ctx context.Context, c *providers.Call, in AddCommentInput) (Comment, error) {
	body := map[string]any{"rich_text": textValue(in.Text)}
	switch {
	case in.PageID != nil && in.DiscussionID != nil:
		return Comment{}, switchboard.Invalid("discussion_id", "give either page_id or discussion_id, not both")
	case in.PageID != nil:
		id, err := normalizeID("page_id", *in.PageID)
		if err != nil {
			return Comment{}, err
		}
		body["parent"] = map[string]any{"page_id": id}
	case in.DiscussionID != nil:
		id, err := normalizeID("discussion_id", *in.DiscussionID)
		if err != nil {
			return Comment{}, err
		}
		body["discussion_id"] = id
	default:
		return Comment{}, switchboard.Invalid("page_id", "is required: give page_id (a new comment) or discussion_id (a reply)")
	}
	var r commentObject
	if err := (request{method: http.MethodPost, path: "/comments", body: body}).do(ctx, c, &r); err != nil {
		return Comment{}, err
	}
	return Comment{ID: r.ID, DiscussionID: r.DiscussionID, Text: plain(r.RichText), CreatedTime: r.CreatedTime}, nil
}
