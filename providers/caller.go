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

// ContinueAsTask says that the rest of ctx's call runs as a task: a call whose
// operation asks before its task (Info.AsksBeforeTask) has gathered its input, and its
// client is answered with the task now while the call goes on. Elsewhere (a direct
// call, a call already answered with its task) nothing changes.
func ContinueAsTask(ctx context.Context) {
	if c, ok := CallerFrom(ctx).(interface{ ContinueAsTask() }); ok {
		c.ContinueAsTask()
	}
}
