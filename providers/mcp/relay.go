package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard/providers"
)

// relay hands what a remote server asks during a call (elicitation, sampling and
// roots requests; mcp-go's client gives them the context of the call they came with) to the
// calling client, through the call's providers.Caller. A request that came outside a
// call, or during a call with no MCP client behind it, is refused.
type relay struct{}

func (relay) Elicit(ctx context.Context, req mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
	var res mcpgo.ElicitationResult
	if err := ask(ctx, string(mcpgo.MethodElicitationCreate), req.Params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func (relay) CreateMessage(ctx context.Context, req mcpgo.CreateMessageRequest) (*mcpgo.CreateMessageResult, error) {
	var res mcpgo.CreateMessageResult
	if err := ask(ctx, string(mcpgo.MethodSamplingCreateMessage), req.CreateMessageParams, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func (relay) ListRoots(ctx context.Context, _ mcpgo.ListRootsRequest) (*mcpgo.ListRootsResult, error) {
	var res mcpgo.ListRootsResult
	if err := ask(ctx, string(mcpgo.MethodListRoots), struct{}{}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func ask(ctx context.Context, method string, params, out any) error {
	c := providers.CallerFrom(ctx)
	if c == nil {
		return errors.New("no MCP client to ask: Switchboard relays " + method + " only during a tool call made by one")
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	defer waitForCaller(ctx)() // the call's timeout does not count the caller's time
	res, err := c.Ask(ctx, method, raw)
	if err != nil {
		return err
	}
	return json.Unmarshal(res, out)
}

// logTap reads a call's SSE response as mcp-go does, and hands each of the server's
// log messages (notifications/message) to the calling client as it passes, in the
// stream's order. mcp-go's client gives notifications to one handler for the whole
// session, which cannot tell whose call a log message belongs to; the call's own
// stream can.
type logTap struct {
	io.ReadCloser
	caller providers.Caller
	line   []byte
	data   []byte
}

// maxEventBytes bounds what the tap holds of one event; a longer one is not relayed.
const maxEventBytes = 4 << 20

func (t *logTap) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	for _, b := range p[:n] {
		if b != '\n' {
			if len(t.line) < maxEventBytes {
				t.line = append(t.line, b)
			}
			continue
		}
		t.endLine(bytes.TrimSuffix(t.line, []byte("\r")))
		t.line = t.line[:0]
	}
	return n, err
}

func (t *logTap) endLine(line []byte) {
	if len(line) == 0 {
		if len(t.data) > 0 {
			t.event(t.data)
			t.data = t.data[:0]
		}
		return
	}
	if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		if len(t.data) > 0 {
			t.data = append(t.data, '\n')
		}
		t.data = append(t.data, bytes.TrimPrefix(rest, []byte(" "))...)
	}
}

func (t *logTap) event(data []byte) {
	if !bytes.Contains(data, []byte(`"notifications/message"`)) {
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params map[string]any  `json:"params"`
	}
	if json.Unmarshal(data, &msg) != nil || msg.Method != string(mcpgo.MethodNotificationMessage) || len(msg.ID) > 0 || msg.Params == nil {
		return
	}
	t.caller.Log(msg.Params)
}
