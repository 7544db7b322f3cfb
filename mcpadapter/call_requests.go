package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/mcptransport"
)

// mcp-go sends a sampling request of a session on the session's GET stream only (its
// elicitation requests go on the calling POST's stream): a client that holds no GET
// stream, or reads server requests only on the stream of its call, never saw it. The
// hub sends such a request of a call on the call's stream itself (mcptransport.CallStream) and
// takes the client's answer before mcp-go does, here or, when the answer reaches
// another node, from the relay.

// callRequests are the requests the hub sent on calls' streams that wait for the
// client's answer, by session and JSON-RPC id.
type callRequests struct {
	mu      sync.Mutex
	waiting map[string]chan json.RawMessage
}

// askOnStream sends a request to the client of a call on the call's stream and returns
// the client's result; a JSON-RPC error answer is an error with its message.
func (a *Adapter) askOnStream(ctx context.Context, cs *mcptransport.CallStream, method string, params json.RawMessage) (json.RawMessage, error) {
	id := json.RawMessage(strconv.Quote("switchboard-" + switchboard.NewID("req")))
	key := mcptransport.RequestKey(cs.Session(), id)
	answer := make(chan json.RawMessage, 1)
	a.asks.mu.Lock()
	if a.asks.waiting == nil {
		a.asks.waiting = map[string]chan json.RawMessage{}
	}
	a.asks.waiting[key] = answer
	a.asks.mu.Unlock()
	defer func() {
		a.asks.mu.Lock()
		delete(a.asks.waiting, key)
		a.asks.mu.Unlock()
	}()
	msg, err := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if _, err := cs.Add("", msg); err != nil {
		return nil, fmt.Errorf("send %s on the call's stream: %w", method, err)
	}
	select {
	case body := <-answer:
		var res struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &res); err != nil {
			return nil, fmt.Errorf("the client's answer to %s: %w", method, err)
		}
		if res.Error != nil {
			return nil, fmt.Errorf("the client refused %s: %s (%d)", method, res.Error.Message, res.Error.Code)
		}
		if len(res.Result) == 0 {
			return nil, errors.New("the client answered " + method + " with no result")
		}
		return res.Result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// answerCall hands a client's answer (body) to the request of the session waiting for
// it on this node, and reports whether one was.
func (a *Adapter) answerCall(session string, body []byte) bool {
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &msg) != nil || len(msg.ID) == 0 {
		return false
	}
	key := mcptransport.RequestKey(session, msg.ID)
	a.asks.mu.Lock()
	answer, ok := a.asks.waiting[key]
	delete(a.asks.waiting, key)
	a.asks.mu.Unlock()
	if ok {
		answer <- append(json.RawMessage(nil), body...)
	}
	return ok
}
