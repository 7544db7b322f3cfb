package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/providers"
)

// instrument wraps a hub tool's handler with what the caller asked for besides the
// result, and with the caller itself (providers.Caller) for what a remote MCP server
// asks of it during the call: progress notifications when the request carries a progress token (one per
// upstream response, so a call that pages through results reports each page), and log
// notifications at the session's level: the call starting (info), and its outcome
// (debug when it worked, warning or error when not). mcp-go drops a notification that
// loses the race with the call's response, so the outcome lines are best effort; the
// result itself carries the outcome.
func (s *scope) instrument(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		name := req.Params.Name
		ctx = s.withProgress(ctx, req)
		ctx = providers.WithCaller(ctx, caller{s: s, ctx: ctx})
		// A line is built only when the session takes its level: most calls send none.
		if logs(ctx, mcp.LoggingLevelInfo) {
			s.log(ctx, mcp.LoggingLevelInfo, map[string]any{"event": "tool_call", "tool": name})
		}
		res, err := next(ctx, req)
		switch {
		case err != nil:
			if logs(ctx, mcp.LoggingLevelError) {
				s.log(ctx, mcp.LoggingLevelError, map[string]any{"event": "tool_failed", "tool": name})
			}
		case res != nil && res.IsError:
			if logs(ctx, mcp.LoggingLevelWarning) {
				s.log(ctx, mcp.LoggingLevelWarning, map[string]any{"event": "tool_error", "tool": name, "message": firstText(res)})
			}
		default:
			if logs(ctx, mcp.LoggingLevelDebug) {
				s.log(ctx, mcp.LoggingLevelDebug, map[string]any{"event": "tool_done", "tool": name})
			}
		}
		return res, err
	}
}

// withProgress returns ctx reporting progress (providers.ReportProgress) to the
// caller as notifications/progress, when the call carries a progress token.
func (s *scope) withProgress(ctx context.Context, req mcp.CallToolRequest) context.Context {
	if s == nil || req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return ctx
	}
	return providers.WithProgress(ctx, s.progressSender(ctx, req.Params.Meta.ProgressToken))
}

// progressSender returns a ProgressFunc that sends notifications/progress for the
// token, with a progress value that only increases (from 0 on).
func (s *scope) progressSender(ctx context.Context, token mcp.ProgressToken) providers.ProgressFunc {
	var mu sync.Mutex
	last, sent := 0.0, false
	return func(done, total float64, message string) {
		mu.Lock()
		defer mu.Unlock()
		if sent && done <= last || done < 0 {
			done = last + 1 // the first may be 0 (a remote server's "0 of 100")
		}
		last, sent = done, true
		params := map[string]any{"progressToken": token, "progress": done}
		if total > 0 {
			params["total"] = total
		}
		if message != "" {
			params["message"] = message
		}
		s.deliver(ctx, func(ctx context.Context) error {
			return s.mcp.SendNotificationToClient(ctx, "notifications/progress", params)
		})
	}
}

// queue runs send, which queues a notification for the calling session, until the
// queue has room or ctx ends. mcp-go's queue holds 100 notifications and refuses more
// without waiting; a burst larger than that (a remote server's progress relayed as it
// comes) lost the rest. Waiting here holds back whoever reports, as a slow client
// should, and the order of the notifications is kept.
func queue(ctx context.Context, send func() error) {
	wait := 100 * time.Microsecond
	for {
		err := send()
		if !errors.Is(err, server.ErrNotificationChannelBlocked) {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, 10*time.Millisecond)
	}
}

// logs reports whether a log line at level would reach the calling session, by the
// test mcp-go's SendLogMessageToClient makes before it sends one: an initialized
// session whose level (or, in the stateless version, the request's) takes it.
func logs(ctx context.Context, level mcp.LoggingLevel) bool {
	sess := server.ClientSessionFromContext(ctx)
	if sess == nil || !sess.Initialized() {
		return false
	}
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.LogLevel != "" && level.ShouldSendTo(info.LogLevel)
	}
	sl, ok := sess.(server.SessionWithLogging)
	return ok && level.ShouldSendTo(sl.GetLogLevel())
}

// log sends a log notification to the calling session when its level asks for it.
func (s *scope) log(ctx context.Context, level mcp.LoggingLevel, data any) {
	s.deliver(ctx, func(ctx context.Context) error {
		return s.mcp.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(level, "switchboard", data))
	})
}

func firstText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			return t.Text
		}
	}
	return fmt.Sprintf("%d content items", len(res.Content))
}

// deliver sends a notification of the calling client's request through send, given
// the context to send with: on the call's own stream when the request is a call of a
// session (mcptransport.CallStream), on the session's queue otherwise (see queue).
func (s *scope) deliver(ctx context.Context, send func(context.Context) error) {
	if pc := pendingFrom(ctx); pc != nil && pc.answered.Load() {
		return // a held call's request was answered: its stream is gone (input_requests.go)
	}
	if cs := mcptransport.CallStreamFrom(ctx); cs != nil {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			rs := &routedSession{ClientSession: sess, ch: make(chan mcp.JSONRPCNotification, 1)}
			if err := send(s.mcp.WithContext(ctx, rs)); err != nil {
				return
			}
			select {
			case n := <-rs.ch:
				if err := cs.Notify(n); !errors.Is(err, mcptransport.ErrCallEnded) {
					return
				}
			default:
				return // mcp-go sent nothing (a log line under the session's level)
			}
		}
	}
	queue(ctx, func() error { return send(ctx) })
}

// routedSession is the calling session as mcp-go's senders see it when the hub sends
// a notification of one call: what they queue lands on ch, for the call's stream.
// It does not switch the session's answers to SSE (the call's stream is the hub's).
type routedSession struct {
	server.ClientSession
	ch chan mcp.JSONRPCNotification
}

func (r *routedSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return r.ch }

// GetLogLevel is the session's level, which mcp-go's log sender compares with.
func (r *routedSession) GetLogLevel() mcp.LoggingLevel {
	if l, ok := r.ClientSession.(server.SessionWithLogging); ok {
		return l.GetLogLevel()
	}
	return mcp.LoggingLevelError
}

func (r *routedSession) SetLogLevel(level mcp.LoggingLevel) {
	if l, ok := r.ClientSession.(server.SessionWithLogging); ok {
		l.SetLogLevel(level)
	}
}

var _ server.SessionWithLogging = (*routedSession)(nil)
