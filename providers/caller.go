package providers

import (
	"context"
	"encoding/json"
)

// Caller is the MCP client a call came from, for an upstream that turns to it during
// the call: a remote MCP server's log messages, and its elicitation, sampling
// and roots requests, go to the client that made the call (the MCP adapter sets it, remotemcp
// relays to it).
type Caller interface {
	// Log sends the client a log message: the params of a notifications/message
	// (level, logger, data), at the client's chosen log level.
	Log(params map[string]any)
	// Ask sends the client a request made during the call (elicitation/create,
	// sampling/createMessage or roots/list) with its params, and returns the client's
	// result.
	Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

type callerKey struct{}

// WithCaller returns a context whose calls may turn to c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the context's Caller, or nil when the call has no client to turn
// to (REST, runs in the background).
func CallerFrom(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}

type streamReleaseKey struct{}

// WithStreamRelease returns a context whose call may release its client's stream
// (ReleaseStream) with release, which reports whether it did.
func WithStreamRelease(ctx context.Context, release func() bool) context.Context {
	return context.WithValue(ctx, streamReleaseKey{}, release)
}

// ReleaseStream lets the call's client poll for the answer instead of holding its
// stream open: an MCP call answered on a resumable SSE stream has that stream closed
// now, the call runs on, and the client resumes the stream with Last-Event-ID to get
// what follows, the answer included (SEP-1699). It reports whether there was such a
// stream; a call without one (REST, a client that cannot resume) goes on unchanged.
func ReleaseStream(ctx context.Context) bool {
	release, _ := ctx.Value(streamReleaseKey{}).(func() bool)
	return release != nil && release()
}
