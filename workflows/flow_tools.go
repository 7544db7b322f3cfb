package workflows

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/runs"
)

// DefaultToolGrace is how long the tools of a deactivated or deleted workflow stay
// listed, marked [DEACTIVATED] or [DELETED], before they disappear.
const DefaultToolGrace = 24 * time.Hour

func (s *Service) toolGrace() time.Duration {
	if s.ToolGrace > 0 {
		return s.ToolGrace
	}
	return DefaultToolGrace
}

// ContextArgument is the argument every flow tool takes beside the workflow's own
// parameters: the caller's context of the run.
const ContextArgument = "_context"

// contextSchema is the _context argument's schema.
const contextSchema = `{"type":"object","description":"Optional context parameters for flow execution","properties":{` +
	`"thread_id":{"type":"string","description":"Agent thread ID"},` +
	`"environment_id":{"type":"string","enum":["draft","live"],"description":"Execution environment: draft runs the latest saved version, live the active workflow's"},` +
	`"channel_id":{"type":"string","description":"Request channel"},` +
	`"channel_capabilities":{"type":"array","items":{"type":"string"}},` +
	`"agent_id":{"type":"string","description":"Initiating agent ID"},` +
	`"agent_version":{"type":"number","description":"Caller agent version"}}}`

// statusSchema is a flow run's status, as the run and query tools answer it.
func statusSchema(allRequired bool) string {
	req := `["instance_id","state"]`
	if allRequired {
		req = `["instance_id","name","state","created_at","updated_at"]`
	}
	return `{"type":"object","properties":{` +
		`"instance_id":{"type":"string","description":"Flow run ID"},` +
		`"name":{"type":"string","description":"Flow name"},` +
		`"state":{"type":"string","enum":["working","input_required","completed","failed"],"description":"Run state"},` +
		`"created_at":{"type":"string","description":"ISO 8601 create time"},` +
		`"updated_at":{"type":"string","description":"ISO 8601 last update time"}},"required":` + req + `}`
}

// asyncOutputSchema is what run_flow_async__<name> answers.
const asyncOutputSchema = `{"type":"object","properties":{"instance_id":{"type":"string","description":"Started flow instance ID"}},"required":["instance_id"]}`

// queryInputSchema is what query_flow__<name> takes.
const queryInputSchema = `{"type":"object","properties":{"instance_id":{"type":"string","description":"Flow run ID"}},"required":["instance_id"],"additionalProperties":false}`

// FlowOutputSchema is the output schema of a workflow's run and query tools: its
// output (the definition's output_schema, else an object with a property per declared
// output) and its status.
func FlowOutputSchema(def *Definition, query bool) json.RawMessage {
	output := json.RawMessage(`{"type":"object"}`)
	if def != nil {
		if len(def.OutputSchema) > 0 && string(def.OutputSchema) != "null" {
			output = def.OutputSchema
		} else if len(def.Outputs) > 0 {
			props := map[string]any{}
			for k := range def.Outputs {
				props[k] = map[string]any{}
			}
			if raw, err := json.Marshal(map[string]any{"type": "object", "properties": props}); err == nil {
				output = raw
			}
		}
	}
	return json.RawMessage(`{"type":"object","properties":{"output":` + string(output) + `,"status":` + statusSchema(query) + `},"required":["status"]}`)
}

// withContextArg adds the _context argument to a workflow's parameters schema.
func withContextArg(params json.RawMessage) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(params, &m); err != nil {
		return nil, fmt.Errorf("parameters schema: %w", err)
	}
	props, _ := m["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	var ctxSchema any
	_ = json.Unmarshal([]byte(contextSchema), &ctxSchema)
	props[ContextArgument] = ctxSchema
	m["properties"] = props
	if m["type"] == nil {
		m["type"] = "object"
	}
	return json.Marshal(m)
}

// Context is the caller's context of a flow run (the _context argument): recorded on
// the run and in its audit row. EnvironmentID draft runs the latest saved version,
// live only an active workflow.
type Context struct {
	ThreadID            string   `json:"thread_id,omitempty"`
	EnvironmentID       string   `json:"environment_id,omitempty"`
	ChannelID           string   `json:"channel_id,omitempty"`
	ChannelCapabilities []string `json:"channel_capabilities,omitempty"`
	AgentID             string   `json:"agent_id,omitempty"`
	AgentVersion        *float64 `json:"agent_version,omitempty"`
}

// raw is the context as recorded (nil when empty).
func (c *Context) raw() json.RawMessage {
	if c == nil {
		return nil
	}
	b, err := json.Marshal(c)
	if err != nil || string(b) == "{}" {
		return nil
	}
	return b
}

// SplitContext takes the _context argument out of a flow tool's arguments: the rest
// are the workflow's parameters.
func SplitContext(args json.RawMessage) (json.RawMessage, *Context, error) {
	if len(bytes.TrimSpace(args)) == 0 || string(args) == "null" {
		return args, nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return args, nil, nil // the parameters' check names what is wrong
	}
	raw, ok := m[ContextArgument]
	if !ok {
		return args, nil, nil
	}
	delete(m, ContextArgument)
	var c Context
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, nil, switchboard.Invalid(ContextArgument, "must be an object with thread_id, environment_id, channel_id, channel_capabilities, agent_id and agent_version: "+err.Error())
	}
	if c.EnvironmentID != "" && c.EnvironmentID != "draft" && c.EnvironmentID != "live" {
		return nil, nil, switchboard.Invalid(ContextArgument+".environment_id", "must be draft or live")
	}
	params, err := json.Marshal(m)
	if err != nil {
		return nil, nil, switchboard.Internal(err)
	}
	return params, &c, nil
}

// FlowStatus is a flow run's status as the flow tools answer it.
type FlowStatus struct {
	InstanceID string `json:"instance_id" jsonschema:"Flow run ID"`
	Name       string `json:"name" jsonschema:"Flow name"`
	State      string `json:"state" jsonschema:"Run state" schema:"enum=working|input_required|completed|failed"`
	CreatedAt  string `json:"created_at" jsonschema:"ISO 8601 create time"`
	UpdatedAt  string `json:"updated_at" jsonschema:"ISO 8601 last update time"`
}

// FlowAnswer is what run_flow__<name> and query_flow__<name> answer: the run's status,
// and its output once it completed.
type FlowAnswer struct {
	Output map[string]any `json:"output,omitempty"`
	Status FlowStatus     `json:"status"`
	// Elicitations are the questions the flow waits for its person to answer, while
	// its state is input_required because a step asks them.
	Elicitations []Elicitation `json:"elicitations,omitempty"`
}

// isoMillis is the time format of a flow status (ISO 8601, milliseconds, UTC).
const isoMillis = "2006-01-02T15:04:05.000Z07:00"

// flowState is a run's state as a flow's status says it: canceled runs are failed.
func flowState(v runs.View) string {
	switch v.State {
	case runs.StateCompleted:
		return "completed"
	case runs.StateFailed, runs.StateCanceled:
		return "failed"
	case runs.StateInputRequired:
		return "input_required"
	}
	return "working"
}

// StatusOf is a workflow run's status as the flow tools answer it.
func StatusOf(v runs.View) FlowStatus {
	return FlowStatus{InstanceID: v.ID, Name: v.Workflow, State: flowState(v),
		CreatedAt: v.CreatedAt.UTC().Format(isoMillis), UpdatedAt: v.UpdatedAt.UTC().Format(isoMillis)}
}

// flowAnswer renders a workflow run as a flow tool answers it.
func (s *Service) flowAnswer(ctx context.Context, p switchboard.Principal, v runs.View) (*providers.ContentResult, error) {
	ans := FlowAnswer{Status: StatusOf(v)}
	var text string
	isErr := false
	switch ans.Status.State {
	case "completed":
		var res Result
		_ = json.Unmarshal(v.Output, &res)
		ans.Output = res.Outputs
		text = "The flow returned successfully."
		if res.Status == "partial" {
			text = "The flow completed, but steps that may fail without stopping it failed (partial)."
		}
	case "failed":
		isErr = true
		text = "The flow failed."
		if v.State == runs.StateCanceled {
			text = "The flow was canceled."
		}
		if v.Error != nil {
			text += " " + v.Error.Message
		}
	case "input_required":
		text = "The flow is waiting for user input: " + s.Answer(ctx, p, v).Message
		if v.Paused() {
			_, ans.Elicitations, _ = s.Elicitations(ctx, p, v.ID)
			text = "The flow is waiting for user input: " + waitingText(ans.Elicitations, v.ApprovalURL)
		}
	default:
		text = "The flow is still running; query it with " + FlowToolName(KindQuery, v.Workflow, 0) + "."
	}
	raw, err := json.Marshal(ans)
	if err != nil {
		return nil, switchboard.Internal(err)
	}
	var blocks []json.RawMessage
	if ans.Output != nil {
		out, _ := json.Marshal(ans.Output)
		b, _ := json.Marshal(map[string]string{"type": "text", "text": string(out)})
		blocks = append(blocks, b)
	}
	b, _ := json.Marshal(map[string]string{"type": "text", "text": text})
	blocks = append(blocks, b)
	return &providers.ContentResult{Content: blocks, StructuredContent: raw, IsError: isErr}, nil
}

// RunFlow runs a workflow for the principal and waits, up to the Service's ToolWait,
// for its end: run_flow__<name>. A run that waits for its person answers
// input_required.
func (s *Service) RunFlow(ctx context.Context, p switchboard.Principal, name string, params json.RawMessage, o StartOptions) (*providers.ContentResult, error) {
	v, err := s.Start(ctx, p, name, params, o)
	if err != nil {
		return nil, err
	}
	if v.State == runs.StateWorking {
		v = s.wait(ctx, p, name, v)
	}
	v = s.askWhilePaused(ctx, p, name, v, false)
	return s.flowAnswer(context.WithoutCancel(ctx), p, v)
}

// StartFlow starts a workflow's run for the principal and answers its instance_id:
// run_flow_async__<name>.
func (s *Service) StartFlow(ctx context.Context, p switchboard.Principal, name string, params json.RawMessage, o StartOptions) (*providers.ContentResult, error) {
	v, err := s.Start(ctx, p, name, params, o)
	if err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(map[string]string{"instance_id": v.ID})
	b, _ := json.Marshal(map[string]string{"type": "text", "text": "Flow started"})
	return &providers.ContentResult{Content: []json.RawMessage{b}, StructuredContent: raw}, nil
}

// QueryFlow answers the status and output of one of the principal's runs of the
// named workflow: query_flow__<name>.
func (s *Service) QueryFlow(ctx context.Context, p switchboard.Principal, name string, args json.RawMessage) (*providers.ContentResult, error) {
	var in struct {
		InstanceID string `json:"instance_id"`
	}
	if err := json.Unmarshal(args, &in); err != nil || in.InstanceID == "" {
		return nil, switchboard.Invalid("instance_id", "is required")
	}
	v, err := s.workflowRun(ctx, p, in.InstanceID)
	if err != nil {
		return nil, err
	}
	if v.Workflow != name {
		return nil, switchboard.NotFound(fmt.Sprintf("run %s of flow %s", in.InstanceID, name))
	}
	return s.flowAnswer(ctx, p, v)
}

// SetActive activates or deactivates a workflow: a deactivated one does not run, and
// its tools say so. Only its creator or an admin may, never an agent's key.
func (s *Service) SetActive(ctx context.Context, p switchboard.Principal, name string, active bool) error {
	if p.Kind != switchboard.PrincipalUser {
		return switchboard.AgentForbidden("activate or deactivate workflows")
	}
	w, err := s.Store.Get(ctx, p.TenantID, name)
	if err != nil {
		return err
	}
	if w.CreatedBy != p.ID() && !p.IsAdmin() {
		return switchboard.Errorf(switchboard.CodeForbidden, "workflow %s was created by someone else; only they or an admin may change it", name)
	}
	changed, err := s.Store.SetActive(ctx, p.TenantID, name, active)
	if err != nil {
		return err
	}
	if changed && s.Changed != nil {
		s.Changed(p.TenantID)
	}
	return nil
}

// ToolAliases reports whether the principal's tenant keeps each workflow's tool
// workflow_<name>.
func (s *Service) ToolAliases(ctx context.Context, p switchboard.Principal) (bool, error) {
	return s.Store.ToolAliases(ctx, p.TenantID)
}

// SetToolAliases sets whether the tenant keeps each workflow's tool workflow_<name>;
// only an admin may.
func (s *Service) SetToolAliases(ctx context.Context, p switchboard.Principal, on bool) error {
	if p.Kind != switchboard.PrincipalUser || !p.IsAdmin() {
		return switchboard.Errorf(switchboard.CodeForbidden, "only an admin may change the workflows' tool names")
	}
	if err := s.Store.SetToolAliases(ctx, p.TenantID, on); err != nil {
		return err
	}
	if s.Changed != nil {
		s.Changed(p.TenantID)
	}
	return nil
}
