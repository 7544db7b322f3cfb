package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// The confirm policies: when a tool call asks the person first.
const (
	ConfirmNever       = "never"
	ConfirmDestructive = "destructive"
	ConfirmAlways      = "always"
)

// ConfirmPolicy says when a principal's tool calls must be confirmed by a person
// before they run: "never", "destructive" (tools whose hints say destructive) or
// "always". An agent's own policy may override its tenant's (the agents service).
type ConfirmPolicy interface {
	ConfirmPolicy(ctx context.Context, p switchboard.Principal) (string, error)
}

// confirmKey names the confirmation among a call's input requests.
const confirmKey = "switchboard_confirm"

// needsConfirm reports whether a call of tool must be confirmed in this scope.
func (x *runsExt) needsConfirm(ctx context.Context, sc Scope, tool *providers.Tool) (bool, error) {
	if x.o.Confirm == nil {
		return false, nil
	}
	policy, err := x.o.Confirm.ConfirmPolicy(ctx, sc.Principal)
	if err != nil {
		return false, err
	}
	switch policy {
	case ConfirmAlways:
		return true, nil
	case ConfirmDestructive:
		return tool.Info.Hints.Destructive, nil
	default:
		return false, nil
	}
}

// canElicit reports whether the client of this request can show a form to the person:
// it declared the elicitation capability (form mode), in this request's metadata
// (protocol 2026-07-28) or when its session was initialized.
func canElicit(ctx context.Context) bool {
	formOK := func(c *mcp.ElicitationCapability) bool {
		return c != nil && (c.Form != nil || c.URL == nil) // {} means form, for older clients
	}
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.ClientCapabilities != nil && formOK(info.ClientCapabilities.Elicitation)
	}
	sess := server.ClientSessionFromContext(ctx)
	if _, ok := sess.(server.SessionWithElicitation); !ok {
		return false
	}
	ci, ok := sess.(server.SessionWithClientInfo)
	return ok && formOK(ci.GetClientCapabilities().Elicitation)
}

// confirmation is what a person is asked before a call runs.
type confirmation struct {
	// stored is the summary kept with an input_required run: what will happen, without
	// the argument values (the run's input is sealed; its summary is not).
	stored string
	// shown is the summary the person sees, with the arguments.
	shown string
}

// summarize describes a call for the person who confirms it.
func summarize(tool *providers.Tool, b router.Binding, rreq router.Request) confirmation {
	account := rreq.ConnectionID
	for _, c := range b.Connections {
		if c.ID == rreq.ConnectionID {
			account = c.Label
		}
	}
	what := fmt.Sprintf("%s (%s) will run as %s account %q.", tool.Info.Title, tool.Name, tool.Provider.Title, account)
	if tool.Info.Hints.Destructive {
		what += " It may delete or overwrite what cannot be restored."
	} else if !tool.Info.Hints.ReadOnly {
		what += " It changes data at " + tool.Provider.Title + "."
	}
	args := string(rreq.Args)
	if len(args) > 1000 {
		args = args[:1000] + "…"
	}
	return confirmation{
		stored: "Confirm: " + what,
		shown:  "Confirm: " + what + " Arguments: " + args,
	}
}

// confirmForm is the form the person answers: one checkbox, ticked.
var confirmForm = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"confirm": map[string]any{
			"type":        "boolean",
			"title":       "Run it",
			"description": "Untick, or decline, to run nothing.",
			"default":     true,
		},
	},
	"required": []string{"confirm"},
}

// accepted reports whether an elicitation answer says yes: accept, and the checkbox
// not unticked.
func accepted(action string, content any) bool {
	if action != string(mcp.ElicitationResponseActionAccept) {
		return false
	}
	if m, ok := content.(map[string]any); ok {
		if v, ok := m["confirm"].(bool); ok && !v {
			return false
		}
	}
	return true
}

// gate runs before a call that may need the person's confirmation. It returns nil to
// let the call run, or the result to answer instead: a request for the person's
// answer (the client asks them and calls again), a refusal when they declined, or, when
// the client cannot ask, the input_required run to confirm with
// switchboard_submit_elicitation.
func (x *runsExt) gate(ctx context.Context, sc Scope, req mcp.CallToolRequest, tool *providers.Tool, b router.Binding, rreq router.Request, origin runs.Origin) (*mcp.CallToolResult, error) {
	need, err := x.needsConfirm(ctx, sc, tool)
	if err != nil {
		return x.hubError(ctx, sc, err), nil
	}
	if !need {
		return nil, nil
	}
	if answer := server.ElicitationResponse(req.Params.InputResponses, confirmKey); answer != nil {
		if accepted(string(answer.Action), answer.Content) {
			return nil, nil
		}
		return declined(tool.Name, string(answer.Action)), nil
	}
	c := summarize(tool, b, rreq)
	if canElicit(ctx) {
		return server.NewInputRequestBuilder("").Elicit(confirmKey, mcp.ElicitationParams{
			Mode:            mcp.ElicitationModeForm,
			Message:         c.shown,
			RequestedSchema: confirmForm,
		}).ToolResult(), nil
	}
	p, _ := switchboard.PrincipalFrom(ctx)
	v, err := x.o.Runs.StartConfirm(ctx, p, runs.Call{Tool: rreq.Tool, ConnectionID: rreq.ConnectionID, Args: rreq.Args, Origin: origin, Spec: tool}, c.stored)
	if err != nil {
		return x.hubError(ctx, sc, err), nil
	}
	return inputRequired(v, c.shown), nil
}

// declined is the result of a call the person declined or dismissed.
func declined(tool, action string) *mcp.CallToolResult {
	how := "declined"
	if action == string(mcp.ElicitationResponseActionCancel) {
		how = "dismissed the confirmation of"
	}
	res := mcp.NewToolResultError(fmt.Sprintf("The person %s %s, so nothing was run. Do not retry unless they ask for it.", how, tool))
	return res
}

// inputRequired is the result of a call that waits for a confirmation the client could
// not ask for: the run to confirm, and how.
func inputRequired(v runs.View, shown string) *mcp.CallToolResult {
	expires := ""
	if v.Elicitation != nil && v.Elicitation.ExpiresAt != nil {
		expires = " before " + v.Elicitation.ExpiresAt.UTC().Format("15:04 MST")
	}
	text := strings.Join([]string{
		fmt.Sprintf("Not run yet: this call needs the person's confirmation (input_required), and this client cannot ask them. Run %s waits for it.", v.ID),
		shown,
		fmt.Sprintf("Show this to the person. Only with their answer, call switchboard_submit_elicitation with run_id %q and response {\"action\": \"accept\"} (or \"decline\")%s; then switchboard_get_run gives the output.", v.ID, expires),
	}, "\n")
	res := mcp.NewToolResultError(text)
	res.Meta = mcp.NewMetaFromMap(map[string]any{"switchboard/run_id": v.ID, "switchboard/state": string(v.State)})
	return res
}

// viewResult renders a run as a tool result: its JSON as structured content and text.
func viewResult(v any) (*mcp.CallToolResult, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode run: %w", err)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(string(raw))},
		StructuredContent: json.RawMessage(raw),
	}, nil
}
