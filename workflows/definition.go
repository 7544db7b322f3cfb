// Package workflows keeps workflow definitions (multi-step tool pipelines: steps that
// call tools on named connections with arguments built by CEL expressions from the
// parameters and earlier steps' outputs), validates them, and runs them as durable runs
// of the runs package, step by step through the router.
//
// Start from [Definition] (a workflow as written and checked, [Problems] when it is
// not), [Service] (save, dry-run, start), [Engine] (the steps of a run) and [Hub] (runs
// on the runs executor); [Store] keeps definitions and [StepRecord]s.
package workflows

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"
)

// Definition is a workflow as people write it, in YAML or JSON (one schema).
type Definition struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Category groups workflows in lists (list_workflows' filter).
	Category string `json:"category,omitempty"`
	// Parameters is a JSON Schema object: what a run of the workflow takes.
	Parameters json.RawMessage `json:"parameters,omitempty"`
	Steps      []Step          `json:"steps"`
	// Outputs are the workflow's results: values whose strings may hold ${{ }}
	// expressions over params and steps.
	Outputs map[string]any `json:"outputs,omitempty"`
	// OutputSchema is a JSON Schema object of the outputs: the output schema of the
	// workflow's tools (an object with a property per output when left out).
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// ParallelLimit bounds the steps that run at once (default 4).
	ParallelLimit int `json:"parallel_limit,omitempty"`
	// Timeout bounds the whole run (default 10 minutes).
	Timeout Duration `json:"timeout,omitempty"`
	// Triggers start runs without a caller: on a schedule, or on a provider's
	// webhook. They run as the person who saved the workflow.
	Triggers []Trigger `json:"triggers,omitempty"`
}

// Trigger is one way a workflow starts by itself: exactly one of Schedule, GitHub
// and Slack.
type Trigger struct {
	// Schedule is a cron expression (minute hour day month weekday, or @hourly, @every
	// 5m…) that fires at most once a minute (see Service.MinScheduleInterval).
	Schedule string `json:"schedule,omitempty"`
	// Params are the parameters of a scheduled run (literal values).
	Params map[string]any `json:"params,omitempty"`
	// GitHub starts a run on a GitHub webhook delivery, the event's payload as the
	// parameters.
	GitHub *WebhookTrigger `json:"github,omitempty"`
	// Slack starts a run on a Slack Events API callback, the event as the parameters.
	Slack *WebhookTrigger `json:"slack,omitempty"`
}

// WebhookTrigger filters a provider's webhook events.
type WebhookTrigger struct {
	// Events are the event types that start a run (X-GitHub-Event, or the Slack
	// event's type); empty means every event.
	Events []string `json:"events,omitempty"`
}

// Step is one tool call of a workflow (or one per item of its foreach list).
type Step struct {
	Name string `json:"name"`
	// Tool is the tool the step calls; left out on a step that asks its person (Input).
	Tool string `json:"tool,omitempty"`
	// Input makes the step ask the run's person for data instead of calling a tool:
	// its output is their answer. Its Timeout bounds how long the person is asked
	// (default DefaultInputTimeout); the run waits for the answer after that too.
	Input *InputStep `json:"input,omitempty"`
	// Connection names the connection the tool runs on, by its label or id; it may be
	// left out when the caller has one connection of the tool's provider.
	Connection string `json:"connection,omitempty"`
	// Args are the tool's arguments: literal values, and strings that are (or hold)
	// ${{ expr }} CEL expressions over params, steps (and item, index in a foreach).
	Args map[string]any `json:"args,omitempty"`
	// Needs names the steps that must end before this one starts.
	Needs []string `json:"needs,omitempty"`
	// If is a CEL condition: the step is skipped when it is false.
	If string `json:"if,omitempty"`
	// Foreach is a CEL expression giving a list: the step runs once per item, with
	// item and index bound; its output is the list of the items' outputs.
	Foreach string `json:"foreach,omitempty"`
	// OnError is abort (the default), continue or retry.
	OnError OnError `json:"on_error,omitempty"`
	Retry   *Retry  `json:"retry,omitempty"`
	// Timeout bounds one attempt of the step (default: the tool's own deadline).
	Timeout Duration `json:"timeout,omitempty"`
}

// OnError says what a failed step does to its workflow.
type OnError string

// The error policies.
const (
	OnErrorAbort    OnError = "abort"
	OnErrorContinue OnError = "continue"
	OnErrorRetry    OnError = "retry"
)

// Retry is how a step with on_error: retry is tried again.
type Retry struct {
	// Attempts counts every try, the first included (default 3, at most 10).
	Attempts int `json:"attempts,omitempty"`
	// Backoff is the wait before the second try, doubled before each later one
	// (default 1 s).
	Backoff Duration `json:"backoff,omitempty"`
}

// Duration is a time span written as Go does ("30s", "5m") or as a number of seconds.
type Duration time.Duration

// MarshalJSON writes the duration as Go does.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "30s" or 30.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%q is not a duration (write it like 30s or 5m)", s)
		}
		*d = Duration(v)
		return nil
	}
	var n float64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("must be a duration like 30s or a number of seconds")
	}
	*d = Duration(time.Duration(n * float64(time.Second)))
	return nil
}

// Defaults of a definition.
const (
	DefaultParallelLimit = 4
	MaxParallelLimit     = 32
	DefaultTimeout       = 10 * time.Minute
	DefaultAttempts      = 3
	MaxAttempts          = 10
	DefaultBackoff       = time.Second
	MaxSteps             = 200
)

// nameRE is what workflow and step names may be: a workflow's tools are named
// run_flow_async__<name> and the like, at most 64 characters.
var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,47}$`)

// versionSuffixRE is the end of a versioned tool's name (run_flow__<name>_<version>),
// which a workflow's own name may not have, or two workflows' tools could share a name.
var versionSuffixRE = regexp.MustCompile(`_([0-9]+)$`)

// The fields each level of a definition may have; anything else is a mistake
// (most often a misspelt field) and is named as such.
var (
	definitionFields = fieldSet(Definition{})
	stepFields       = fieldSet(Step{})
	retryFields      = fieldSet(Retry{})
	triggerFields    = fieldSet(Trigger{})
	inputFields      = fieldSet(InputStep{})
)

// Parse reads a definition from YAML or JSON. Problems of shape (unknown fields,
// wrong types) are returned as Problems naming the step and field; Validate checks
// the rest.
func Parse(src []byte) (*Definition, error) {
	var doc any
	trimmed := bytes.TrimSpace(src)
	if len(trimmed) == 0 {
		return nil, Problems{{Field: "definition", Message: "is empty"}}
	}
	if trimmed[0] == '{' {
		d := json.NewDecoder(bytes.NewReader(trimmed))
		d.UseNumber()
		if err := d.Decode(&doc); err != nil {
			return nil, Problems{{Field: "definition", Message: "is not valid JSON: " + err.Error()}}
		}
	} else if err := yaml.Unmarshal(trimmed, &doc); err != nil {
		return nil, Problems{{Field: "definition", Message: "is not valid YAML: " + err.Error()}}
	}
	return FromValue(doc)
}

// FromValue reads a definition from a decoded JSON or YAML value (an MCP tool's
// argument, for one).
func FromValue(doc any) (*Definition, error) {
	doc = normalize(doc)
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, Problems{{Field: "definition", Message: "must be an object with name, steps and the other fields"}}
	}
	var ps Problems
	ps = append(ps, unknownFields("", "", top, definitionFields)...)
	if steps, ok := top["steps"].([]any); ok {
		for i, s := range steps {
			m, ok := s.(map[string]any)
			if !ok {
				ps = append(ps, Problem{Step: fmt.Sprintf("#%d", i+1), Field: "steps", Message: "each step must be an object"})
				continue
			}
			name, _ := m["name"].(string)
			if name == "" {
				name = fmt.Sprintf("#%d", i+1)
			}
			ps = append(ps, unknownFields(name, "", m, stepFields)...)
			if r, ok := m["retry"].(map[string]any); ok {
				ps = append(ps, unknownFields(name, "retry.", r, retryFields)...)
			}
			if in, ok := m["input"].(map[string]any); ok {
				ps = append(ps, unknownFields(name, "input.", in, inputFields)...)
			}
		}
	} else if _, present := top["steps"]; present {
		ps = append(ps, Problem{Field: "steps", Message: "must be a list of steps"})
	}
	if trs, ok := top["triggers"].([]any); ok {
		for i, tr := range trs {
			if m, ok := tr.(map[string]any); ok {
				ps = append(ps, unknownFields("", fmt.Sprintf("triggers[%d].", i), m, triggerFields)...)
			}
		}
	}
	if len(ps) > 0 {
		return nil, ps
	}
	raw, err := json.Marshal(top)
	if err != nil {
		return nil, Problems{{Field: "definition", Message: err.Error()}}
	}
	var def Definition
	if err := json.Unmarshal(raw, &def); err != nil {
		return nil, Problems{shapeProblem(top, err)}
	}
	return &def, nil
}

// shapeProblem names where a value of the wrong type was.
func shapeProblem(top map[string]any, err error) Problem {
	var te *json.UnmarshalTypeError
	msg := err.Error()
	if ok := asTypeError(err, &te); ok {
		field := te.Field
		step := ""
		if rest, ok := strings.CutPrefix(field, "steps."); ok {
			// The decoder gives "steps.<field>" without the index: name the step
			// whose field has the wrong type.
			step, field = stepOfBadField(top, rest, te.Value)
		}
		return Problem{Step: step, Field: field, Message: fmt.Sprintf("must be %s, not %s", jsonKind(te.Type.Kind().String()), te.Value)}
	}
	if i := strings.Index(msg, "Duration"); i >= 0 || strings.Contains(msg, "duration") {
		return Problem{Field: "timeout", Message: strings.TrimPrefix(msg, "json: ")}
	}
	return Problem{Field: "definition", Message: strings.TrimPrefix(msg, "json: ")}
}

// stepOfBadField finds the first step whose field does not decode.
func stepOfBadField(top map[string]any, field, _ string) (string, string) {
	steps, _ := top["steps"].([]any)
	for i, s := range steps {
		m, _ := s.(map[string]any)
		var probe Step
		raw, _ := json.Marshal(m)
		if err := json.Unmarshal(raw, &probe); err != nil {
			name, _ := m["name"].(string)
			if name == "" {
				name = "#" + strconv.Itoa(i+1)
			}
			return name, field
		}
	}
	return "", "steps." + field
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "int", "int64", "float64":
		return "a number"
	case "slice":
		return "a list"
	case "map", "struct", "ptr":
		return "an object"
	case "bool":
		return "true or false"
	}
	return goKind
}

// normalize turns YAML's decoded maps into JSON's (string keys) and json.Number into
// int64 or float64.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalize(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case int:
		return int64(x)
	}
	return v
}

func fieldSet(v any) map[string]bool {
	raw, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	// omitempty fields are absent from the zero value's encoding: list them all.
	for _, f := range jsonFieldNames(v) {
		out[f] = true
	}
	return out
}

func unknownFields(step, prefix string, m map[string]any, known map[string]bool) Problems {
	var ps Problems
	for _, k := range sortedKeys(m) {
		if !known[k] {
			ps = append(ps, Problem{Step: step, Field: prefix + k, Message: "is not a field of a workflow definition" + suggestion(k, known)})
		}
	}
	return ps
}

func suggestion(k string, known map[string]bool) string {
	for _, f := range sortedKeys(known) {
		if editDistance(strings.ToLower(k), f) <= 2 {
			return fmt.Sprintf(" (did you mean %s?)", f)
		}
	}
	return ""
}

// editDistance is the Levenshtein distance of two short strings.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
