package providers

import (
	"context"
	"encoding/json"
	"errors"
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

// InputRequest is one request a call makes of its client under a key the call names
// (user_name, confirm, …): an elicitation/create, sampling/createMessage or roots/list
// with its params.
type InputRequest struct {
	Key    string
	Method string
	Params json.RawMessage
}

// InputAnswer is the client's answer to one InputRequest: its result, or why there is
// none (the client did not declare the capability the request needs, or could not
// answer it).
type InputAnswer struct {
	Result json.RawMessage
	Err    error
	// Round is the round trip whose requestState brought the answer on 2026-07-28: 1
	// for the call that answered the first input_required, 2 for the next, … (the hub
	// checked the requestState it issued); 0 when the client answered during the call
	// (earlier versions) or sent the answer with a call before it was asked.
	Round int
}

// InputAsker is a Caller that asks several requests at once, each under its key. On
// 2026-07-28 they go back to the client together, as one input_required answer to the
// call under those keys, and the call goes on when the client calls again with the
// answers; an answer the client sent already under a key with the call (it knew what
// would be asked) is taken without asking. Before 2026-07-28 they are sent one after
// the other during the call. A request whose capability the client did not declare is
// not sent: its answer is the error that says so.
type InputAsker interface {
	AskAll(ctx context.Context, reqs []InputRequest) ([]InputAnswer, error)
}

// AskAll asks the context's client the requests (see InputAsker) and returns the
// answers in the same order; with a Caller that is no InputAsker, one after the other
// with Ask.
func AskAll(ctx context.Context, reqs []InputRequest) ([]InputAnswer, error) {
	c := CallerFrom(ctx)
	if c == nil {
		return nil, errors.New("the call has no MCP client to ask")
	}
	if a, ok := c.(InputAsker); ok {
		return a.AskAll(ctx, reqs)
	}
	out := make([]InputAnswer, len(reqs))
	for i, r := range reqs {
		out[i].Result, out[i].Err = c.Ask(ctx, r.Method, r.Params)
	}
	return out, nil
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

// ContinueAsTask says that the rest of ctx's call runs as a task: a call whose
// operation asks before its task (Info.AsksBeforeTask) has gathered its input, and its
// client is answered with the task now while the call goes on. Elsewhere (a direct
// call, a call already answered with its task) nothing changes.
func ContinueAsTask(ctx context.Context) {
	if c, ok := CallerFrom(ctx).(interface{ ContinueAsTask() }); ok {
		c.ContinueAsTask()
	}
}
