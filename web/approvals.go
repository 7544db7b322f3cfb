package web

import (
	"context"
	"crypto/subtle"
	"net/http"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// Approvals is what the approval pages need of the runs executor. Every method
// answers only about runs the principal, a signed-in person, may confirm (a user of
// the run's tenant who may use its connection); others are not found.
type Approvals interface {
	// Approval returns one run's confirmation.
	Approval(ctx context.Context, p switchboard.Principal, runID string) (Approval, error)
	// Approve gives the person's answer: "accept" or "decline".
	Approve(ctx context.Context, p switchboard.Principal, runID, action string) (Approval, error)
	// Pending lists the confirmations that wait for an answer p may give.
	Pending(ctx context.Context, p switchboard.Principal) ([]Approval, error)
}

// Approval is a run that asked for a person's confirmation, as its page shows it.
type Approval struct {
	RunID     string
	Tool      string
	Account   string // the account it runs as
	Requester string // who asked, as people know them: a person's email, an agent's name
	Message   string // what will happen
	Arguments string // the call's arguments, as JSON
	State     string // input_required while it waits; then working, completed, failed or canceled
	Action    string // the answer given, once given
	Error     string // why the run failed or was canceled, once it has
	ExpiresAt *time.Time
	CreatedAt time.Time
	// Question, when set, is what a workflow's step asks the run's person: the page
	// shows its form instead of Approve and Decline (see FlowInputs).
	Question *Question
}

// Waiting reports whether the run still waits for its answer.
func (a Approval) Waiting() bool { return a.State == "input_required" }

// approvalPage shows a run's confirmation and, while it waits, the form that answers it.
func (h *handler) approvalPage(w http.ResponseWriter, r *http.Request) {
	token, p, ok := h.session(r)
	if !ok {
		http.Redirect(w, r, "/signin?next="+urlQueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	d := h.approvalData(r, token, p)
	a, err := h.Approvals.Approval(r.Context(), p, r.PathValue("id"))
	if err != nil {
		h.approvalError(w, r, d, err)
		return
	}
	d.Approval = &a
	h.render(w, r, http.StatusOK, d)
}

// answerApproval takes the person's answer from the approval form, then shows the
// page again (post, redirect, get).
func (h *handler) answerApproval(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	token, p, ok := h.session(r)
	if !ok {
		http.Redirect(w, r, "/signin?next="+urlQueryEscape(r.URL.Path), http.StatusSeeOther)
		return
	}
	d := h.approvalData(r, token, p)
	id := r.PathValue("id")
	if subtle.ConstantTimeCompare([]byte(d.CSRF), []byte(r.PostFormValue("csrf"))) != 1 {
		d.Error = "This answer did not come from its Switchboard approval page, so nothing was changed. Answer from the page below."
		if a, err := h.Approvals.Approval(r.Context(), p, id); err == nil {
			d.Approval = &a
		}
		h.render(w, r, http.StatusForbidden, d)
		return
	}
	action := r.PostFormValue("action")
	if r.PostFormValue("elicitation_id") != "" && (action == "accept" || action == "decline") {
		a, err := h.Approvals.Approval(r.Context(), p, id)
		if err != nil {
			h.approvalError(w, r, d, err)
			return
		}
		h.answerQuestion(w, r, d, p, a, action)
		return
	}
	if action != "accept" && action != "decline" {
		d.Error, d.ErrorField = "Choose Approve or Decline.", "action"
		if a, err := h.Approvals.Approval(r.Context(), p, id); err == nil {
			d.Approval = &a
		}
		h.render(w, r, http.StatusBadRequest, d)
		return
	}
	if _, err := h.Approvals.Approve(r.Context(), p, id, action); err != nil {
		if a, aerr := h.Approvals.Approval(r.Context(), p, id); aerr == nil {
			d.Approval = &a
		}
		h.approvalError(w, r, d, err)
		return
	}
	http.Redirect(w, r, "/approvals/"+urlPathEscape(id), http.StatusSeeOther)
}

func (h *handler) approvalData(r *http.Request, token string, p switchboard.Principal) pageData {
	return pageData{
		Title: "Approve a tool call", Page: "approval", CSRF: h.Accounts.CSRFToken(token), Principal: p, SignedIn: true, UserEmail: h.email(r, p),
		TenantMCPURL: h.PublicURL + "/mcp/" + p.TenantSlug,
	}
}

// approvalError renders the approval page with why it cannot be answered.
func (h *handler) approvalError(w http.ResponseWriter, r *http.Request, d pageData, err error) {
	e := switchboard.AsError(err)
	switch e.Code {
	case switchboard.CodeInternal:
		h.log.ErrorContext(r.Context(), "approval page", "err", err)
		d.Error = "The confirmation could not be read or answered. Try again in a moment, and tell the operator if it persists."
	case switchboard.CodeNotFound:
		d.Error = "There is no such confirmation for you: it does not exist, or it runs on a connection you may not use."
	default:
		d.Error = e.Message
	}
	h.render(w, r, e.Code.HTTPStatus(), d)
}
