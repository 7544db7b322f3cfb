package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// confirmKey names the confirmation among a call's input requests.
const confirmKey = "switchboard_confirm"

// confirmedKey marks the context of a hub tool's call whose confirmation was given.
type confirmedKey struct{}

// withConfirmed marks a call as confirmed by the person (the client's form).
func withConfirmed(ctx context.Context) context.Context {
	return context.WithValue(ctx, confirmedKey{}, true)
}

// confirmedFrom reports whether the call was confirmed.
func confirmedFrom(ctx context.Context) bool {
	ok, _ := ctx.Value(confirmedKey{}).(bool)
	return ok
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
	what := runs.Summary(tool, account)
	return confirmation{stored: what, shown: what + " Arguments: " + clipText(string(rreq.Args), 1000)}
}

// clipText cuts s to its first n bytes, marking the cut.
func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
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

// confirmBox reads the form's checkbox in an answer's content: whether it is ticked,
// and whether the content has it at all.
func confirmBox(content any) (ticked, present bool) {
	m, _ := content.(map[string]any)
	ticked, present = m["confirm"].(bool)
	return ticked, present
}

// accepted reports whether an answer to the client's form says yes: accept, with the
// form's required checkbox ticked. An accept whose content lacks it does not answer the
// form that was asked, and runs nothing.
func accepted(action string, content any) bool {
	ticked, _ := confirmBox(content)
	return action == string(mcp.ElicitationResponseActionAccept) && ticked
}

// gate runs before a call the principal's policy wants confirmed (prep.NeedsConfirm).
// It answers confirmed when the person accepted in the client's form; otherwise the
// result to answer instead: a request for the person's answer (the client asks them
// and calls again), a refusal when they declined or the answer does not belong to this
// call, or, when the client cannot ask or the policy accepts only a person on the
// approval page, the input_required run to confirm. Every step leaves an audit row.
func (x *runsExt) gate(ctx context.Context, sc Scope, req mcp.CallToolRequest, prep router.Prepared, b router.Binding, rreq router.Request, origin runs.Origin) (*mcp.CallToolResult, bool) {
	p, _ := switchboard.PrincipalFrom(ctx)
	person := prep.Policy.Approval == router.ApprovalPerson
	c := summarize(prep.Tool, b, rreq)
	if !person {
		call := stateCall{p: p, agentID: sc.AgentID, origin: origin, rreq: rreq}
		if res, confirmed, asked := confirmInForm(ctx, x.states, sc.s.adapter.opts.Router, req, call, c.shown); asked {
			return res, confirmed
		}
	}
	v, err := x.o.Runs.StartConfirm(ctx, p, runs.Call{Tool: rreq.Tool, ConnectionID: rreq.ConnectionID, Args: rreq.Args, Origin: origin}, c.stored)
	if err != nil {
		return x.hubError(ctx, sc, err), false
	}
	return inputRequired(v, c.shown, sc.s.adapter.approvalURL(v.ID), person), false
}

// confirmRecorder records the steps of a confirmation, and the refusal of an answer
// that does not count: the router.
type confirmRecorder interface {
	RecordConfirmation(c router.Confirmation)
	Refused(p switchboard.Principal, req router.Request, err error)
}

// confirmInForm takes the confirmation of a call the caller's policy lets the client
// relay (approval relay) in the client's form: confirmed when the person accepted;
// else the result to answer instead: the form to show (the client asks the person and
// calls again; before 2026-07-28 mcp-go sends it as elicitation/create), a refusal when
// the answer does not belong to this call, or the person's decline. asked is false
// when the client cannot show the form: the caller then starts an input_required run.
// Every step leaves an audit row.
func confirmInForm(ctx context.Context, states requestStates, rec confirmRecorder, req mcp.CallToolRequest, call stateCall, shown string) (res *mcp.CallToolResult, confirmed, asked bool) {
	step := func(kind audit.Kind, detail string) {
		rec.RecordConfirmation(router.Confirmation{Kind: kind, Principal: call.p, Tool: call.rreq.Tool, ConnectionID: call.rreq.ConnectionID, Detail: detail})
	}
	answer, err := states.answer(req, call)
	if err != nil {
		rec.Refused(call.p, call.rreq, err)
		return mcp.NewToolResultError(errorText(err)), false, true
	}
	decide := func(answer *mcp.ElicitationResult) (*mcp.CallToolResult, bool, bool) {
		if accepted(string(answer.Action), answer.Content) {
			step(router.KindConfirmationAccepted, "accept (the client's form)")
			return nil, true, true
		}
		how := string(answer.Action)
		if answer.Action == mcp.ElicitationResponseActionAccept {
			how = "accept without confirm: true"
		}
		step(router.KindConfirmationDeclined, how+" (the client's form)")
		return declined(call.rreq.Tool, string(answer.Action)), false, true
	}
	if answer != nil {
		return decide(answer)
	}
	if !canElicit(ctx) {
		return nil, false, false
	}
	step(router.KindConfirmationAsked, "the client's form")
	params := mcp.ElicitationParams{Mode: mcp.ElicitationModeForm, Message: shown, RequestedSchema: confirmForm}
	if info := server.RequestProtocolInfoFromContext(ctx); info == nil || !info.Modern {
		// Before 2026-07-28 the hub sends the elicitation/create itself, so that a
		// client's error to it is the call's answer, saying what happened (mcp-go's
		// bridge of input requests made it a JSON-RPC internal error).
		if srv := server.ServerFromContext(ctx); srv != nil {
			answer, err := srv.RequestElicitation(ctx, mcp.ElicitationRequest{Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)}, Params: params})
			if err == nil && answer == nil {
				err = errors.New("no answer")
			}
			if err != nil {
				step(router.KindConfirmationDeclined, "error (the client's form): "+clipText(err.Error(), 200))
				return formFailed(call.rreq.Tool, err), false, true
			}
			return decide(answer)
		}
	}
	return server.NewInputRequestBuilder(states.issue(call)).Elicit(confirmKey, params).ToolResult(), false, true
}

// formFailed is the result of a call whose confirmation form the client answered with
// an error (it could not show it, or the person closed it in a way the client reports
// as one).
func formFailed(tool string, err error) *mcp.CallToolResult {
	return mcp.NewToolResultError(fmt.Sprintf("The client could not ask the person to confirm %s (%s), so nothing was run. Ask the person whether to run it, then call again.", tool, clipText(err.Error(), 300)))
}

// answer returns the client's answer to the confirmation of the call, when it answers
// one the hub asked: the call comes again with the requestState the question carried
// (the bridge of the session protocols echoes it too). An answer without one was never
// asked for and counts for nothing (nil: the hub asks); one with a requestState that
// is not the call's, or expired, is refused.
func (s requestStates) answer(req mcp.CallToolRequest, call stateCall) (*mcp.ElicitationResult, error) {
	answer := server.ElicitationResponse(req.Params.InputResponses, confirmKey)
	if answer == nil || req.Params.RequestState == "" {
		return nil, nil
	}
	if err := s.check(req.Params.RequestState, call); err != nil {
		return nil, err
	}
	return answer, nil
}

// declined is the result of a call the person declined or dismissed.
func declined(tool, action string) *mcp.CallToolResult {
	how, what := "declined", tool
	switch action {
	case string(mcp.ElicitationResponseActionCancel):
		how = "dismissed the confirmation of"
	case string(mcp.ElicitationResponseActionAccept):
		what += " (the form's confirm was not ticked)"
	}
	return mcp.NewToolResultError(fmt.Sprintf("The person %s %s, so nothing was run. Do not retry unless they ask for it.", how, what))
}

// inputRequired is the result of a call that waits for a confirmation the client could
// not ask for (or that only a person on the approval page may give): the run to
// confirm, and how.
func inputRequired(v runs.View, shown, approval string, person bool) *mcp.CallToolResult {
	expires := ""
	if v.Elicitation != nil && v.Elicitation.ExpiresAt != nil {
		expires = " before " + v.Elicitation.ExpiresAt.UTC().Format("15:04 MST")
	}
	lines := []string{fmt.Sprintf("Not run yet: this call needs the person's confirmation (input_required). Run %s waits for it%s.", v.ID, expires), shown}
	if person {
		lines = append(lines, fmt.Sprintf("Only a signed-in person may approve it: ask them to approve or decline it at %s; then switchboard_get_run with run_id %q gives the output. Do not approve it yourself.", approval, v.ID))
	} else {
		lines = append(lines, fmt.Sprintf("Show this to the person. They approve or decline it at %s; or, only with their answer, call switchboard_submit_elicitation with run_id %q and response {\"action\": \"accept\"} (or \"decline\"). Then switchboard_get_run gives the output.", approval, v.ID))
	}
	res := mcp.NewToolResultError(strings.Join(lines, "\n"))
	res.Meta = mcp.NewMetaFromMap(map[string]any{"switchboard/run_id": v.ID, "switchboard/state": string(v.State), "switchboard/approval_url": approval})
	return res
}
