package mcpadapter

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/runs"
)

// TestRemoteToolErrorsKeepTheirWordsInRuns: a remote MCP server's failed tool result,
// run as a run or a task, ends as the server's own words, not rewritten as
// "mcp failed: mcp answered 200 tool_error: … Retrying later may help." (the runs
// executor records DescribeError's text; a task's result is runResult of the run).
func TestRemoteToolErrorsKeepTheirWordsInRuns(t *testing.T) {
	t.Parallel()
	remote := &providers.ContentResult{IsError: true, Content: []json.RawMessage{
		json.RawMessage(`{"type":"text","text":"cannot shout fail"}`), json.RawMessage(`{"type":"text","text":"try a quieter word"}`)}}
	err := &providers.UpstreamError{Provider: "mcp", Status: http.StatusOK, Code: switchboard.CodeUpstream, Reason: "tool_error",
		Message: "shout on the remote MCP server up: cannot shout fail", Result: remote}
	a := New(Options{})
	want := "cannot shout fail\ntry a quieter word"
	if got := a.DescribeError(err); got != want {
		t.Errorf("DescribeError = %q, want the remote's text %q", got, want)
	}
	res := runResult(runs.View{ID: "run_1", State: runs.StateFailed, Error: &runs.ErrorView{Code: "upstream", Message: a.DescribeError(err)}})
	if !res.IsError || len(res.Content) != 1 || res.Content[0].(mcp.TextContent).Text != want {
		t.Errorf("task result = %+v, want isError with the remote's text", res)
	}
	// Other upstream failures keep the hub's advice.
	other := &providers.UpstreamError{Provider: "github", Status: http.StatusBadGateway, Code: switchboard.CodeUpstream, Message: "bad gateway"}
	if got := a.DescribeError(other); got == "bad gateway" || got == "" {
		t.Errorf("DescribeError of a provider failure = %q, want the hub's explanation", got)
	}
}
