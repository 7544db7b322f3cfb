package workflows

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/switchboard-hub/switchboard"
)

// InstanceURIPrefix starts the URI of a flow instance as an MCP resource
// (switchboard://flows/<instance_id>): reading it answers what query_flow__<name>
// answers, and a session subscribed to it hears of every change of its state.
const InstanceURIPrefix = "switchboard://flows/"

// InstanceURI is the resource URI of the flow instance id.
func InstanceURI(id string) string { return InstanceURIPrefix + id }

// InstanceOf returns the instance id an instance URI names, and whether uri is one.
func InstanceOf(uri string) (string, bool) {
	id, ok := strings.CutPrefix(uri, InstanceURIPrefix)
	if !ok || id == "" || strings.ContainsAny(id, "/?#") {
		return "", false
	}
	return id, true
}

// Instance returns one of the principal's flow instances (a run of a saved workflow)
// as query_flow__<name> answers it: its status, and its output once it completed.
// Another principal's instance, a run that is no workflow's and a missing one are
// all not found, alike.
func (s *Service) Instance(ctx context.Context, p switchboard.Principal, id string) (FlowAnswer, error) {
	v, err := s.workflowRun(ctx, p, id)
	if err != nil {
		if switchboard.CodeOf(err) == switchboard.CodeNotFound {
			return FlowAnswer{}, switchboard.NotFound("flow instance " + id)
		}
		return FlowAnswer{}, err
	}
	ans := FlowAnswer{Status: StatusOf(v)}
	if ans.Status.State == "completed" {
		var res Result
		if err := json.Unmarshal(v.Output, &res); err == nil {
			ans.Output = res.Outputs
		}
	}
	return ans, nil
}
