package notion

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// Block is one content block of a page, as the tools return it.
type Block struct {
	ID          string         `json:"id" jsonschema:"Block ID; pass it to get_block_children when has_children is true, or as after to append_block_children"`
	Type        string         `json:"type" jsonschema:"Block type: paragraph, heading_1, heading_2, heading_3, bulleted_list_item, numbered_list_item, to_do, toggle, code, quote, callout, child_page, child_database, image, …"`
	Text        string         `json:"text" jsonschema:"The block's text as plain text (for child_page and child_database: their title)"`
	Checked     *bool          `json:"checked,omitempty" jsonschema:"For to_do blocks: whether it is ticked"`
	HasChildren bool           `json:"has_children" jsonschema:"Whether the block has nested blocks (fetch them with get_block_children on its ID)"`
	Data        map[string]any `json:"data" jsonschema:"The block's type-specific content as Notion returns it (rich text with formatting, language of code, URLs of files, …)"`
}

// blockObject is a block as Notion returns it; the type-specific object sits under
// a key named after the type.
// https://developers.notion.com/reference/block
type blockObject struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	HasChildren bool   `json:"has_children"`
	raw         map[string]json.RawMessage
}

func (b *blockObject) UnmarshalJSON(data []byte) error {
	type plainBlock blockObject
	var p plainBlock
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*b = blockObject(p)
	return json.Unmarshal(data, &b.raw)
}

func (b blockObject) toBlock() Block {
	out := Block{ID: b.ID, Type: b.Type, HasChildren: b.HasChildren, Data: map[string]any{}}
	raw, ok := b.raw[b.Type]
	if !ok {
		return out
	}
	_ = json.Unmarshal(raw, &out.Data)
	var content struct {
		RichText []richText `json:"rich_text"`
		Title    string     `json:"title"`
		Checked  *bool      `json:"checked"`
	}
	if json.Unmarshal(raw, &content) == nil {
		out.Text = plain(content.RichText)
		if out.Text == "" {
			out.Text = content.Title
		}
		if b.Type == "to_do" {
			out.Checked = content.Checked
		}
	}
	return out
}

// GetBlockChildren reads a page's content blocks (or a block's nested blocks).
// Notion API docs: https://developers.notion.com/reference/get-block-children
var GetBlockChildren = &providers.Operation[GetBlockChildrenInput, BlockList]{
	Name:  "get_block_children",
	Title: "Get page content",
	Description: "Read the body of a Notion page: pass the page's ID as block_id to get its top-level content blocks " +
		"(paragraphs, headings, lists, to-dos, code, …) in order, a page at a time. Blocks with has_children hold " +
		"nested blocks (toggles, sub-lists): call again with that block's ID to read them. For a page's title and " +
		"properties use get_page. Returns each block's type, plain text and raw content, and next_cursor when more follow.",
	DocsURL: "https://developers.notion.com/reference/get-block-children",
	Scopes:  []string{"read_content"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getBlockChildren,
}

// GetBlockChildrenInput is the input of get_block_children.
type GetBlockChildrenInput struct {
	BlockID string `json:"block_id" jsonschema:"ID or URL of the page (for its body) or of a block with has_children" schema:"minLength=1,example=59833787-2cf9-4fdf-8782-e53db20768a5"`
	providers.PageInput
}

// BlockList is one page of blocks.
type BlockList struct {
	Blocks     []Block `json:"blocks" jsonschema:"The blocks, in document order"`
	NextCursor string  `json:"next_cursor,omitempty" jsonschema:"Pass as cursor to fetch the next page; absent on the last page"`
}

func getBlockChildren(ctx context.Context, c *providers.Call, in GetBlockChildrenInput) (BlockList, error) {
	id, err := normalizeID("block_id", in.BlockID)
	if err != nil {
		return BlockList{}, err
	}
	cursor, size, err := pageParams(in.PageInput)
	if err != nil {
		return BlockList{}, err
	}
	q := map[string][]string{"page_size": {itoa(size)}}
	if cursor != "" {
		q["start_cursor"] = []string{cursor}
	}
	var r listResponse[blockObject]
	if err := (request{method: http.MethodGet, path: "/blocks/" + id + "/children", query: q}).do(ctx, c, &r); err != nil {
		return BlockList{}, err
	}
	return toBlockList(r), nil
}

func toBlockList(r listResponse[blockObject]) BlockList {
	out := BlockList{Blocks: make([]Block, 0, len(r.Results)), NextCursor: r.next()}
	for _, b := range r.Results {
		out.Blocks = append(out.Blocks, b.toBlock())
	}
	return out
}

// AppendBlockChildren adds content to the end of a page (or after a given block).
// Notion API docs: https://developers.notion.com/reference/patch-block-children
var AppendBlockChildren = &providers.Operation[AppendBlockChildrenInput, BlockList]{
	Name:  "append_block_children",
	Title: "Append page content",
	Description: "Add content to a Notion page's body (or inside a block that can nest, such as a toggle): text becomes " +
		"paragraphs (one per blank-line-separated part); children takes Notion block objects for headings, to-dos, " +
		"lists or code, e.g. {\"type\": \"heading_2\", \"heading_2\": {\"rich_text\": [{\"text\": {\"content\": \"Notes\"}}]}}. " +
		"New blocks go at the end, or right after the block named in after. Existing content is never changed. Each " +
		"call adds the blocks again: do not retry one that succeeded. Returns the blocks added.",
	DocsURL: "https://developers.notion.com/reference/patch-block-children",
	Scopes:  []string{"insert_content"},
	Hints:   providers.Hints{},
	Run:     appendBlockChildren,
}

// AppendBlockChildrenInput is the input of append_block_children.
type AppendBlockChildrenInput struct {
	BlockID  string           `json:"block_id" jsonschema:"ID or URL of the page (or block) to add content to" schema:"minLength=1,example=59833787-2cf9-4fdf-8782-e53db20768a5"`
	Text     *string          `json:"text,omitempty" jsonschema:"Plain text to add; each part separated by a blank line becomes a paragraph" schema:"example=Decision: ship on Friday."`
	Children []map[string]any `json:"children,omitempty" jsonschema:"Notion block objects to add after text's paragraphs (at most 100 blocks in all)" schema:"maxItems=100"`
	After    *string          `json:"after,omitempty" jsonschema:"ID of an existing child block to insert after; omit to add at the end" schema:"minLength=1,example=c02fc1d3-db8b-45c5-a222-27595b15aea7"`
}

func appendBlockChildren(ctx context.Context, c *providers.Call, in AppendBlockChildrenInput) (BlockList, error) {
	id, err := normalizeID("block_id", in.BlockID)
	if err != nil {
		return BlockList{}, err
	}
	children := paragraphs(deref(in.Text))
	children = append(children, in.Children...)
	switch {
	case len(children) == 0:
		return BlockList{}, switchboard.Invalid("text", "nothing to add: give text or children")
	case len(children) > maxChildren:
		return BlockList{}, switchboard.Invalid("children", "Notion takes at most 100 blocks at once (paragraphs of text included); split the content over several calls")
	}
	body := map[string]any{"children": children}
	if in.After != nil {
		after, err := normalizeID("after", *in.After)
		if err != nil {
			return BlockList{}, err
		}
		body["after"] = after
	}
	var r listResponse[blockObject]
	if err := (request{method: http.MethodPatch, path: "/blocks/" + id + "/children", body: body}).do(ctx, c, &r); err != nil {
		return BlockList{}, err
	}
	return toBlockList(r), nil
}
