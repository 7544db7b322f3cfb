package main

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/web"
	"github.com/switchboard-hub/switchboard/workflows"
)

var _ web.FlowInputs = webApprovals{}

// question is the question a paused workflow run, which p may answer, waits for: the
// first pending one, as the approval page's form; nil when it waits for none.
func (a webApprovals) question(ctx context.Context, p switchboard.Principal, id string) *web.Question {
	if a.flows == nil {
		return nil
	}
	owner, err := a.runs.Owner(ctx, p, id)
	if err != nil {
		return nil
	}
	_, pending, err := a.flows.Elicitations(ctx, owner, id)
	if err != nil || len(pending) == 0 {
		return nil
	}
	e := pending[0]
	var s struct {
		Properties map[string]struct {
			Type        string   `json:"type"`
			Title       string   `json:"title"`
			Description string   `json:"description"`
			Enum        []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(e.Schema, &s)
	q := &web.Question{ElicitationID: e.ID, Step: e.Step}
	for name, prop := range s.Properties {
		f := web.Field{Name: name, Title: prop.Title, Description: prop.Description, Type: prop.Type, Enum: prop.Enum}
		if f.Title == "" {
			f.Title = name
		}
		for _, r := range s.Required {
			f.Required = f.Required || r == name
		}
		q.Fields = append(q.Fields, f)
	}
	sort.Slice(q.Fields, func(i, j int) bool { return q.Fields[i].Name < q.Fields[j].Name })
	return q
}

// AnswerInput gives the person's answer, from the approval page, to a question their
// workflow run waits for, as the run's own principal.
func (a webApprovals) AnswerInput(ctx context.Context, p switchboard.Principal, id, elicitationID, action string, content map[string]any) error {
	if a.flows == nil {
		return switchboard.NotFound("run")
	}
	owner, err := a.runs.Owner(ctx, p, id)
	if err != nil {
		return err
	}
	_, err = a.flows.SubmitElicitation(ctx, owner, id, elicitationID, workflows.ElicitationResponse{Action: action, Content: content}, "approval page, "+p.ID())
	return err
}
