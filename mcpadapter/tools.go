package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/hub"
	"github.com/switchboard-hub/switchboard/router"
)

// connectionArg is the argument a tool takes when the caller has several connections
// of its provider.
const connectionArg = providers.ConnectionArgument

// hubTool is one of the registry's tools as a scope serves it: the binding (the
// connections it may run on), how a call's arguments pick the connection, and its
// definition: the shared one, or the scope's own where the scope lists it differently.
type hubTool struct {
	binding router.Binding
	single  string                  // the connection id, when there is only one (else the call names one)
	conns   *router.ConnectionIndex // the connections a call may name, by every name it may use
	profile providers.SchemaProfile // how the scope lists the tool's input
	def     *toolDef                // shared by every scope; never written
	own     *mcp.Tool               // this scope's definition where it differs from def's, else nil
}

// tool returns the definition the scope lists, as a copy the caller may change.
func (t *hubTool) tool() mcp.Tool {
	if t.own != nil {
		return *t.own
	}
	return t.def.tool
}

// request turns a call's arguments into the router request, taking the connection
// argument off when the tool has one, and turning arguments written for the listed
// input back into arguments for the full one (providers.Tool.ArgsFrom), which the
// router validates.
func (t *hubTool) request(args json.RawMessage) (router.Request, error) {
	connID := t.single
	if connID == "" && len(t.binding.Connections) > 0 || t.single != "" && t.namesConnection(args) {
		// Several accounts: the call names one. One account: a call may still name it,
		// and one naming another is refused rather than run on this one.
		var err error
		if args, connID, err = takeConnection(args, t.conns); err != nil {
			return router.Request{}, err
		}
	}
	args, err := t.binding.Tool.ArgsFrom(t.profile, args)
	if err != nil {
		return router.Request{}, switchboard.Invalid("arguments", err.Error())
	}
	return router.Request{Tool: t.binding.Tool.Name, ConnectionID: connID, Args: args}, nil
}

// namesConnection reports whether a call's arguments carry the connection argument the
// scope adds, which the tool does not take itself.
func (t *hubTool) namesConnection(args json.RawMessage) bool {
	if t.binding.Tool.TakesArgument(connectionArg) {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return false
	}
	_, ok := m[connectionArg]
	return ok
}

// needsReconnect lists the labels of the tool's connections that need reconnecting.
func (t *hubTool) needsReconnect() []string {
	var out []string
	for _, c := range t.binding.Connections {
		if c.NeedsReconnect {
			out = append(out, c.Label)
		}
	}
	return out
}

// hubTool turns a binding into the tool a scope serves: the registry's shared
// definition (its schemas, annotations from the operation's hints), or, where the scope
// lists it differently, a copy of its own: with a connection argument listing the
// caller's accounts when there are several, and marked [NEEDS RECONNECT] (it stays
// listed) when a connection needs reconnecting. The account a tool with one connection
// runs as is said once, in the scope's instructions (accountsLine), not in each tool.
func (a *Adapter) hubTool(b router.Binding) (*hubTool, error) {
	t := &hubTool{binding: b, profile: a.opts.SchemaProfile, def: a.defs.def(b.Tool, a.taskSupport(), a.opts.SchemaProfile)}
	if len(b.Connections) == 1 {
		t.single = b.Connections[0].ID
	}
	if len(b.Connections) > 0 {
		t.conns = router.NewConnectionIndex(b.Connections)
	}
	var own *mcp.Tool
	if len(b.Connections) > 1 {
		input, err := withConnectionArg(t.def.tool.RawInputSchema, b)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", b.Tool.Name, err)
		}
		c := t.def.tool
		c.RawInputSchema = input
		own = &c
	}
	if stale := t.needsReconnect(); len(stale) > 0 {
		quoted := make([]string, len(stale))
		for i, l := range stale {
			quoted[i] = fmt.Sprintf("%q", l)
		}
		if own == nil {
			c := t.def.tool
			own = &c
		}
		own.Description = fmt.Sprintf("%s The %s account %s needs reconnecting at %s before this tool works. %s",
			NeedsReconnectMark, b.Tool.Provider.Title, strings.Join(quoted, ", "), a.reconnectURL(), own.Description)
	}
	if b.Unconnected() {
		if own == nil {
			c := t.def.tool
			own = &c
		}
		own.Description = fmt.Sprintf("%s No %s account is connected yet: a call asks the person to connect one, then runs. %s",
			NotConnectedMark, b.Tool.Provider.Title, own.Description)
	}
	t.own = own
	return t, nil
}

// callHub runs a call of one of the scope's hub tools through the router. One handler
// serves all of a scope's hub tools: it finds the tool by the name called.
func (s *scope) callHub(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a := s.adapter
	name := req.Params.Name
	p, ok := switchboard.PrincipalFrom(ctx)
	if !ok {
		return nil, fmt.Errorf("no principal in context")
	}
	t, ok := s.hubTool(name)
	if !ok {
		err := switchboard.NotFound("tool " + name)
		a.opts.Router.Refused(p, router.Request{Tool: name}, err)
		return a.toolError(err), nil
	}
	args, err := rawArguments(req)
	if err != nil {
		err = switchboard.Invalid("arguments", err.Error())
		a.opts.Router.Refused(p, router.Request{Tool: name}, err)
		return a.toolError(err), nil
	}
	rreq, err := t.request(args)
	if err == nil {
		if _, starts := t.binding.Tool.Op.(providers.ToolStarter); starts {
			rreq.Args, err = s.innerRequest(rreq.Args)
		}
	}
	if err != nil {
		a.opts.Router.Refused(p, router.Request{Tool: name, Args: args}, err)
		return a.toolError(err), nil
	}
	rreq.Confirmed = confirmedFrom(ctx)
	if s.asksToConnect(ctx) {
		if need := connectNeedOf(t, rreq.ConnectionID); need.Provider != "" || connectRetry(req) {
			res, proceed, err := s.connectFirst(ctx, req, p, rreq, need)
			if !proceed {
				return res, err
			}
			return s.runConnected(ctx, req)
		}
	}
	if searchesScope(t.binding) {
		ctx = providers.WithToolScope(ctx, scopeCall{s: s, st: s.state.Load(), req: req})
	}
	var ref router.AuditRef
	out, err := a.opts.Router.Execute(router.WithAuditRef(ctx, &ref), p, rreq)
	if err != nil {
		var ue *providers.UpstreamError
		if errors.As(err, &ue) {
			if ue.Result != nil {
				return withAuditID(contentResult(ue.Result), ref.ID), nil // a remote MCP server's error, as the server gave it
			}
		}
		if credentialsRefused(err) && rreq.ConnectionID != "" && s.asksToConnect(ctx) && t.binding.Tool.Provider.OAuth != nil {
			// The provider refused the connection's credentials just now: the person
			// reconnects it from the conversation.
			need := connectNeed{ConnectLinkInput: connections.ConnectLinkInput{Provider: t.binding.Tool.Provider.Name, ConnectionID: rreq.ConnectionID},
				why: fmt.Sprintf("%s no longer accepts the connection's credentials, so %s did not run.", t.binding.Tool.Provider.Title, name)}
			res, proceed, cerr := s.connectFirst(ctx, req, p, rreq, need)
			if !proceed {
				return res, cerr
			}
			return s.runConnected(ctx, req)
		}
		res := a.toolError(err)
		if dial := providers.DialFailure(err); dial != "" && p.Operator {
			// The deployment's operator, who set the provider's base URL, is told where
			// the hub dialled and what the network said (the router logs it for everyone).
			res = mcp.NewToolResultError(a.errorText(err) + " (" + dial + ")")
		}
		return withAuditID(res, ref.ID), nil
	}
	if res, ok := out.(*providers.ContentResult); ok {
		return withAuditID(contentResult(res), ref.ID), nil // a remote MCP server's result, as the server gave it
	}
	raw, err := providers.MarshalOutput(out)
	if err != nil {
		return nil, fmt.Errorf("encode %s output: %w", name, err)
	}
	res := &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(string(raw))},
		StructuredContent: json.RawMessage(raw),
	}
	if r, ok := out.(hub.Run); ok {
		// A run the call started or read is named in _meta, as a task's is.
		m := map[string]any{"switchboard/run_id": r.ID, "switchboard/state": r.State}
		if r.ApprovalURL != "" {
			m["switchboard/approval_url"] = r.ApprovalURL
		}
		res.Meta = mcp.NewMetaFromMap(m)
	}
	return withAuditID(res, ref.ID), nil
}

// innerRequest reads the arguments of a tool that starts another (providers.ToolStarter)
// as the scope lists that other tool: its arguments back to its full schema's, and the
// account named among them (when the caller has several) as the connection.
func (s *scope) innerRequest(args json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, switchboard.Invalid("arguments", "must be a JSON object")
	}
	var name string
	if err := json.Unmarshal(m["tool"], &name); err != nil {
		return args, nil // the tool refuses it, naming the field
	}
	inner, ok := s.hubTool(name)
	if !ok {
		return args, nil // not one of the scope's: the router refuses it
	}
	in := m["arguments"]
	if len(in) == 0 || string(in) == "null" {
		in = json.RawMessage("{}")
	}
	ireq, err := inner.request(in)
	if err != nil {
		return nil, err
	}
	m["arguments"] = ireq.Args
	if ireq.ConnectionID != "" {
		if m["connection"], err = json.Marshal(ireq.ConnectionID); err != nil {
			return nil, err
		}
	}
	return json.Marshal(m)
}

// AuditIDMeta is the _meta key of a tool result that names the call's audit row.
const AuditIDMeta = "switchboard/audit_id"

// withAuditID names the call's audit row in the result's _meta.
func withAuditID(res *mcp.CallToolResult, id string) *mcp.CallToolResult {
	if id == "" {
		return res
	}
	if res.Meta == nil {
		res.Meta = mcp.NewMetaFromMap(map[string]any{AuditIDMeta: id})
		return res
	}
	if res.Meta.AdditionalFields == nil {
		res.Meta.AdditionalFields = map[string]any{}
	}
	res.Meta.AdditionalFields[AuditIDMeta] = id
	return res
}

// NotConnectedMark starts the description of a tool of a provider the caller has not
// connected (the catalog setting "all").
const NotConnectedMark = "[NOT CONNECTED]"

// NeedsReconnectMark starts the description of a tool whose connection needs
// reconnecting.
const NeedsReconnectMark = "[NEEDS RECONNECT]"

// withConnectionArg adds the required connection argument, an enum of the labels.
func withConnectionArg(input json.RawMessage, b router.Binding) (json.RawMessage, error) {
	var schema map[string]any
	if err := json.Unmarshal(input, &schema); err != nil {
		return nil, err
	}
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	if _, clash := props[connectionArg]; clash {
		return nil, fmt.Errorf("the operation already has an argument named %q", connectionArg)
	}
	enum := make([]any, 0, len(b.Connections))
	for _, c := range b.Connections {
		enum = append(enum, c.Label)
	}
	props[connectionArg] = map[string]any{
		"type":        "string",
		"enum":        enum,
		"description": fmt.Sprintf("Which connected %s account to use, by its label (a connection id works too)", b.Tool.Provider.Title),
	}
	schema["properties"] = props
	req, _ := schema["required"].([]any)
	schema["required"] = append([]any{connectionArg}, req...)
	return json.Marshal(schema)
}

// rawArguments returns the call's arguments as JSON, as the client sent them.
func rawArguments(req mcp.CallToolRequest) (json.RawMessage, error) {
	if len(req.Params.RawArguments) > 0 {
		return req.Params.RawArguments, nil
	}
	if req.Params.Arguments == nil {
		return json.RawMessage("{}"), nil
	}
	return json.Marshal(req.Params.Arguments)
}

// takeConnection removes the connection argument and resolves it to one of the tool's
// connections (see router.PickConnection). Its cost does not grow with the number of
// connections: the index is built when the tool is bound, and their labels are listed
// only in the error of a call that names none.
func takeConnection(args json.RawMessage, conns *router.ConnectionIndex) (json.RawMessage, string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, "", switchboard.Invalid("arguments", "must be a JSON object")
	}
	raw, ok := m[connectionArg]
	if !ok {
		return nil, "", switchboard.Invalid(connectionArg, "is required; one of "+router.QuotedLabels(conns.Refs()))
	}
	var named string
	if err := json.Unmarshal(raw, &named); err != nil {
		return nil, "", switchboard.Invalid(connectionArg, "must be a string")
	}
	id, err := conns.Pick(connectionArg, named)
	if err != nil {
		return nil, "", err
	}
	delete(m, connectionArg)
	rest, err := json.Marshal(m)
	return rest, id, err
}
