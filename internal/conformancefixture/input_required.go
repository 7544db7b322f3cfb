package conformancefixture

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// The tools and the prompt of the suite's SEP-2322 scenarios (input-required-result-*):
// each asks its client under the keys the scenarios name, through providers.AskAll;
// the hub turns the asks into an input_required answer on 2026-07-28 (requests
// before).

func inputRequiredOps() []providers.Op {
	return []providers.Op{
		op{name: "test_input_required_result_elicitation", description: "Asks the user's name (user_name), then greets them.", run: askName},
		op{name: "test_input_required_result_sampling", description: "Asks the client's model the capital of France (capital_question).", run: askCapital},
		op{name: "test_input_required_result_list_roots", description: "Asks the client's roots (client_roots) and lists them.", run: askRoots},
		op{name: "test_input_required_result_request_state", description: "Asks for a confirmation (confirm); says state-ok once the answer came with the requestState it was asked under.", run: askConfirm},
		op{name: "test_input_required_result_tampered_state", description: "Asks for a confirmation (confirm), as test_input_required_result_request_state.", run: askConfirm},
		op{name: "test_input_required_result_multiple_inputs", description: "Asks a name, a greeting from the model and the roots at once.", run: askThree},
		op{name: "test_input_required_result_multi_round", description: "Asks a name (step1), then a favourite colour (step2).", run: askTwoRounds},
		op{name: "test_input_required_result_capabilities", description: "Asks a name and a greeting from the model; the client is asked only what it declared it can answer.", run: askWhatTheClientCan},
	}
}

// request is an input request of the key, method and params.
func request(key, method string, params any) providers.InputRequest {
	raw, err := json.Marshal(params)
	if err != nil {
		panic(err) // only maps of plain values
	}
	return providers.InputRequest{Key: key, Method: method, Params: raw}
}

// form is an elicitation/create of one required field.
func form(key, message, field, typ string) providers.InputRequest {
	return request(key, string(mcp.MethodElicitationCreate), map[string]any{"mode": "form", "message": message,
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{field: map[string]any{"type": typ}}, "required": []string{field}}})
}

// sample is a sampling/createMessage of one user message.
func sample(key, prompt string, maxTokens int) providers.InputRequest {
	return request(key, string(mcp.MethodSamplingCreateMessage), map[string]any{"maxTokens": maxTokens,
		"messages": []map[string]any{{"role": "user", "content": map[string]any{"type": "text", "text": prompt}}}})
}

func roots(key string) providers.InputRequest {
	return request(key, string(mcp.MethodListRoots), map[string]any{})
}

// askAll asks the calling client the requests at once.
func askAll(ctx context.Context, reqs ...providers.InputRequest) ([]providers.InputAnswer, error) {
	return providers.AskAll(ctx, reqs)
}

// formField is the accepted form's field, or how the user answered.
func formField(a providers.InputAnswer, field string) string {
	if a.Err != nil {
		return "(not asked: " + a.Err.Error() + ")"
	}
	var res mcp.ElicitationResult
	if json.Unmarshal(a.Result, &res) != nil {
		return "(no answer)"
	}
	if res.Action != mcp.ElicitationResponseActionAccept {
		return "(" + string(res.Action) + ")"
	}
	content, _ := res.Content.(map[string]any)
	return fmt.Sprint(content[field])
}

// sampled is the model's text, or why there is none.
func sampled(a providers.InputAnswer) string {
	if a.Err != nil {
		return "(not asked: " + a.Err.Error() + ")"
	}
	var res struct {
		Content struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(a.Result, &res) != nil || res.Content.Type != "text" {
		return "(no text)"
	}
	return res.Content.Text
}

// rootList is the roots' URIs, or why there are none.
func rootList(a providers.InputAnswer) string {
	if a.Err != nil {
		return "(not asked: " + a.Err.Error() + ")"
	}
	var res mcp.ListRootsResult
	if json.Unmarshal(a.Result, &res) != nil {
		return "(no roots)"
	}
	uris := make([]string, 0, len(res.Roots))
	for _, r := range res.Roots {
		uris = append(uris, r.URI)
	}
	return strings.Join(uris, ", ")
}

func failed(a providers.InputAnswer) *providers.ContentResult {
	return &providers.ContentResult{IsError: true, Content: []json.RawMessage{text("The client could not answer: " + a.Err.Error())}}
}

func askName(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
	a, err := askAll(ctx, form("user_name", "What is your name?", "name", "string"))
	if err != nil {
		return nil, err
	}
	if a[0].Err != nil {
		return failed(a[0]), nil
	}
	return result(text("Hello, " + formField(a[0], "name") + "!")), nil
}

func askCapital(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
	a, err := askAll(ctx, sample("capital_question", "What is the capital of France?", 100))
	if err != nil {
		return nil, err
	}
	if a[0].Err != nil {
		return failed(a[0]), nil
	}
	return result(text("LLM response: " + sampled(a[0]))), nil
}

func askRoots(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
	a, err := askAll(ctx, roots("client_roots"))
	if err != nil {
		return nil, err
	}
	if a[0].Err != nil {
		return failed(a[0]), nil
	}
	return result(text("Client roots: " + rootList(a[0]))), nil
}

func askConfirm(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
	a, err := askAll(ctx, form("confirm", "Please confirm", "ok", "boolean"))
	if err != nil {
		return nil, err
	}
	if a[0].Err != nil {
		return failed(a[0]), nil
	}
	how := "answered with the call, no requestState to check"
	if a[0].Round > 0 {
		how = "state-ok"
	}
	return result(text(fmt.Sprintf("%s: ok=%s", how, formField(a[0], "ok")))), nil
}

func askThree(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
	a, err := askAll(ctx, form("user_name", "What is your name?", "name", "string"),
		sample("greeting", "Generate a greeting", 50), roots("client_roots"))
	if err != nil {
		return nil, err
	}
	return result(text(fmt.Sprintf("name=%s; greeting=%s; roots=%s", formField(a[0], "name"), sampled(a[1]), rootList(a[2])))), nil
}

func askTwoRounds(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
	first, err := askAll(ctx, form("step1", "Step 1: What is your name?", "name", "string"))
	if err != nil {
		return nil, err
	}
	if first[0].Err != nil {
		return failed(first[0]), nil
	}
	second, err := askAll(ctx, form("step2", "Step 2: What is your favorite color?", "color", "string"))
	if err != nil {
		return nil, err
	}
	if second[0].Err != nil {
		return failed(second[0]), nil
	}
	return result(text(fmt.Sprintf("%s likes %s", formField(first[0], "name"), formField(second[0], "color")))), nil
}

func askWhatTheClientCan(ctx context.Context, _ map[string]any) (*providers.ContentResult, error) {
	a, err := askAll(ctx, form("user_name", "What is your name?", "name", "string"), sample("greeting", "Generate a greeting", 50))
	if err != nil {
		return nil, err
	}
	return result(text(fmt.Sprintf("name=%s; greeting=%s", formField(a[0], "name"), sampled(a[1])))), nil
}

// inputRequiredPrompt asks the client what context the prompt should use (user_context).
func inputRequiredPrompt() server.ServerPrompt {
	return server.ServerPrompt{
		Prompt: mcp.NewPrompt("test_input_required_result_prompt", mcp.WithPromptDescription("Asks the user what context to use (user_context), then uses it.")),
		Handler: func(ctx context.Context, _ mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a, err := askAll(ctx, form("user_context", "What context should the prompt use?", "context", "string"))
			if err != nil {
				return nil, err
			}
			if a[0].Err != nil {
				return nil, switchboard.Invalid("prompt", "needs the user's context: "+a[0].Err.Error())
			}
			return mcp.NewGetPromptResult("", []mcp.PromptMessage{user(mcp.NewTextContent("Use this context: " + formField(a[0], "context")))}), nil
		},
	}
}
