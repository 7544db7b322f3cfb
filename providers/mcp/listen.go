package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// listen keeps a Streamable HTTP session's stream of server notifications open until
// ctx ends, so that a tools/list_changed the server sends while no call is in flight
// reaches the hub: the standalone GET stream of the legacy protocol, or on 2026-07-28
// a subscriptions/listen request. It replaces mcp-go's deprecated
// WithContinuousListening, which pins a session to the legacy protocol.
// Notifications go to handle; a request the server sends on this stream belongs to
// no call, and is refused. (A call's own notifications come on the call's stream;
// mcp-go servers, though, send them on the GET stream while one is open, where a
// call's progress can arrive after its result and is then dropped.)
func (s *Service) listen(ctx context.Context, sess *session, hc *http.Client, url string, handle func(mcpgo.JSONRPCNotification)) {
	wait := time.Second
	for ctx.Err() == nil {
		var err error
		start := time.Now()
		if mcpgo.IsModernProtocol(sess.client.ProtocolVersion()) {
			err = sess.client.Listen(ctx, mcpgo.SubscriptionFilter{ToolsListChanged: true})
		} else {
			err = s.listenGET(ctx, sess, hc, url, handle)
		}
		if ctx.Err() != nil {
			return
		}
		switch {
		case errors.Is(err, errNoStream):
			return // the server offers no stream: tools are re-read when a session opens
		case errors.Is(err, transport.ErrSessionTerminated):
			sess.lost.Store(true) // the server forgot the session: the next use opens one
			return
		case err != nil:
			s.log.Debug("remote MCP notification stream ended", "connection", sess.id, "err", err)
		}
		if time.Since(start) > time.Minute {
			wait = time.Second // the stream worked for a while: start the backoff over
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// errNoStream says the server answered the GET stream with 405: it offers none.
var errNoStream = errors.New("the server offers no notification stream")

// listenGET reads the legacy standalone GET stream until it ends.
func (s *Service) listenGET(ctx context.Context, sess *session, hc *http.Client, url string, handle func(mcpgo.JSONRPCNotification)) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	if id := sess.client.GetSessionId(); id != "" {
		req.Header.Set(transport.HeaderKeySessionID, id)
	}
	if v := sess.client.ProtocolVersion(); v != "" {
		req.Header.Set(transport.HeaderKeyProtocolVersion, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusMethodNotAllowed:
		return errNoStream
	case resp.StatusCode == http.StatusNotFound:
		return transport.ErrSessionTerminated
	case resp.StatusCode != http.StatusOK:
		return errors.New("GET stream answered " + resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var data bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if data.Len() > 0 {
				s.streamMessage(ctx, sess, hc, url, data.Bytes(), handle)
				data.Reset()
			}
			continue
		}
		if rest, ok := strings.CutPrefix(line, "data:"); ok {
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(rest, " "))
		}
	}
	return sc.Err()
}

// streamMessage handles one message of the GET stream: a notification goes to
// handle; a request is answered with an error, because it was sent outside any call
// and so there is no caller to relay it to.
func (s *Service) streamMessage(ctx context.Context, sess *session, hc *http.Client, url string, raw []byte, handle func(mcpgo.JSONRPCNotification)) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(raw, &msg) != nil || msg.Method == "" {
		return
	}
	if len(msg.ID) == 0 || string(msg.ID) == "null" {
		var n mcpgo.JSONRPCNotification
		if json.Unmarshal(raw, &n) == nil {
			handle(n)
		}
		return
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": mcpgo.JSONRPC_VERSION, "id": msg.ID, "error": map[string]any{
		"code": mcpgo.INVALID_REQUEST, "message": "Switchboard relays a server's " + msg.Method + " only on the stream of the tool call it belongs to"}})
	_ = postMessage(ctx, sess, hc, url, body)
}

// postMessage posts a JSON-RPC message (an answer) to the server in the session.
func postMessage(ctx context.Context, sess *session, hc *http.Client, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id := sess.client.GetSessionId(); id != "" {
		req.Header.Set(transport.HeaderKeySessionID, id)
	}
	if v := sess.client.ProtocolVersion(); v != "" {
		req.Header.Set(transport.HeaderKeyProtocolVersion, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return errors.New("the server answered " + resp.Status)
	}
	return nil
}
