package hubspot

import (
	"context"
	"net/http"
	"strconv"

	"github.com/switchboard-hub/switchboard/providers"
)

// ListDealPipelines lists the deal pipelines and their stages.
// HubSpot API docs: https://developers.hubspot.com/docs/api/crm/pipelines
var ListDealPipelines = &providers.Operation[ListDealPipelinesInput, ListDealPipelinesOutput]{
	Name:  "list_deal_pipelines",
	Title: "List deal pipelines",
	Description: "List the HubSpot account's deal pipelines and their stages, in board order. Call it before create_deal " +
		"or update_deal: a deal's pipeline and dealstage properties take these IDs, not the labels shown in HubSpot. " +
		"Returns each pipeline's ID and label, and each stage's ID, label, win probability and whether it closes the deal.",
	DocsURL: "https://developers.hubspot.com/docs/api/crm/pipelines",
	Scopes:  []string{"crm.objects.deals.read"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listDealPipelines,
}

// ListDealPipelinesInput is the input of list_deal_pipelines.
type ListDealPipelinesInput struct {
	IncludeArchived *bool `json:"include_archived,omitempty" jsonschema:"Also list archived pipelines and stages" schema:"default=false"`
}

// ListDealPipelinesOutput is the output of list_deal_pipelines.
type ListDealPipelinesOutput struct {
	Pipelines []Pipeline `json:"pipelines" jsonschema:"The deal pipelines, in display order"`
}

// Pipeline is one deal pipeline.
type Pipeline struct {
	ID       string  `json:"id" jsonschema:"The pipeline's ID: a deal's pipeline property"`
	Label    string  `json:"label" jsonschema:"The pipeline's name in HubSpot"`
	Archived bool    `json:"archived" jsonschema:"Whether the pipeline is archived"`
	Stages   []Stage `json:"stages" jsonschema:"The pipeline's stages, in board order"`
}

// Stage is one stage of a pipeline.
type Stage struct {
	ID          string   `json:"id" jsonschema:"The stage's ID: a deal's dealstage property"`
	Label       string   `json:"label" jsonschema:"The stage's name in HubSpot"`
	Probability *float64 `json:"probability,omitempty" jsonschema:"The chance of winning a deal in this stage, 0 to 1"`
	Closed      bool     `json:"closed" jsonschema:"Whether a deal in this stage is closed (won or lost)"`
	Archived    bool     `json:"archived" jsonschema:"Whether the stage is archived"`
}

func listDealPipelines(ctx context.Context, c *providers.Call, in ListDealPipelinesInput) (ListDealPipelinesOutput, error) {
	var resp struct {
		Results []struct {
			ID       string `json:"id"`
			Label    string `json:"label"`
			Archived bool   `json:"archived"`
			Stages   []struct {
				ID       string `json:"id"`
				Label    string `json:"label"`
				Archived bool   `json:"archived"`
				Metadata struct {
					Probability string `json:"probability"`
					IsClosed    string `json:"isClosed"`
				} `json:"metadata"`
			} `json:"stages"`
		} `json:"results"`
	}
	if err := (request{method: http.MethodGet, path: "/crm/v3/pipelines/deals"}).do(ctx, c, &resp); err != nil {
		return ListDealPipelinesOutput{}, err
	}
	withArchived := in.IncludeArchived != nil && *in.IncludeArchived
	out := ListDealPipelinesOutput{Pipelines: []Pipeline{}}
	for _, p := range resp.Results {
		if p.Archived && !withArchived {
			continue
		}
		pl := Pipeline{ID: p.ID, Label: p.Label, Archived: p.Archived, Stages: []Stage{}}
		for _, s := range p.Stages {
			if s.Archived && !withArchived {
				continue
			}
			st := Stage{ID: s.ID, Label: s.Label, Archived: s.Archived, Closed: s.Metadata.IsClosed == "true"}
			if f, err := strconv.ParseFloat(s.Metadata.Probability, 64); err == nil {
				st.Probability = &f
			}
			pl.Stages = append(pl.Stages, st)
		}
		out.Pipelines = append(out.Pipelines, pl)
	}
	return out, nil
}
