package providers

import (
	"context"
	"encoding/json"
)

// SelfConfirming is an operation of a provider that confirms itself (Spec.ConfirmsItself)
// that can say before it runs whether a call needs a person's confirmation under the
// caller's confirm policy, and what to show the person (a workflow: what its steps will
// change). The MCP surface then asks in the client's form, where the client has one,
// and runs the call with Call.Confirmed once the person accepted; without a form the
// operation itself leaves the call waiting for its approval page.
type SelfConfirming interface {
	Confirmation(ctx context.Context, c *Call, args json.RawMessage) (message string, needed bool, err error)
}

// ToolStarter is an operation whose arguments name another tool and carry that tool's
// own arguments, as "tool" and "arguments", and the account it runs as, as "connection"
// (switchboard_run_async). A surface that lists tools otherwise than by their full
// schemas (a schema profile, a connection argument) reads the inner arguments as it
// reads a direct call of that tool.
type ToolStarter interface {
	StartsTool()
}
