// Package bench measures the hub end to end: tool calls through the real MCP endpoint,
// router, connection pool and batched audit writer against a fake upstream that answers
// at once, side by side with direct calls to the same upstream. docs/performance.md holds
// the figures and the commands that produce them.
package bench
