package jira

import (
	"encoding/json"
	"strings"
)

// Jira REST v3 takes and returns rich text (descriptions, comments) as Atlassian
// Document Format. https://developer.atlassian.com/cloud/jira/platform/apis/document/structure/

// adfFromText builds an ADF document from plain text: one paragraph per
// blank-line-separated part, single line breaks kept as hard breaks.
func adfFromText(text string) map[string]any {
	paras := []any{}
	for part := range strings.SplitSeq(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n") {
		part = strings.Trim(part, "\n")
		if strings.TrimSpace(part) == "" {
			continue
		}
		var content []any
		for i, line := range strings.Split(part, "\n") {
			if i > 0 {
				content = append(content, map[string]any{"type": "hardBreak"})
			}
			if line != "" {
				content = append(content, map[string]any{"type": "text", "text": line})
			}
		}
		paras = append(paras, map[string]any{"type": "paragraph", "content": content})
	}
	return map[string]any{"type": "doc", "version": 1, "content": paras}
}

// adfNode is one node of an ADF document.
type adfNode struct {
	Type    string         `json:"type"`
	Text    string         `json:"text"`
	Attrs   map[string]any `json:"attrs"`
	Content []adfNode      `json:"content"`
}

// adfText renders an ADF document (or a plain string, which Jira sends for some
// fields) as plain text: blocks on their own lines, list items prefixed with "- ",
// mentions and emoji by their text, links by their URL.
func adfText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var doc adfNode
	if json.Unmarshal(raw, &doc) != nil {
		return ""
	}
	var b strings.Builder
	writeADF(&b, doc)
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func writeADF(b *strings.Builder, n adfNode) {
	attr := func(k string) string {
		v, _ := n.Attrs[k].(string)
		return v
	}
	switch n.Type {
	case "text":
		b.WriteString(n.Text)
		return
	case "hardBreak":
		b.WriteString("\n")
		return
	case "mention", "emoji", "status", "date":
		if t := attr("text"); t != "" {
			b.WriteString(t)
		}
		return
	case "inlineCard", "blockCard", "embedCard":
		b.WriteString(attr("url"))
		return
	case "listItem":
		b.WriteString("- ")
	case "rule":
		b.WriteString("---\n")
		return
	}
	for _, child := range n.Content {
		writeADF(b, child)
	}
	switch n.Type {
	case "paragraph", "heading", "codeBlock", "blockquote", "panel", "tableRow":
		b.WriteString("\n")
	case "listItem":
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
	case "tableCell", "tableHeader":
		b.WriteString(" | ")
	}
}
