package mcpadapter

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// toolError renders a failed call as a tool result with isError set and a message an
// agent can act on: which argument to fix, when to retry, where to reconnect.
func (a *Adapter) toolError(err error) *mcp.CallToolResult {
	return mcp.NewToolResultError(a.errorText(err))
}

func (a *Adapter) errorText(err error) string {
	var ue *providers.UpstreamError
	if errors.As(err, &ue) {
		// A remote MCP server's failed tool result says what failed in its own words:
		// a run's or a task's error is those words, as a direct call's result is the
		// server's result itself.
		if ue.Result != nil {
			if text := ue.Result.Text(); text != "" {
				return text
			}
		}
		switch ue.Code {
		case switchboard.CodeRateLimited:
			return fmt.Sprintf("Rate limited by %s: retry after %d s. (%s)", ue.Provider, retrySeconds(ue.RetryAfter), ue.Error())
		case switchboard.CodeReconnect:
			return fmt.Sprintf("%s no longer accepts this connection's credentials (%s): the token was revoked or expired. Reconnect it at %s and retry.", ue.Provider, ue.Error(), a.reconnectURL())
		case switchboard.CodeForbidden:
			return fmt.Sprintf("%s refused the request: %s. The connection's token may lack a scope or permission for this.", ue.Provider, ue.Error())
		case switchboard.CodeNotFound:
			return fmt.Sprintf("Not found at %s: %s. Check the identifiers; the account may not have access.", ue.Provider, ue.Error())
		case switchboard.CodeInvalid, switchboard.CodeConflict:
			if se := (*switchboard.Error)(nil); errors.As(err, &se) && se.Field != "" {
				return fmt.Sprintf("%s rejected argument %q: %s", ue.Provider, se.Field, ue.Error())
			}
			return fmt.Sprintf("%s rejected the arguments: %s", ue.Provider, ue.Error())
		default:
			return fmt.Sprintf("%s failed: %s. Retrying later may help.", ue.Provider, ue.Error())
		}
	}
	e := switchboard.AsError(err)
	switch e.Code {
	case switchboard.CodeInvalid:
		if e.Field != "" {
			return fmt.Sprintf("Invalid argument %q: %s.", e.Field, e.Message)
		}
		return "Invalid arguments: " + e.Message
	case switchboard.CodeReconnect:
		return fmt.Sprintf("%s. Reconnect it at %s and retry.", e.Message, a.reconnectURL())
	case switchboard.CodeInternal:
		return "Switchboard failed to run this tool (internal error); the operator has the details."
	default:
		return e.Message
	}
}

// approvalURL is the page where a person approves or declines a run's confirmation.
func (a *Adapter) approvalURL(runID string) string {
	return a.opts.PublicURL + ApprovalPath + runID
}

// ApprovalPath is the path of the approval pages, followed by the run's id.
const ApprovalPath = "/approvals/"

func (a *Adapter) reconnectURL() string {
	if a.opts.PublicURL == "" {
		return "the Switchboard connections page"
	}
	return a.opts.PublicURL + "/#connections"
}

func retrySeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

// contentResult is a tool's answer in MCP content as the MCP result: its blocks as the
// upstream gave them. A block mcp-go cannot read is answered as its JSON in a text
// block, so nothing the upstream said is lost.
func contentResult(r *providers.ContentResult) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: make([]mcp.Content, 0, len(r.Content)), IsError: r.IsError}
	for _, raw := range r.Content {
		c, err := mcp.UnmarshalContent(raw)
		if err != nil {
			c = mcp.NewTextContent(string(raw))
		}
		res.Content = append(res.Content, c)
	}
	if len(r.StructuredContent) > 0 {
		res.StructuredContent = r.StructuredContent
	}
	if len(r.Meta) > 0 {
		res.Meta = mcp.NewMetaFromMap(maps.Clone(r.Meta))
	}
	return res
}
