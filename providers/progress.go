package providers

import "context"

// ProgressFunc receives the progress of a call: done units of work out of total (0
// when unknown), and a short message.
type ProgressFunc func(done, total float64, message string)

type progressKey struct{}

// WithProgress returns a context whose calls report their progress to fn (the MCP
// adapter sets it when the caller asked for progress notifications).
func WithProgress(ctx context.Context, fn ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ReportProgress reports progress to the context's ProgressFunc, if any. Operations
// that page through results call it after each page; the hub's client reports each
// upstream response.
func ReportProgress(ctx context.Context, done, total float64, message string) {
	if fn, ok := ctx.Value(progressKey{}).(ProgressFunc); ok && fn != nil {
		fn(done, total, message)
	}
}

// WantsProgress reports whether the context's caller asked for progress (a remote MCP
// call then asks its server for progress notifications, and relays them).
func WantsProgress(ctx context.Context) bool {
	fn, ok := ctx.Value(progressKey{}).(ProgressFunc)
	return ok && fn != nil
}
