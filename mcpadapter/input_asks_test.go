package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
)

// askOp is a connectionless tool that asks its client through providers.AskAll, once
// per round of rounds, and answers with each answer (or its error) and its round.
type askOp struct {
	name   string
	rounds [][]providers.InputRequest
}

func (o askOp) Info() providers.Info {
	return providers.Info{Name: o.name, Title: o.name, Description: "Asks its client.", Hints: providers.Hints{ReadOnly: true}}
}

func (askOp) InputSchema() (*jsonschema.Schema, error) {
	return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}, nil
}

func (askOp) OutputSchema() (*jsonschema.Schema, error) { return nil, nil }

func (o askOp) Invoke(ctx context.Context, _ *providers.Call, _ json.RawMessage) (any, error) {
	var lines []string
	for _, reqs := range o.rounds {
		answers, err := providers.AskAll(ctx, reqs)
		if err != nil {
			return nil, err
		}
		for i, a := range answers {
			if a.Err != nil {
				lines = append(lines, fmt.Sprintf("%s: error %v", reqs[i].Key, a.Err))
				continue
			}
			lines = append(lines, fmt.Sprintf("%s@%d: %s", reqs[i].Key, a.Round, a.Result))
		}
	}
	block, _ := json.Marshal(map[string]any{"type": "text", "text": strings.Join(lines, "\n")})
	return &providers.ContentResult{Content: []json.RawMessage{block}}, nil
}

func elicitReq(key string) providers.InputRequest {
	return providers.InputRequest{Key: key, Method: "elicitation/create",
		Params: json.RawMessage(`{"message":"Your ` + key + `?","requestedSchema":{"type":"object","properties":{"v":{"type":"string"}}}}`)}
}

func sampleReq(key string) providers.InputRequest {
	return providers.InputRequest{Key: key, Method: "sampling/createMessage",
		Params: json.RawMessage(`{"maxTokens":10,"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`)}
}

// askSpec is a connectionless provider of tools that ask their client.
func askSpec() providers.Spec {
	return providers.Spec{Name: "asker", Title: "Asker", Connectionless: true, OwnNames: true, Operations: []providers.Op{
		askOp{name: "ask_two", rounds: [][]providers.InputRequest{{elicitReq("name"), sampleReq("greeting")}}},
		askOp{name: "ask_twice", rounds: [][]providers.InputRequest{{elicitReq("step1")}, {elicitReq("step2")}}},
		askOp{name: "ask_roots", rounds: [][]providers.InputRequest{{{Key: "roots", Method: "roots/list"}}}},
	}}
}

// askPrompt is an extension's prompt that asks its client for a topic.
func askPrompt() Extension {
	return Extension{Name: "asking", Prompts: func(context.Context, Scope) ([]server.ServerPrompt, error) {
		return []server.ServerPrompt{{Prompt: mcp.NewPrompt("ask_topic"), Handler: func(ctx context.Context, _ mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			answers, err := providers.AskAll(ctx, []providers.InputRequest{elicitReq("topic")})
			if err != nil {
				return nil, err
			}
			if answers[0].Err != nil {
				return nil, answers[0].Err
			}
			return mcp.NewGetPromptResult("", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("topic "+string(answers[0].Result)))}), nil
		}}}, nil
	}}
}

func newAskEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, func(o *Options) { o.Extensions = append(o.Extensions, askPrompt()) }, func(ro *router.Options) {
		if err := ro.Registry.Register(askSpec()); err != nil {
			t.Fatal(err)
		}
	})
}

// rpcAnswer is a JSON-RPC answer as a raw client reads it.
type rpcAnswer struct {
	status int
	Result map[string]any `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// modernAsk posts a tools/call or prompts/get of 2026-07-28 from a client of the
// capabilities, with the extra params (inputResponses, requestState).
func modernAsk(t *testing.T, e *env, method, name string, caps, extra map[string]any) rpcAnswer {
	t.Helper()
	params := map[string]any{"name": name, "_meta": map[string]any{
		mcp.MetaKeyProtocolVersion:    mcp.ProtocolVersion20260728,
		mcp.MetaKeyClientInfo:         map[string]any{"name": "t", "version": "1"},
		mcp.MetaKeyClientCapabilities: caps,
	}}
	if method == string(mcp.MethodToolsCall) {
		params["arguments"] = map[string]any{}
	}
	for k, v := range extra {
		params[k] = v
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/mcp/acme", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer key-alice")
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
	req.Header.Set(mcp.HeaderMethod, method)
	req.Header.Set(mcp.HeaderName, name)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		raw.Write(buf[:n])
		if err != nil {
			break
		}
	}
	for _, line := range strings.Split(raw.String(), "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "data:")
		var a rpcAnswer
		if json.Unmarshal([]byte(line), &a) == nil && (a.Result != nil || a.Error != nil) {
			a.status = resp.StatusCode
			return a
		}
	}
	t.Fatalf("%s %s answered %d %s", method, name, resp.StatusCode, raw.String())
	return rpcAnswer{}
}

var allCaps = map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}}

// inputKeys returns the keys and methods of an input_required answer, and its state.
func inputKeys(t *testing.T, a rpcAnswer) (map[string]string, string) {
	t.Helper()
	if a.Error != nil || a.Result["resultType"] != "input_required" {
		t.Fatalf("answer = %+v %+v, want resultType input_required", a.Result, a.Error)
	}
	reqs, _ := a.Result["inputRequests"].(map[string]any)
	keys := map[string]string{}
	for k, v := range reqs {
		m, _ := v.(map[string]any)
		keys[k], _ = m["method"].(string)
	}
	state, _ := a.Result["requestState"].(string)
	if state == "" {
		t.Fatalf("answer = %+v, want a requestState", a.Result)
	}
	return keys, state
}

var (
	acceptedForm = map[string]any{"action": "accept", "content": map[string]any{"v": "Ada"}}
	sampledHello = map[string]any{"role": "assistant", "model": "m", "content": map[string]any{"type": "text", "text": "hello"}}
)

// TestToolInputRequestsUnderItsKeys: on 2026-07-28 a tool's AskAll is answered as one
// input_required under the tool's own keys and a requestState; a call again that
// answers some of them (with answers under other keys, ignored) is asked the rest
// under a new requestState; the last answer completes the call, each answer with the
// round that brought it.
func TestToolInputRequestsUnderItsKeys(t *testing.T) {
	t.Parallel()
	e := newAskEnv(t)
	keys, state := inputKeys(t, modernAsk(t, e, "tools/call", "ask_two", allCaps, nil))
	if len(keys) != 2 || keys["name"] != "elicitation/create" || keys["greeting"] != "sampling/createMessage" {
		t.Fatalf("inputRequests = %v, want name (elicitation/create) and greeting (sampling/createMessage)", keys)
	}
	keys2, state2 := inputKeys(t, modernAsk(t, e, "tools/call", "ask_two", allCaps, map[string]any{"requestState": state,
		"inputResponses": map[string]any{"name": acceptedForm, "extra": acceptedForm, "greeting": 12345}}))
	if len(keys2) != 1 || keys2["greeting"] != "sampling/createMessage" || state2 == state {
		t.Fatalf("after answering name only: inputRequests = %v (state %q), want greeting alone under a new requestState", keys2, state2)
	}
	done := modernAsk(t, e, "tools/call", "ask_two", allCaps, map[string]any{"requestState": state2,
		"inputResponses": map[string]any{"greeting": sampledHello}})
	if done.Error != nil || done.Result["resultType"] == "input_required" {
		t.Fatalf("answered = %+v %+v, want the tool's result", done.Result, done.Error)
	}
	got := resultText(done.Result)
	if !strings.Contains(got, `name@1: {"action":"accept","content":{"v":"Ada"}}`) || !strings.Contains(got, `greeting@2: {`) || !strings.Contains(got, `"hello"`) {
		t.Errorf("result = %q, want the name answered in round 1 and the greeting in round 2", got)
	}
}

// TestAnswersSentWithTheCall: answers a client sends with its first call, under the
// keys the tool asks by, are taken without asking (round 0); one that does not answer
// its request's method is asked for.
func TestAnswersSentWithTheCall(t *testing.T) {
	t.Parallel()
	e := newAskEnv(t)
	done := modernAsk(t, e, "tools/call", "ask_two", allCaps, map[string]any{
		"inputResponses": map[string]any{"name": acceptedForm, "greeting": sampledHello, "unknown": acceptedForm}})
	if got := resultText(done.Result); !strings.Contains(got, "name@0: ") || !strings.Contains(got, "greeting@0: ") {
		t.Errorf("call with its answers = %+v %+v, want the result at once", done.Result, done.Error)
	}
	keys, _ := inputKeys(t, modernAsk(t, e, "tools/call", "ask_two", allCaps, map[string]any{
		"inputResponses": map[string]any{"name": 12345, "greeting": sampledHello}}))
	if len(keys) != 1 || keys["name"] == "" {
		t.Errorf("call with a number for name: inputRequests = %v, want name asked", keys)
	}
}

// TestInputRequestsFollowClientCapabilities: a request whose capability the client did
// not declare is not put to it; the tool gets the error instead.
func TestInputRequestsFollowClientCapabilities(t *testing.T) {
	t.Parallel()
	e := newAskEnv(t)
	onlySampling := map[string]any{"sampling": map[string]any{}}
	keys, state := inputKeys(t, modernAsk(t, e, "tools/call", "ask_two", onlySampling, nil))
	if len(keys) != 1 || keys["greeting"] != "sampling/createMessage" {
		t.Fatalf("inputRequests = %v, want greeting alone", keys)
	}
	done := modernAsk(t, e, "tools/call", "ask_two", onlySampling, map[string]any{"requestState": state,
		"inputResponses": map[string]any{"greeting": sampledHello}})
	if got := resultText(done.Result); !strings.Contains(got, "name: error the calling client does not support elicitation") || !strings.Contains(got, "greeting@1: ") {
		t.Errorf("result = %q", got)
	}
}

// TestInputRoundsAndForeignStates: a tool that asks twice is answered in two rounds
// under two requestStates; a requestState altered, used already, or given for another
// tool is refused with invalid params naming requestState.
func TestInputRoundsAndForeignStates(t *testing.T) {
	t.Parallel()
	e := newAskEnv(t)
	keys, state := inputKeys(t, modernAsk(t, e, "tools/call", "ask_twice", allCaps, nil))
	if keys["step1"] == "" || len(keys) != 1 {
		t.Fatalf("round 1 = %v, want step1", keys)
	}
	for name, extra := range map[string]map[string]any{
		"altered":      {"requestState": state + "-TAMPERED", "inputResponses": map[string]any{"step1": acceptedForm}},
		"another tool": {"requestState": state, "inputResponses": map[string]any{"step1": acceptedForm}, "name": "ask_two"},
	} {
		tool := "ask_twice"
		if n, ok := extra["name"].(string); ok {
			tool = n
			delete(extra, "name")
		}
		a := modernAsk(t, e, "tools/call", tool, allCaps, extra)
		if a.Error == nil || a.Error.Code != mcp.INVALID_PARAMS || a.status != http.StatusBadRequest || !strings.Contains(a.Error.Message, "requestState") {
			t.Errorf("%s requestState: %d %+v %+v, want 400 and invalid params naming requestState", name, a.status, a.Result, a.Error)
		}
	}
	answer := map[string]any{"requestState": state, "inputResponses": map[string]any{"step1": acceptedForm}}
	keys2, state2 := inputKeys(t, modernAsk(t, e, "tools/call", "ask_twice", allCaps, answer))
	if keys2["step2"] == "" || len(keys2) != 1 || state2 == state {
		t.Fatalf("round 2 = %v (state %q), want step2 under a new requestState", keys2, state2)
	}
	if a := modernAsk(t, e, "tools/call", "ask_twice", allCaps, answer); a.Error == nil || a.Error.Code != mcp.INVALID_PARAMS {
		t.Errorf("requestState used twice: %+v %+v, want invalid params", a.Result, a.Error)
	}
	done := modernAsk(t, e, "tools/call", "ask_twice", allCaps, map[string]any{"requestState": state2, "inputResponses": map[string]any{"step2": acceptedForm}})
	if got := resultText(done.Result); !strings.Contains(got, "step1@1: ") || !strings.Contains(got, "step2@2: ") {
		t.Errorf("result = %q, want step1 of round 1 and step2 of round 2", got)
	}
}

// TestExtensionPromptAsksItsClient: an extension's prompt asks through its caller as a
// tool does; prompts/get answers input_required, then the prompt.
func TestExtensionPromptAsksItsClient(t *testing.T) {
	t.Parallel()
	e := newAskEnv(t)
	keys, state := inputKeys(t, modernAsk(t, e, "prompts/get", "ask_topic", allCaps, nil))
	if len(keys) != 1 || keys["topic"] != "elicitation/create" {
		t.Fatalf("inputRequests = %v, want topic", keys)
	}
	if a := modernAsk(t, e, "prompts/get", "ask_topic", allCaps, map[string]any{"requestState": state + "x"}); a.Error == nil || a.Error.Code != mcp.INVALID_PARAMS {
		t.Errorf("altered requestState: %+v %+v, want invalid params", a.Result, a.Error)
	}
	done := modernAsk(t, e, "prompts/get", "ask_topic", allCaps, map[string]any{"requestState": state, "inputResponses": map[string]any{"topic": acceptedForm}})
	msgs, _ := done.Result["messages"].([]any)
	if done.Error != nil || len(msgs) != 1 || !strings.Contains(fmt.Sprint(msgs[0]), `"v":"Ada"`) {
		t.Errorf("prompts/get answered = %+v %+v, want the prompt with the topic", done.Result, done.Error)
	}
}

// answerer answers every elicitation with acceptedForm and every sampling with sampledHello.
type answerer struct{}

func (answerer) Elicit(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"v": "Ada"}}}, nil
}

func (answerer) CreateMessage(context.Context, mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return &mcp.CreateMessageResult{SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("hello")}, Model: "m"}, nil
}

// TestInputRequestsDuringASessionCall: before 2026-07-28 a tool's AskAll sends its
// requests to the client during the call, one after the other.
func TestInputRequestsDuringASessionCall(t *testing.T) {
	t.Parallel()
	e := newAskEnv(t)
	tr, err := transport.NewStreamableHTTP(e.srv.URL+"/mcp/acme", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer key-alice"}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithElicitationHandler(answerer{}), client.WithSamplingHandler(answerer{}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "t", Version: "1"}
	init.Params.Capabilities.Elicitation = &mcp.ElicitationCapability{Form: &struct{}{}}
	init.Params.Capabilities.Sampling = &mcp.SamplingCapability{}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	got := text(call(t, c, "ask_two", map[string]any{}))
	if !strings.Contains(got, `name@0: {"action":"accept","content":{"v":"Ada"}}`) || !strings.Contains(got, "greeting@0: ") || !strings.Contains(got, `"hello"`) {
		t.Errorf("result = %q, want both answers given during the call", got)
	}
}
