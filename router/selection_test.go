package router

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
)

// memSelection is an agents service whose agents act for their creator (alice) and
// select the tools it lists.
type memSelection map[string][]Selected // agent id → its tools

func (m memSelection) PrivateUser(_ context.Context, p switchboard.Principal) (string, error) {
	if p.Kind != switchboard.PrincipalAgent {
		return p.UserID, nil
	}
	return "usr_alice", nil
}

func (m memSelection) Selection(_ context.Context, p switchboard.Principal) ([]Selected, error) {
	return m[p.AgentID], nil
}

// scribe is alice's agent: her role is the owner's, and its one tool is fake_greet on
// her private connection con_a1.
var scribe = switchboard.Principal{TenantID: "ten_a", TenantSlug: "a", Kind: switchboard.PrincipalAgent, UserID: "usr_alice", AgentID: "agt_scribe",
	Role: switchboard.RoleOwner, KeyID: "key_s"}

// TestAgentKeysStayInTheirSelection: an agent's key lists and calls only its agent's
// tools, each on the connection it is bound to, whatever the surface: the shared
// connection its creator may use is not its own, and a call there reaches no
// upstream. Without an agents service an agent's key calls nothing.
func TestAgentKeysStayInTheirSelection(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.router.agents = memSelection{"agt_scribe": {{Tool: "fake_greet", ConnectionID: "con_a1"}, {Tool: "workflow_daily"}}}
	ctx := context.Background()
	bs, err := f.router.Tools(ctx, scribe)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]ConnectionRef{}
	for _, b := range bs {
		got[b.Tool.Name] = b.Connections
	}
	if diff := cmp.Diff(map[string][]ConnectionRef{"fake_greet": {{ID: "con_a1", Label: "alice-fake", Account: "alice-fake", Owner: "usr_alice"}}}, got); diff != "" {
		t.Errorf("the agent's tools (-want +got):\n%s", diff)
	}

	args := json.RawMessage(`{"name":"ada"}`)
	if _, err := f.router.Execute(ctx, scribe, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: args}); err != nil {
		t.Fatalf("the agent's own tool: %v", err)
	}
	if tok := <-f.tokens; tok != "Bearer token-a1" {
		t.Errorf("upstream saw %q, want alice's token", tok)
	}
	refused := []struct {
		name string
		p    switchboard.Principal
		req  Request
	}{
		{"its tool on the shared connection", scribe, Request{Tool: "fake_greet", ConnectionID: "con_a2", Args: args}},
		{"a tool it did not select", scribe, Request{Tool: "other_greet", ConnectionID: "con_a3", Args: args}},
	}
	for _, tc := range refused {
		_, err := f.router.Execute(ctx, tc.p, tc.req)
		if e := switchboard.AsError(err); e.Code != switchboard.CodeNotFound || e.Message != "tool "+tc.req.Tool+" (not one of this agent's tools on that connection) not found" {
			t.Errorf("%s: %v; want not found, not one of this agent's tools", tc.name, err)
		}
		if ev := f.audit.last(t); ev.Outcome != string(switchboard.CodeNotFound) || ev.Principal != scribe.ID() {
			t.Errorf("%s: audit event %+v", tc.name, ev)
		}
	}
	select {
	case tok := <-f.tokens:
		t.Errorf("a refused call reached the upstream with %q", tok)
	default:
	}

	bare := newFixture(t)
	if bs, err := bare.router.Tools(ctx, scribe); err != nil || len(bs) != 0 {
		t.Errorf("without an agents service the agent lists %d tools, %v; want none", len(bs), err)
	}
	if _, err := bare.router.Execute(ctx, scribe, Request{Tool: "fake_greet", ConnectionID: "con_a2", Args: args}); switchboard.CodeOf(err) != switchboard.CodeNotFound {
		t.Errorf("without an agents service the agent's call on a shared connection: %v; want not found", err)
	}
}
