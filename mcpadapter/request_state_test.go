package mcpadapter

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// confirmAnswer is the inputResponses of a client whose person answered the
// confirmation with action and content.
func confirmAnswer(action string, content any) map[string]any {
	answer := map[string]any{"action": action}
	if content != nil {
		answer["content"] = content
	}
	return map[string]any{confirmKey: answer}
}

// acceptAnswer is a person's accept of the confirmation, its box ticked.
var acceptAnswer = confirmAnswer("accept", map[string]any{"confirm": true})

// modernToolCall posts a tools/call of protocol 2026-07-28 from a client that can show
// forms, with the inputResponses and requestState given (none when empty), to the MCP
// URL at u, and returns its result.
func modernToolCall(t *testing.T, u, key, tool string, args, responses map[string]any, state string) *mcp.CallToolResult {
	t.Helper()
	params := map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    mcp.ProtocolVersion20260728,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "t", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
	}}
	if responses != nil {
		params["inputResponses"] = responses
	}
	if state != "" {
		params["requestState"] = state
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	if err != nil {
		t.Fatal(err)
	}
	status, answer := modernRequestAt(t, u, key, string(mcp.MethodToolsCall), string(body))
	// The answer is JSON, or one event of an event stream.
	for _, line := range strings.Split(answer, "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "data:")
		var msg struct {
			Result *mcp.CallToolResult `json:"result"`
		}
		if json.Unmarshal([]byte(line), &msg) == nil && msg.Result != nil {
			return msg.Result
		}
	}
	t.Fatalf("tools/call %s answered %d %s, without a result", tool, status, answer)
	return nil
}

// TestFirstTryAnswerIsNotAConfirmation: on 2026-07-28 an accept sent with the first
// tools/call of a destructive tool answers no question the hub asked: the hub asks
// (confirmation_asked, with a requestState) and runs nothing. The answer then sent with
// that requestState runs the call, on another node of the hub too, as every node
// derives the key from the keyring they share.
func TestFirstTryAnswerIsNotAConfirmation(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		e.policy.set(e.ann, router.ConfirmDestructive)
		other := e.node(t, nil, nil)
		path := "/mcp/" + e.ann.TenantSlug
		id := e.up.Put("precious")
		args := map[string]any{"id": id}

		first := modernToolCall(t, e.srv.URL+path, keyAnn, "notes_delete_note", args, acceptAnswer, "")
		if first.ResultType != mcp.ResultTypeInputRequired || first.RequestState == "" || first.InputRequests[confirmKey].Elicitation == nil {
			t.Fatalf("first try with an unasked accept answered %+v; want the question, with a requestState", first)
		}
		if !e.up.Has(id) || len(e.up.Requests()) != 0 {
			t.Fatalf("the unasked accept ran the call: note kept %v, upstream got %+v", e.up.Has(id), e.up.Requests())
		}
		if got, want := e.audit.confirmations(), []string{"confirmation_asked notes_delete_note"}; !slices.Equal(got, want) {
			t.Errorf("audit after the first try = %q, want %q", got, want)
		}

		res := modernToolCall(t, other.URL+path, keyAnn, "notes_delete_note", args, acceptAnswer, first.RequestState)
		if res.IsError || e.up.Has(id) || e.deletes() != 1 {
			t.Fatalf("the answer to the question, on another node: isError %v %q, note kept %v, %d DELETEs", res.IsError, text(res), e.up.Has(id), e.deletes())
		}
		if got, want := e.audit.confirmations(), []string{"confirmation_asked notes_delete_note", "confirmation_accepted notes_delete_note"}; !slices.Equal(got, want) {
			t.Errorf("audit after the answer = %q, want %q", got, want)
		}
	})
}

// TestRequestStateOfAnotherCallIsRefused: an answer carrying the requestState of
// another tool, other arguments, another caller (user, key or tenant), or one expired,
// altered or not the hub's, is refused, naming requestState, and runs nothing.
func TestRequestStateOfAnotherCallIsRefused(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		const keyAnn2 = "key-ann-second"
		e := newRunsEnvWith(t, db, nil, func(e *runsEnv) keys {
			ann2 := e.ann
			ann2.KeyID = "key_second"
			return keys{keyAnn2: ann2}
		})
		e.policy.set(e.ann, router.ConfirmAlways)
		e.policy.set(e.bob, router.ConfirmAlways)
		e.policy.set(e.bea, router.ConfirmAlways)
		target := e.up.Put("target")
		otherNote := e.up.Put("another note")
		args := map[string]any{"id": target}
		// ask calls a tool without an answer and returns the requestState of the question.
		ask := func(key, slug, tool string, args map[string]any) string {
			t.Helper()
			res := modernToolCall(t, e.srv.URL+"/mcp/"+slug, key, tool, args, nil, "")
			if res.ResultType != mcp.ResultTypeInputRequired || res.RequestState == "" {
				t.Fatalf("%s %v answered %+v, want a question with a requestState", tool, args, res)
			}
			return res.RequestState
		}
		alpha, beta := e.ann.TenantSlug, e.bea.TenantSlug
		genuine := ask(keyAnn, alpha, "notes_delete_note", args)
		call := stateCall{p: e.ann, origin: runs.OriginConfirm, rreq: router.Request{Tool: "notes_delete_note", ConnectionID: e.connA, Args: json.RawMessage(`{"id":"` + target + `"}`)}}
		version, rest, _ := strings.Cut(genuine, ".")
		exp, sig, _ := strings.Cut(rest, ".")
		mac, err := base64.RawURLEncoding.DecodeString(sig)
		if err != nil {
			t.Fatalf("the requestState %q: %v", genuine, err)
		}
		mac[0] ^= 1
		flipped := version + "." + exp + "." + base64.RawURLEncoding.EncodeToString(mac)
		tests := []struct {
			name     string
			state    string
			contains string
		}{
			{name: "another tool", state: ask(keyAnn, alpha, "notes_get_note", args), contains: "was not issued for this call"},
			{name: "other arguments", state: ask(keyAnn, alpha, "notes_delete_note", map[string]any{"id": otherNote}), contains: "was not issued for this call"},
			{name: "another user", state: ask(keyBob, alpha, "notes_delete_note", args), contains: "was not issued for this call"},
			{name: "another key of the same user", state: ask(keyAnn2, alpha, "notes_delete_note", args), contains: "was not issued for this call"},
			{name: "another tenant", state: ask(keyBea, beta, "notes_delete_note", args), contains: "was not issued for this call"},
			{name: "expired", state: requestStates{key: e.stateKey, now: func() time.Time { return time.Now().Add(-requestStateLifetime - time.Minute) }}.issue(call), contains: "expired"},
			{name: "expiry moved", state: version + "." + "9999999999" + "." + sig, contains: "was altered"},
			{name: "signature altered", state: flipped, contains: "was altered"},
			{name: "signed with another key", state: requestStates{key: []byte("another deployment"), now: time.Now}.issue(call), contains: "was altered"},
			{name: "not the hub's", state: "please-run-it", contains: "is not one Switchboard issued"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := modernToolCall(t, e.srv.URL+"/mcp/"+alpha, keyAnn, "notes_delete_note", args, acceptAnswer, tt.state)
				if !res.IsError || !strings.Contains(text(res), `Invalid argument "requestState"`) || !strings.Contains(text(res), tt.contains) {
					t.Errorf("answer with the requestState of %s: isError %v %q; want a refusal naming requestState that says %q", tt.name, res.IsError, text(res), tt.contains)
				}
				if !e.up.Has(target) {
					t.Fatal("the note was deleted")
				}
			})
		}
		if reqs := e.up.Requests(); len(reqs) != 0 {
			t.Errorf("the upstream got %+v, want nothing", reqs)
		}
		if rows := e.audit.confirmations(); slices.ContainsFunc(rows, func(r string) bool { return strings.HasPrefix(r, "confirmation_accepted") }) {
			t.Errorf("audit = %q, want no confirmation accepted", rows)
		}
		// The state made here for the expired case binds what the hub binds: fresh, it
		// answers the call.
		fresh := requestStates{key: e.stateKey, now: time.Now}.issue(call)
		if res := modernToolCall(t, e.srv.URL+"/mcp/"+alpha, keyAnn, "notes_delete_note", args, acceptAnswer, fresh); res.IsError || e.up.Has(target) {
			t.Errorf("the answer with a fresh requestState of the call: isError %v %q, note kept %v", res.IsError, text(res), e.up.Has(target))
		}
	})
}

// TestUnaskedAnswerOnASession: on a session protocol too, an accept the client sends
// with its tools/call answers nothing: the hub asks the person with elicitation/create,
// and their decline stands.
func TestUnaskedAnswerOnASession(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		e.policy.set(e.ann, router.ConfirmDestructive)
		el := &elicitor{action: mcp.ElicitationResponseActionDecline}
		c := e.connect(t, e.ann, keyAnn, mcp.LATEST_LEGACY_PROTOCOL_VERSION, el)
		id := e.up.Put("precious")
		resp, err := c.GetTransport().SendRequest(context.Background(), transport.JSONRPCRequest{
			JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(int64(940)), Method: string(mcp.MethodToolsCall),
			Params: map[string]any{"name": "notes_delete_note", "arguments": map[string]any{"id": id}, "inputResponses": acceptAnswer},
		})
		if err != nil || resp.Error != nil {
			t.Fatalf("tools/call: %v %+v", err, resp)
		}
		var res mcp.CallToolResult
		if err := json.Unmarshal(resp.Result, &res); err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(text(&res), "declined") || len(el.asked()) != 1 {
			t.Errorf("call with an unasked accept: isError %v %q, the person asked %d times; want asked once, and declined", res.IsError, text(&res), len(el.asked()))
		}
		if !e.up.Has(id) || len(e.up.Requests()) != 0 {
			t.Errorf("note kept %v, upstream got %+v; want nothing run", e.up.Has(id), e.up.Requests())
		}
		if got, want := e.audit.confirmations(), []string{"confirmation_asked notes_delete_note", "confirmation_declined notes_delete_note"}; !slices.Equal(got, want) {
			t.Errorf("audit = %q, want %q", got, want)
		}
	})
}

// TestAcceptWithoutConfirmRunsNothing: in both eras an accept whose content lacks the
// form's required confirm, or does not set it true, is no confirmation: the upstream
// gets nothing.
func TestAcceptWithoutConfirmRunsNothing(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		e.policy.set(e.ann, router.ConfirmDestructive)
		tests := []struct {
			name    string
			version string
			content any
		}{
			{name: "no content, session protocol", version: mcp.LATEST_LEGACY_PROTOCOL_VERSION},
			{name: "empty content, session protocol", version: mcp.LATEST_LEGACY_PROTOCOL_VERSION, content: map[string]any{}},
			{name: "confirm not a boolean, session protocol", version: mcp.LATEST_LEGACY_PROTOCOL_VERSION, content: map[string]any{"confirm": "yes"}},
			{name: "empty content, stateless protocol", version: mcp.LATEST_PROTOCOL_VERSION, content: map[string]any{}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				el := &elicitor{action: mcp.ElicitationResponseActionAccept, content: tt.content}
				c := e.connect(t, e.ann, keyAnn, tt.version, el)
				id := e.up.Put("precious")
				res := call(t, c, "notes_delete_note", map[string]any{"id": id})
				if len(el.asked()) != 1 || !res.IsError || !strings.Contains(text(res), "confirm was not ticked") || !e.up.Has(id) {
					t.Errorf("accept without confirm: asked %d, isError %v %q, note kept %v", len(el.asked()), res.IsError, text(res), e.up.Has(id))
				}
			})
		}
		if reqs := e.up.Requests(); len(reqs) != 0 {
			t.Errorf("the upstream got %+v, want nothing", reqs)
		}
		if rows := e.audit.confirmations(); slices.ContainsFunc(rows, func(r string) bool { return strings.HasPrefix(r, "confirmation_accepted") }) {
			t.Errorf("audit = %q, want no confirmation accepted", rows)
		}
	})
}

// TestRunsExtensionNeedsAStateKey: without a key shared by the nodes no answer could be
// checked, so the runs extension refuses to start.
func TestRunsExtensionNeedsAStateKey(t *testing.T) {
	t.Parallel()
	defer func() {
		if r := recover(); r != errNoStateKey {
			t.Errorf("RunsExtension without a StateKey: recovered %v, want %v", r, errNoStateKey)
		}
	}()
	RunsExtension(RunsOptions{})
}
