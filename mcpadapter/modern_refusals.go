package mcpadapter

import (
	"encoding/json"
	"net/http"
	"strings"

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
