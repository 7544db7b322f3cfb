package providers

import (
	"encoding/json"
	"strings"

	"github.com/switchboard-hub/switchboard"
)

// ContentResult is the answer of a tool that answers in MCP content rather than in a
// typed output (a remote MCP server's tool): its content blocks as the server sent them
// (each a JSON object with its "type"), its structured content if any, and whether the
// server marked it failed. Runs, REST and workflow steps store it as this JSON; the MCP
// surface answers with the blocks as they are.
type ContentResult struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
	IsError           bool              `json:"isError,omitempty"`
	// Meta is the result's _meta where the hub made it (the run a call started, named
	// for the client), never a remote server's.
	Meta map[string]any `json:"_meta,omitempty"`
}

// Text is the text of the result's text blocks, one per line.
func (r *ContentResult) Text() string {
	var parts []string
	for _, c := range r.Content {
		var block struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(c, &block) == nil && block.Type == "text" {
			parts = append(parts, block.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// JSONContent is v as a ContentResult: its JSON as structured content and as the
// one text block, failed when isError (a hub tool whose answer says it failed, such
// as a workflow run that ended failed).
func JSONContent(v any, isError bool) (*ContentResult, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, switchboard.Internal(err)
	}
	text, err := json.Marshal(map[string]string{"type": "text", "text": string(raw)})
	if err != nil {
		return nil, switchboard.Internal(err)
	}
	return &ContentResult{Content: []json.RawMessage{text}, StructuredContent: raw, IsError: isError}, nil
}
