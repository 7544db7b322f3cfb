package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/switchboard-hub/switchboard"
)

// FlowInputs is what the approval page needs, beside Approvals, to answer a question a
// workflow's step asks its run's person (Approval.Question). Approvals that implement
// it show such a question as a form.
type FlowInputs interface {
	// AnswerInput gives the person's answer to the question: accept with the form's
	// content, or decline. A content that does not fit the question's schema is
	// refused, naming the field (response.content.<name>), and changes nothing.
	AnswerInput(ctx context.Context, p switchboard.Principal, runID, elicitationID, action string, content map[string]any) error
}

// Question is what a workflow's step asks its run's person: the form that answers it.
type Question struct {
	ElicitationID string
	Step          string
	Fields        []Field
}

// Field is one field of a question's form, from its JSON Schema property.
type Field struct {
	Name        string
	Title       string // the property's title, else its name
	Description string
	Type        string   // string, number, integer or boolean
	Enum        []string // the choices of a string field, when it has them
	Required    bool
}

// ID is the field's input id on the page.
func (f Field) ID() string { return "field-" + f.Name }

// answerQuestion takes the person's answer to a workflow step's question from the
// approval page's form, then shows the page again (post, redirect, get).
func (h *handler) answerQuestion(w http.ResponseWriter, r *http.Request, d pageData, p switchboard.Principal, a Approval, action string) {
	id := a.RunID
	fi, ok := h.Approvals.(FlowInputs)
	if !ok || a.Question == nil || r.PostFormValue("elicitation_id") != a.Question.ElicitationID {
		d.Approval = &a
		d.Error = "This question was answered or changed meanwhile; read it again below."
		h.render(w, r, http.StatusConflict, d)
		return
	}
	var content map[string]any
	if action == "accept" {
		var field string
		content, field = formContent(r, a.Question.Fields)
		if field != "" {
			d.Approval = &a
			d.Error, d.ErrorField = fmt.Sprintf("%s must be a number.", field), field
			h.render(w, r, http.StatusBadRequest, d)
			return
		}
	}
	if err := fi.AnswerInput(r.Context(), p, id, a.Question.ElicitationID, action, content); err != nil {
		d.Approval = &a
		if e := switchboard.AsError(err); e.Code == switchboard.CodeInvalid {
			name := strings.TrimPrefix(e.Field, "response.content.")
			d.Error, d.ErrorField = name+": "+e.Message, name
			h.render(w, r, http.StatusBadRequest, d)
			return
		}
		h.approvalError(w, r, d, err)
		return
	}
	http.Redirect(w, r, "/approvals/"+urlPathEscape(id), http.StatusSeeOther)
}

// formContent reads the form's fields by their types; field names the first number
// that is not one.
func formContent(r *http.Request, fields []Field) (content map[string]any, field string) {
	content = map[string]any{}
	for _, f := range fields {
		v := strings.TrimSpace(r.PostFormValue(f.Name))
		switch f.Type {
		case "boolean":
			content[f.Name] = v == "on" || v == "true"
		case "number", "integer":
			if v == "" {
				continue
			}
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, f.Name
			}
			content[f.Name] = n
		default:
			if v != "" || f.Required {
				content[f.Name] = v
			}
		}
	}
	return content, ""
}
