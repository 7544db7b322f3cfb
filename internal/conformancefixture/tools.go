// Package conformancefixture is a provider for tests only: the tools, prompts and
// resources the official MCP conformance suite's server scenarios call by name
// (test_simple_text, test_sampling, test://static-text, test_simple_prompt, …), each
// answering as the suite's server requirements describe. Its tools are a
// connectionless provider's operations, run through the router like any tool; its
// prompts and resources are an MCP adapter extension. The product binary never
// registers it: `go build -tags conformancefixture ./cmd/switchboard` builds the
// binary the end-to-end conformance test serves (e2e/clients TestConformance).
//
// Start from [Spec] and [Extension].
package conformancefixture

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// Provider is the fixture provider's name; its tools keep their own names (test_…).
const Provider = "conformance_fixture"

// PNG is a 1×1 red pixel, the image of the image tools, resources and prompts.
var PNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")

// wav is a WAV header with no samples: RIFF, fmt (PCM, mono, 8 kHz, 16 bits), empty data.
var wav = []byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00")

// Spec is the provider of the suite's tools: connectionless, named as the suite calls
// them, read-only (none changes anything, so no confirm policy asks about them).
func Spec() providers.Spec {
	return providers.Spec{Name: Provider, Title: "MCP conformance fixture",
		Description:    "The tools the MCP conformance suite's server scenarios call (tests only).",
		Connectionless: true, OwnNames: true, Operations: operations()}
}

// op is one fixture tool: its input schema as JSON, no output schema (it answers in
// MCP content, as the suite expects).
type op struct {
	name, description, input string
	run                      func(ctx context.Context, args map[string]any) (*providers.ContentResult, error)
}

func (o op) Info() providers.Info {
	return providers.Info{Name: o.name, Title: o.name, Description: o.description,
		Hints: providers.Hints{ReadOnly: true, Idempotent: true, ClosedWorld: true}}
}

func (o op) InputSchema() (*jsonschema.Schema, error) {
	in := o.input
	if in == "" {
		in = `{"type":"object","properties":{}}`
	}
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(in), &s); err != nil {
		return nil, err
	}
	return &s, nil
}

func (op) OutputSchema() (*jsonschema.Schema, error) { return nil, nil }

func (o op) Invoke(ctx context.Context, _ *providers.Call, args json.RawMessage) (any, error) {
	m := map[string]any{}
	if len(args) > 0 {
		if err := json.Unmarshal(args, &m); err != nil {
			return nil, switchboard.Invalid("arguments", err.Error())
		}
	}
	return o.run(ctx, m)
}

// block is one MCP content block as JSON.
func block(v map[string]any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of plain values
	}
	return b
}

func text(s string) json.RawMessage { return block(map[string]any{"type": "text", "text": s}) }

func image() json.RawMessage {
	return block(map[string]any{"type": "image", "data": base64.StdEncoding.EncodeToString(PNG), "mimeType": "image/png"})
}

func result(blocks ...json.RawMessage) *providers.ContentResult {
	return &providers.ContentResult{Content: blocks}
}

// pause is the suite's pacing between notifications.
func pause(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(50 * time.Millisecond):
	}
}

func stringArg(name, description string) string {
	return fmt.Sprintf(`{"type":"object","properties":{%q:{"type":"string","description":%q}}}`, name, description)
}

func operations() []providers.Op {
	constant := func(name, description string, blocks ...json.RawMessage) op {
		return op{name: name, description: description, run: func(context.Context, map[string]any) (*providers.ContentResult, error) {
			return result(blocks...), nil
		}}
	}
	return append([]providers.Op{
		constant("test_simple_text", "Answers with one text block.", text("This is a simple text response for testing.")),
		constant("test_image_content", "Answers with one PNG image.", image()),
		constant("test_audio_content", "Answers with one WAV audio clip.",
			block(map[string]any{"type": "audio", "data": base64.StdEncoding.EncodeToString(wav), "mimeType": "audio/wav"})),
		constant("test_embedded_resource", "Answers with an embedded text resource.",
			block(map[string]any{"type": "resource", "resource": map[string]any{"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."}})),
		constant("test_multiple_content_types", "Answers with text, an image and an embedded resource.",
			text("Multiple content types test:"), image(),
			block(map[string]any{"type": "resource", "resource": map[string]any{"uri": "test://mixed-content-resource", "mimeType": "application/json", "text": `{"test":"data","value":123}`}})),
		op{name: "test_error_handling", description: "Always fails, as a tool result marked isError.",
			run: func(context.Context, map[string]any) (*providers.ContentResult, error) {
				return &providers.ContentResult{IsError: true, Content: []json.RawMessage{text("This tool intentionally returns an error for testing")}}, nil
			}},
		op{name: "test_tool_with_logging", description: "Sends three log messages while it runs.", run: logging},
		op{name: "test_tool_with_progress", description: "Reports progress 0, 50 and 100 of 100 while it runs.", run: progress},
		op{name: "test_sampling", description: "Asks the client's model to answer the prompt (sampling).",
			input: stringArg("prompt", "The prompt to send to the model"), run: sampling},
		op{name: "test_elicitation", description: "Asks the user for a username and an email (elicitation).",
			input: stringArg("message", "The message shown to the user"), run: elicitation},
		op{name: "test_elicitation_sep1034_defaults", description: "Asks the user a form whose fields have defaults (SEP-1034).", run: defaults},
		op{name: "test_wait", description: "Answers after 30 seconds, unless cancelled first.", run: wait},
		op{name: "json_schema_2020_12_tool", description: "Tool with JSON Schema 2020-12 features", input: schema2020,
			run: func(context.Context, map[string]any) (*providers.ContentResult, error) {
				return result(text("ok")), nil
			}},
		op{name: "test_elicitation_sep1330_enums", description: "Asks the user a form of every enum field style (SEP-1330).", run: enums},
		headers(),
	}, slices.Concat(inputRequiredOps(), statelessOperations(), taskOperations())...)
}

// schema2020 is the input schema of json_schema_2020_12_tool: $schema, $defs with an
// $anchor, $ref, allOf/anyOf and if/then/else, a closed object.
const schema2020 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
	`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},` +
	`"phone":{"type":"string"},"email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
	`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},` +
	`"additionalProperties":false}`

func logging(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
	c := providers.CallerFrom(ctx)
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			pause(ctx)
		}
		if c != nil {
			c.Log(map[string]any{"level": "info", "logger": Provider, "data": msg})
		}
	}
	return result(text("Tool with logging executed successfully")), nil
}

func progress(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			pause(ctx)
		}
		providers.ReportProgress(ctx, p, 100, fmt.Sprintf("Completed step %v of 100", p))
	}
	return result(text("Tool with progress executed successfully")), nil
}

// ask sends the calling client a request and decodes its answer into out.
func ask(ctx context.Context, method string, params, out any) error {
	c := providers.CallerFrom(ctx)
	if c == nil {
		return fmt.Errorf("no MCP client to ask %s", method)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	res, err := c.Ask(ctx, method, raw)
	if err != nil {
		return err
	}
	return json.Unmarshal(res, out)
}

func sampling(ctx context.Context, args map[string]any) (*providers.ContentResult, error) {
	prompt, _ := args["prompt"].(string)
	var res struct {
		Content struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	err := ask(ctx, "sampling/createMessage", map[string]any{"maxTokens": 100,
		"messages": []map[string]any{{"role": "user", "content": map[string]any{"type": "text", "text": prompt}}}}, &res)
	if err != nil {
		return &providers.ContentResult{IsError: true, Content: []json.RawMessage{text("Sampling not supported or error: " + err.Error())}}, nil
	}
	answer := res.Content.Text
	if res.Content.Type != "text" {
		answer = "No response"
	}
	return result(text("LLM response: " + answer)), nil
}

// elicit asks the user the form, and answers with the user's action and content.
func elicit(ctx context.Context, prefix, message string, schema map[string]any) (*providers.ContentResult, error) {
	var res struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content,omitempty"`
	}
	err := ask(ctx, "elicitation/create", map[string]any{"mode": "form", "message": message, "requestedSchema": schema}, &res)
	if err != nil {
		return &providers.ContentResult{IsError: true, Content: []json.RawMessage{text("Elicitation not supported or error: " + err.Error())}}, nil
	}
	content, _ := json.Marshal(res.Content)
	return result(text(fmt.Sprintf("%s: action=%s, content=%s", prefix, res.Action, content))), nil
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

func elicitation(ctx context.Context, args map[string]any) (*providers.ContentResult, error) {
	message, _ := args["message"].(string)
	if message == "" {
		message = "Please provide your information"
	}
	return elicit(ctx, "User response", message, map[string]any{"type": "object",
		"properties": map[string]any{"username": str("User's response"), "email": str("User's email address")},
		"required":   []string{"username", "email"}})
}

func defaults(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
	return elicit(ctx, "Elicitation completed", "Please review and update the form fields with defaults", map[string]any{
		"type": "object", "properties": map[string]any{
			"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
			"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
			"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
			"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
			"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
		}})
}

func enums(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
	titled := func(prefix string) []map[string]any {
		var out []map[string]any
		for i, word := range []string{"First", "Second", "Third"} {
			out = append(out, map[string]any{"const": fmt.Sprintf("value%d", i+1), "title": word + " " + prefix})
		}
		return out
	}
	options := []string{"option1", "option2", "option3"}
	return elicit(ctx, "Elicitation completed", "Please select options from the enum fields", map[string]any{
		"type": "object", "properties": map[string]any{
			"untitledSingle": map[string]any{"type": "string", "description": "Select one option", "enum": options},
			"titledSingle":   map[string]any{"type": "string", "description": "Select one option with titles", "oneOf": titled("Option")},
			"legacyEnum": map[string]any{"type": "string", "description": "Select one option (legacy)", "enum": []string{"opt1", "opt2", "opt3"},
				"enumNames": []string{"Option One", "Option Two", "Option Three"}},
			"untitledMulti": map[string]any{"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
				"items": map[string]any{"type": "string", "enum": options}},
			"titledMulti": map[string]any{"type": "array", "description": "Select multiple options with titles", "minItems": 1, "maxItems": 3,
				"items": map[string]any{"anyOf": titled("Choice")}},
		}})
}

// wait answers after 30 seconds, or fails as soon as the call is cancelled: a call
// for clients to cancel.
func wait(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(30 * time.Second):
		return result(text("waited")), nil
	}
}
