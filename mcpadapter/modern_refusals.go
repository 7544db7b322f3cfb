package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard/mcptransport"
)

// TasksExtension is the identifier of MCP's tasks extension, under which the
// 2026-07-28 version negotiates tasks: the server lists it in server/discover's
// capabilities.extensions, and a client declares it in its request's
// clientCapabilities.extensions.
const TasksExtension = "io.modelcontextprotocol/tasks"

// removedIn20260728 are the methods the 2026-07-28 version removed. mcp-go answers
// them with method not found when the request carries its _meta; one without _meta
// got 400 for the missing _meta instead, although no _meta makes such a method valid.
var removedIn20260728 = map[string]bool{
	string(mcp.MethodPing):                 true,
	string(mcp.MethodSetLogLevel):          true,
	string(mcp.MethodResourcesSubscribe):   true,
	string(mcp.MethodResourcesUnsubscribe): true,
	// The tasks extension inlines a task's result in tasks/get and has no listing.
	string(mcp.MethodTasksResult): true,
	string(mcp.MethodTasksList):   true,
}

// modernRefusal answers a request of the 2026-07-28 version that the hub refuses
// before mcp-go reads it, and reports whether it did: a method the version removed
// (method not found, 404, as the version prescribes), and a tasks request (tasks/*, or
// a task-augmented tools/call) from a client that did not declare the tasks extension
// (-32021, missing required client capability, 400).
func (a *Adapter) modernRefusal(w http.ResponseWriter, msg mcptransport.Message) bool {
	if removedIn20260728[msg.Method] {
		mcptransport.WriteRPCError(w, http.StatusNotFound, msg.ID, mcp.METHOD_NOT_FOUND,
			`"`+msg.Method+`" was removed in protocol version `+mcp.ProtocolVersion20260728)
		return true
	}
	if !a.servesTasks() || msg.Params.Meta.ProtocolVersion() == "" || !asksForTasks(msg) {
		return false
	}
	if caps := msg.Params.Meta.ClientCapabilities(); caps != nil {
		if _, ok := caps.Extensions[TasksExtension]; ok {
			return false
		}
	}
	writeMissingTasks(w, msg)
	return true
}

// writeMissingTasks refuses msg for want of the tasks extension in its client
// capabilities: -32021 (400), whose data names what the client must declare, as
// MissingRequiredClientCapabilityError gives it (requiredCapabilities, a
// ClientCapabilities object).
func writeMissingTasks(w http.ResponseWriter, msg mcptransport.Message) {
	mcptransport.WriteRPCErrorData(w, http.StatusBadRequest, msg.ID, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY,
		"missing required client capability: "+msg.Method+" needs the "+TasksExtension+
			" extension, declared in _meta's "+mcp.MetaKeyClientCapabilities+".extensions",
		map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}})
}

// asksForTasks reports whether a request is one of the tasks extension's: a tasks/*
// method, or a tools/call with a task.
func asksForTasks(msg mcptransport.Message) bool {
	if strings.HasPrefix(msg.Method, "tasks/") {
		return true
	}
	if msg.Method != string(mcp.MethodToolsCall) {
		return false
	}
	var p struct {
		Task json.RawMessage `json:"task"`
	}
	return json.Unmarshal(msg.RawParams, &p) == nil && len(p.Task) > 0 && string(p.Task) != "null"
}

// servesTasks reports whether an extension of the adapter runs task-augmented calls.
func (a *Adapter) servesTasks() bool {
	for _, e := range a.opts.Extensions {
		if e.TaskSupport {
			return true
		}
	}
	return false
}

// On 2026-07-28 a server must not rely on a capability its client did not declare in
// the request's clientCapabilities: a request whose processing needs one is refused
// with MissingRequiredClientCapabilityError (-32021, 400), naming it. A tool call
// turns to its client only when its tool (or a remote server behind it) asks
// something (caller.Ask): a call that asked what its client did not declare, and
// failed, is answered with that refusal in place of its failure. A call that got on
// without the answer keeps its result.

// missingCapability is a request of a call's that its client cannot take for want of
// a capability it did not declare.
type missingCapability struct{ capability string }

func (e missingCapability) Error() string {
	return "the calling client does not support " + e.capability
}

func (e missingCapability) Unwrap() error {
	return mcp.MissingRequiredClientCapabilityError{Capability: e.capability}
}

// capabilityRefusal is what a 2026-07-28 request's call asked that its client did not
// declare, for the answer (refuseUndeclared).
type capabilityRefusal struct {
	id      json.RawMessage // the request's JSON-RPC id
	mu      sync.Mutex
	missing []string
}

type capabilityRefusalKey struct{}

func withCapabilityRefusal(ctx context.Context, c *capabilityRefusal) context.Context {
	return context.WithValue(ctx, capabilityRefusalKey{}, c)
}

func capabilityRefusalFrom(ctx context.Context) *capabilityRefusal {
	c, _ := ctx.Value(capabilityRefusalKey{}).(*capabilityRefusal)
	return c
}

// noteMissing records that the request's call needed a capability its client did
// not declare, when err says so.
func noteMissing(ctx context.Context, err error) {
	var m missingCapability
	c := capabilityRefusalFrom(ctx)
	if c == nil || !errors.As(err, &m) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.missing, m.capability) {
		c.missing = append(c.missing, m.capability)
	}
}

// refusal returns the -32021 answer (status and body) in place of answer, a failed
// call's, when the call needed a capability its client did not declare.
func (c *capabilityRefusal) refusal(answer []byte) (*mcptransport.BufferWriter, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	missing := slices.Clone(c.missing)
	c.mu.Unlock()
	if len(missing) == 0 || !failedAnswer(answer) {
		return nil, false
	}
	required := map[string]any{}
	for _, name := range missing {
		required[name] = map[string]any{}
	}
	bw := mcptransport.NewBufferWriter()
	mcptransport.WriteRPCErrorData(bw, http.StatusBadRequest, c.id, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY,
		"missing required client capability: the call needs "+strings.Join(missing, ", ")+
			", which the client did not declare in _meta's "+mcp.MetaKeyClientCapabilities,
		map[string]any{"requiredCapabilities": required})
	return bw, true
}

// failedAnswer reports whether a call's answer (a JSON-RPC response, or an SSE stream
// ending with one) is a failure: an error, or a result marked isError.
func failedAnswer(answer []byte) bool {
	body := bytes.TrimSpace(answer)
	if !json.Valid(body) {
		events := mcptransport.SSEData(body)
		if len(events) == 0 {
			return false
		}
		body = events[len(events)-1]
	}
	var msg struct {
		Error  json.RawMessage `json:"error"`
		Result struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return false
	}
	return len(msg.Error) > 0 && string(msg.Error) != "null" || msg.Result.IsError
}
