package mcpadapter

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers"
)

var cleo = switchboard.Principal{TenantID: "ten_c", TenantSlug: "gamma", Kind: switchboard.PrincipalUser, UserID: "usr_cleo", KeyID: "key_c"}

// TestToolDefinitionsAreSharedAndNeverWritten serves one tool to three tenants that
// list it three ways, at once: Alice with two accounts (a connection argument), Bob
// with one, Cleo with one that needs reconnecting. Each must list its own definition,
// while the scopes share the registry tool's one definition, which none of them may
// change (the race detector sees a write made while another scope reads it).
func TestToolDefinitionsAreSharedAndNeverWritten(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(o *Options) {
		o.Auth = keys{"key-alice": alice, "key-bob": bob, "key-cleo": cleo}
	})
	e.conns.set(
		connections.Connection{ID: "con_a", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "notes", AccountLabel: "work", Status: connections.StatusActive},
		connections.Connection{ID: "con_a2", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "notes", AccountLabel: "home", Status: connections.StatusActive},
		connections.Connection{ID: "con_b", TenantID: "ten_b", OwnerUserID: "usr_bob", Provider: "notes", AccountLabel: "bob@notes", Status: connections.StatusActive},
		connections.Connection{ID: "con_c", TenantID: "ten_c", OwnerUserID: "usr_cleo", Provider: "notes", AccountLabel: "cleo@notes", Status: connections.StatusNeedsReconnect},
	)
	type seen struct {
		instructions string
		tool         mcp.Tool
		result       string
	}
	tenants := []struct{ slug, key, conn string }{
		{"acme", "key-alice", "home"}, {"beta", "key-bob", ""}, {"gamma", "key-cleo", ""},
	}
	got := make([]seen, len(tenants))
	var wg sync.WaitGroup
	errs := make(chan error, len(tenants)*4)
	for i, tn := range tenants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, instructions, err := initClient(e, "/mcp/"+tn.slug, tn.key)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			got[i].instructions = instructions
			for range 4 { // lists and calls interleaved with the other tenants'
				res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
				if err != nil {
					errs <- err
					return
				}
				for _, tool := range res.Tools {
					if tool.Name == "notes_create_note" {
						got[i].tool = tool
					}
				}
				req := mcp.CallToolRequest{}
				req.Params.Name = "notes_create_note"
				args := map[string]any{"text": tn.slug}
				if tn.conn != "" {
					args["connection"] = tn.conn
				}
				req.Params.Arguments = args
				out, err := c.CallTool(context.Background(), req)
				if err != nil {
					errs <- err
					return
				}
				got[i].result = text(out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// Alice lists the connection argument with her two accounts; the others do not.
	var aliceSchema struct {
		Properties map[string]struct {
			Enum []string `json:"enum"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(inputSchema(got[0].tool), &aliceSchema)
	if diff := cmp.Diff([]string{"work", "home"}, aliceSchema.Properties["connection"].Enum); diff != "" {
		t.Errorf("alice's connection enum (-want +got):\n%s", diff)
	}
	if !strings.Contains(got[0].result, "tok-con_a2") {
		t.Errorf("alice's call on home = %s, want it on con_a2", got[0].result)
	}
	for _, i := range []int{1, 2} {
		if raw := inputSchema(got[i].tool); !strings.Contains(string(raw), `"text"`) || strings.Contains(string(raw), `"connection"`) {
			t.Errorf("%s lists the input schema %s, want text and no connection argument", tenants[i].slug, raw)
		}
	}
	// Bob's definition is the registry's, his account said in the instructions.
	if got[1].tool.Description != "Create a note." {
		t.Errorf("bob's description = %q", got[1].tool.Description)
	}
	if !strings.Contains(got[1].instructions, `Each tool runs as one connected account: Notes "bob@notes".`) {
		t.Errorf("bob's instructions = %q, want his account named", got[1].instructions)
	}
	// The same through initialize, in a version before 2026-07-28.
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/mcp/beta", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Authorization", "Bearer key-bob")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `Each tool runs as one connected account: Notes \"bob@notes\".`) {
		t.Errorf("bob's initialize = %s, want his account in the instructions", body)
	}
	if !strings.Contains(got[1].result, "tok-con_b") {
		t.Errorf("bob's call = %s, want it on con_b", got[1].result)
	}
	// Cleo's is marked; nobody else's is.
	if !strings.HasPrefix(got[2].tool.Description, NeedsReconnectMark) || !strings.Contains(got[2].tool.Description, `"cleo@notes"`) {
		t.Errorf("cleo's description = %q, want it marked", got[2].tool.Description)
	}
	for _, i := range []int{0, 1} {
		if strings.Contains(got[i].tool.Description, NeedsReconnectMark) {
			t.Errorf("%s's description = %q, marked by another tenant's connection", tenants[i].slug, got[i].tool.Description)
		}
	}

	// The three scopes hold the one shared definition, still as the registry made it.
	var defs []*toolDef
	var pristine []byte
	e.adapter.mu.Lock()
	for _, p := range []switchboard.Principal{alice, bob, cleo} {
		s := e.adapter.scopes[scopeKey(p, "")]
		if s == nil {
			t.Fatalf("no scope of %s", p.ID())
		}
		ht, ok := s.hubTool("notes_create_note")
		if !ok {
			t.Fatalf("%s has no notes_create_note", p.ID())
		}
		defs = append(defs, ht.def)
		pristine, _ = json.Marshal(newToolDef(ht.binding.Tool, false, providers.DefaultSchemaProfile).tool) // made afresh from the registry's tool
	}
	e.adapter.mu.Unlock()
	if defs[0] != defs[1] || defs[1] != defs[2] {
		t.Errorf("the scopes hold their own definitions (%p %p %p), not the shared one", defs[0], defs[1], defs[2])
	}
	after, _ := json.Marshal(defs[1].tool)
	if diff := cmp.Diff(string(pristine), string(after)); diff != "" {
		t.Errorf("the shared definition was changed (-registry's +now):\n%s", diff)
	}
}

// inputSchema is a listed tool's input schema as JSON, as the client decoded it.
func inputSchema(tool mcp.Tool) json.RawMessage {
	if len(tool.RawInputSchema) > 0 {
		return tool.RawInputSchema
	}
	raw, _ := json.Marshal(tool.InputSchema)
	return raw
}

// initClient starts a client at path and returns it with the instructions its
// initialize answered.
func initClient(e *env, path, key string) (*client.Client, string, error) {
	c, err := client.NewStreamableHttpClient(e.srv.URL+path, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}))
	if err != nil {
		return nil, "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		return nil, "", err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		_ = c.Close()
		return nil, "", err
	}
	return c, res.Instructions, nil
}
