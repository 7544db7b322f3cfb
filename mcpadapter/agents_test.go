package mcpadapter

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/router"
)

// memAgents is an in-memory agents service with the store's tenancy rule.
type memAgents struct {
	mu       sync.Mutex
	agents   map[string]agents.Agent
	settings map[switchboard.TenantID]agents.Settings
}

func newMemAgents() *memAgents {
	m := &memAgents{agents: map[string]agents.Agent{}, settings: map[switchboard.TenantID]agents.Settings{}}
	m.put(agents.Agent{ID: "agt_triage", TenantID: "ten_a", Name: "Triage", Description: "Sorts notes", Instructions: "Write one note per request.",
		CreatedBy: "usr_alice", Version: 1, Tools: []agents.Tool{{Tool: "notes_create_note", ConnectionID: "con_a"}}})
	m.put(agents.Agent{ID: "agt_bob", TenantID: "ten_b", Name: "Bob's", CreatedBy: "usr_bob", Version: 1,
		Tools: []agents.Tool{{Tool: "notes_last_note", ConnectionID: "con_b"}}})
	return m
}

func (m *memAgents) put(a agents.Agent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.agents[a.ID] = a
}

func (m *memAgents) remove(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.agents, id)
}

func (m *memAgents) setSettings(st agents.Settings) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.settings[st.TenantID] = st
}

func (m *memAgents) AgentAndSettings(_ context.Context, tenant switchboard.TenantID, id string) (agents.Agent, agents.Settings, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.settings[tenant]
	if !ok {
		st = agents.DefaultSettings(tenant)
	}
	if id == "" {
		return agents.Agent{}, st, nil
	}
	a, ok := m.agents[id]
	if !ok || a.TenantID != tenant {
		return agents.Agent{}, agents.Settings{}, switchboard.NotFound("agent")
	}
	return a, st, nil
}

// PrivateUser follows agents.Service.PrivateUser for keys the agent's creator created:
// the creator, while the creator saved the agent last.
func (m *memAgents) PrivateUser(_ context.Context, p switchboard.Principal) (string, error) {
	if p.Kind != switchboard.PrincipalAgent {
		return p.UserID, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.agents[p.AgentID]
	if !ok || a.TenantID != p.TenantID || (a.UpdatedBy != "" && a.UpdatedBy != a.CreatedBy) {
		return "", nil
	}
	return a.CreatedBy, nil
}

// Selection follows agents.Service.Selection: the agent's tools, each on its connection.
func (m *memAgents) Selection(_ context.Context, p switchboard.Principal) ([]router.Selected, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.agents[p.AgentID]
	if p.Kind != switchboard.PrincipalAgent || !ok || a.TenantID != p.TenantID {
		return nil, nil
	}
	out := make([]router.Selected, 0, len(a.Tools))
	for _, t := range a.Tools {
		out = append(out, router.Selected{Tool: t.Tool, ConnectionID: t.ConnectionID})
	}
	return out, nil
}

var (
	triage   = switchboard.Principal{TenantID: "ten_a", TenantSlug: "acme", Kind: switchboard.PrincipalAgent, UserID: "usr_alice", AgentID: "agt_triage", KeyID: "key_t"}
	bobAgent = switchboard.Principal{TenantID: "ten_b", TenantSlug: "beta", Kind: switchboard.PrincipalAgent, UserID: "usr_bob", AgentID: "agt_bob", KeyID: "key_ba"}
)

func TestAgentURLServesExactlyItsTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c, err := e.clientAt(t, "/mcp/acme/agents/agt_triage", "key-triage")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"notes_create_note"}, toolNames(t, c)); diff != "" {
		t.Errorf("agent tools (-want +got):\n%s", diff)
	}
	got := call(t, c, "notes_create_note", map[string]any{"text": "from the agent"})
	if got.IsError || !strings.Contains(text(got), "tok-con_a") {
		t.Errorf("agent call = %s, want it to run on con_a", text(got))
	}
	if r := testwait.Recv(t, e.seen, "the upstream to receive the call"); r.Method != http.MethodPost || r.URL.Path != "/notes" || r.Header.Get("Authorization") != "Bearer tok-con_a" {
		t.Errorf("upstream got %s %s as %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
	}
	unselected := mcp.CallToolRequest{}
	unselected.Params.Name = "notes_last_note"
	if res, err := c.CallTool(context.Background(), unselected); err == nil {
		t.Errorf("a tool the agent did not select ran: %s", text(res))
	}

	prompts, err := c.ListPrompts(context.Background(), mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range prompts.Prompts {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"agent_instructions", "use_tool"}, sortedCopy(names)); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
	req := mcp.GetPromptRequest{}
	req.Params.Name = "agent_instructions"
	req.Params.Arguments = map[string]string{"task": "note the standup"}
	p, err := c.GetPrompt(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Messages) != 1 {
		t.Fatalf("prompt messages = %+v", p.Messages)
	}
	if tc, _ := p.Messages[0].Content.(mcp.TextContent); tc.Text != "Write one note per request.\n\nTask: note the standup" {
		t.Errorf("instructions prompt = %q", tc.Text)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestAgentURLRefusesOtherKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name       string
		path       string
		key        string
		wantStatus int
	}{
		{name: "a user's key on an agent URL", path: "/mcp/acme/agents/agt_triage", key: "key-alice", wantStatus: http.StatusForbidden},
		{name: "an agent's key on the tenant URL", path: "/mcp/acme", key: "key-triage", wantStatus: http.StatusForbidden},
		{name: "an agent's key on another agent's URL", path: "/mcp/acme/agents/agt_other", key: "key-triage", wantStatus: http.StatusForbidden},
		{name: "another tenant's agent key", path: "/mcp/acme/agents/agt_triage", key: "key-bob-agent", wantStatus: http.StatusForbidden},
		{name: "another tenant's agent id under this tenant", path: "/mcp/acme/agents/agt_bob", key: "key-triage", wantStatus: http.StatusForbidden},
		{name: "a malformed agent path", path: "/mcp/acme/agents/", key: "key-triage", wantStatus: http.StatusNotFound},
		{name: "an extra path segment", path: "/mcp/acme/agents/agt_triage/x", key: "key-triage", wantStatus: http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status := postInitialize(t, e, tt.path, tt.key, nil)
			if status != tt.wantStatus {
				t.Errorf("status %d, want %d", status, tt.wantStatus)
			}
		})
	}
	t.Run("a deleted agent's key finds nothing", func(t *testing.T) {
		e := newEnv(t)
		e.agents.remove("agt_triage")
		if status := postInitialize(t, e, "/mcp/acme/agents/agt_triage", "key-triage", nil); status != http.StatusNotFound {
			t.Errorf("status %d, want 404", status)
		}
	})
}

// postInitialize posts an initialize request to path and returns the status.
func postInitialize(t *testing.T, e *env, path, key string, header map[string]string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// waitStream waits until the scope of p at the endpoint holds an open GET stream (the
// client opens it after its first request), so that notifications have a way out.
func waitStream(t *testing.T, e *env, p switchboard.Principal, agentID string) {
	t.Helper()
	testwait.Until(t, "the client of "+p.ID()+" to open its GET stream", func() bool {
		e.adapter.mu.Lock()
		s := e.adapter.scopes[scopeKey(p, agentID)]
		e.adapter.mu.Unlock()
		return s != nil && s.inFlight.Load() > 0
	})
}

// listChanged returns a channel that receives the client's tools/list_changed
// notifications.
func listChanged(t *testing.T, c *client.Client) <-chan struct{} {
	t.Helper()
	ch := make(chan struct{}, 16)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/tools/list_changed" {
			ch <- struct{}{}
		}
	})
	return ch
}

func TestAgentEditNotifiesOnlyItsTenant(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	agentClient, err := e.clientAt(t, "/mcp/acme/agents/agt_triage", "key-triage")
	if err != nil {
		t.Fatal(err)
	}
	bobClient, err := e.clientAt(t, "/mcp/beta/agents/agt_bob", "key-bob-agent")
	if err != nil {
		t.Fatal(err)
	}
	toolNames(t, agentClient)
	toolNames(t, bobClient)
	mine, theirs := listChanged(t, agentClient), listChanged(t, bobClient)
	waitStream(t, e, triage, "agt_triage")
	waitStream(t, e, bobAgent, "agt_bob")

	e.agents.put(agents.Agent{ID: "agt_triage", TenantID: "ten_a", Name: "Triage", CreatedBy: "usr_alice", Version: 2,
		Tools: []agents.Tool{{Tool: "notes_create_note", ConnectionID: "con_a"}, {Tool: "notes_last_note", ConnectionID: "con_a"}}})
	e.adapter.AgentChanged("ten_a", "agt_triage")
	select {
	case <-mine:
	case <-time.After(30 * time.Second):
		t.Fatal("the agent's session got no tools/list_changed after the edit")
	}
	if diff := cmp.Diff([]string{"notes_create_note", "notes_last_note"}, toolNames(t, agentClient)); diff != "" {
		t.Errorf("tools after the edit (-want +got):\n%s", diff)
	}
	select {
	case <-theirs:
		t.Error("another tenant's session was notified of this tenant's edit")
	case <-time.After(300 * time.Millisecond):
	}
}

func TestNeedsReconnectStaysListedAndRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c, err := e.client(t, "acme", "key-alice")
	if err != nil {
		t.Fatal(err)
	}
	changed := listChanged(t, c)
	toolNames(t, c)
	waitStream(t, e, alice, "")
	e.conns.set(connections.Connection{ID: "con_a", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "notes", AccountLabel: "alice@notes", Status: connections.StatusNeedsReconnect})
	e.adapter.ConnectionChanged("ten_a", "con_a")
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("losing a connection sent no tools/list_changed")
	}
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 2 {
		t.Fatalf("tools = %d, want both still listed", len(res.Tools))
	}
	for _, tool := range res.Tools {
		if !strings.HasPrefix(tool.Description, "[NEEDS RECONNECT] ") || !strings.Contains(tool.Description, "https://hub.test/#connections") {
			t.Errorf("%s description = %q, want the mark and the reconnect link", tool.Name, tool.Description)
		}
	}
	got := call(t, c, "notes_create_note", map[string]any{"text": "hi"})
	if !got.IsError || !strings.Contains(text(got), "https://hub.test/#connections") || !strings.Contains(text(got), "reconnect") {
		t.Errorf("call = %v %q, want a tool error with the reconnect link", got.IsError, text(got))
	}
	select {
	case r := <-e.seen:
		t.Errorf("a call on a connection needing reconnect reached the upstream: %s %s", r.Method, r.URL.Path)
	default:
	}
}
