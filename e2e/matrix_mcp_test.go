package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// protocolVersions are the MCP versions the hub serves, newest first: the stateless
// 2026-07-28 and the session-based ones before it.
var protocolVersions = mcp.ValidProtocolVersions

// tasksVersion is the protocol version of the MCP tasks cells (the first with tasks).
const tasksVersion = mcp.ProtocolVersion20251125

// matrixSession is a client of an MCP URL at one protocol version, with what the server
// sent it besides answers.
type matrixSession struct {
	c        *client.Client
	version  string // as negotiated
	progress atomic.Int32
	// elicited counts the elicitation/create requests the client answered.
	elicited atomic.Int32
}

// sessionKey names a cached session.
func sessionKey(principal, url, version string, elicit bool) string {
	return fmt.Sprintf("%s\x00%s\x00%s\x00%v", principal, url, version, elicit)
}

// session returns the principal's session of url at version (one per rig, reused by
// the cells); elicit makes a client that accepts every elicitation.
func (r *matrixRig) session(principal, url, version string, elicit bool) (*matrixSession, error) {
	k := sessionKey(principal, url, version, elicit)
	if s, ok := r.sessions[k]; ok {
		return s, nil
	}
	s := &matrixSession{}
	opts := []client.ClientOption{client.WithProtocolVersion(version)}
	if elicit {
		opts = append(opts, client.WithElicitationHandler(acceptAll{s}))
	}
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + r.keys[principal]}))
	if err != nil {
		return nil, err
	}
	c := client.NewClient(tr, opts...)
	ctx, cancel := context.WithTimeout(r.t.Context(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationProgress) {
			s.progress.Add(1)
		}
	})
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "surface-matrix", Version: "1"}
	if elicit {
		init.Params.Capabilities.Elicitation = &mcp.ElicitationCapability{}
	}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	s.c, s.version = c, res.ProtocolVersion
	r.t.Cleanup(func() { _ = c.Close() })
	r.sessions[k] = s
	return s, nil
}

// acceptAll answers every elicitation with accept, counting them.
type acceptAll struct{ s *matrixSession }

func (a acceptAll) Elicit(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.s.elicited.Add(1)
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"confirm": true}}}, nil
}

// listed returns the session's tools, by name.
func (s *matrixSession) listed(ctx context.Context) (map[string]mcp.Tool, error) {
	res, err := s.c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return nil, err
	}
	out := map[string]mcp.Tool{}
	for _, tool := range res.Tools {
		out[tool.Name] = tool
	}
	return out, nil
}

// call calls a tool (with a progress token) and returns its text and structured
// content as one string, and whether it is a tool error.
func (s *matrixSession) call(ctx context.Context, name string, args map[string]any) (string, bool, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	req.Params.Meta = &mcp.Meta{ProgressToken: "matrix-" + name}
	res, err := s.c.CallTool(ctx, req)
	if err != nil {
		return "", false, err
	}
	return resultText(res), res.IsError, nil
}

// resultText is a tool result's text contents and structured content, joined.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case mcp.TextContent:
			parts = append(parts, c.Text)
		case mcp.ResourceLink:
			parts = append(parts, "resource_link "+c.URI)
		}
	}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		parts = append(parts, string(b))
	}
	return strings.Join(parts, "\n")
}

// callAsTask sends a task-augmented tools/call and returns the task's id, or the
// answer when the call was not made a task.
func (s *matrixSession) callAsTask(ctx context.Context, name string, args map[string]any) (string, json.RawMessage, error) {
	res, err := s.c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(time.Now().UnixNano()),
		Method: string(mcp.MethodToolsCall), Params: map[string]any{"name": name, "arguments": args, "task": map[string]any{"ttl": 60000}}})
	if err != nil {
		return "", nil, err
	}
	if res.Error != nil {
		return "", nil, fmt.Errorf("JSON-RPC error %d: %s", res.Error.Code, res.Error.Message)
	}
	var created struct {
		Task *struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if json.Unmarshal(res.Result, &created) != nil || created.Task == nil || created.Task.TaskID == "" {
		return "", res.Result, nil
	}
	return created.Task.TaskID, nil, nil
}

// taskResult waits for the task's end and returns its result's text and error flag.
func (s *matrixSession) taskResult(ctx context.Context, id string) (string, bool, error) {
	req := mcp.TaskResultRequest{}
	req.Params.TaskId = id
	res, err := s.c.TaskResult(ctx, req)
	if err != nil {
		return "", false, err
	}
	return resultText(&mcp.CallToolResult{Content: res.Content, StructuredContent: res.StructuredContent, IsError: res.IsError}), res.IsError, nil
}
