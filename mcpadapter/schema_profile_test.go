package mcpadapter

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/schemacheck"
	"github.com/switchboard-hub/switchboard/router"
)

type rowIn struct {
	Sheet  string            `json:"sheet" jsonschema:"The sheet" schema:"maxLength=5"`
	Fields map[string]string `json:"fields" jsonschema:"Cells by column name"`
	Note   *string           `json:"note,omitempty" jsonschema:"A note on the row"`
}

type rowOut struct {
	ID string `json:"id" jsonschema:"The row"`
}

// rowsEnv serves a provider whose add_row takes a free-form map (cells by column), as
// Airtable's and HubSpot's writes do, under the schema profile; sent receives each
// body its upstream got.
func rowsEnv(t *testing.T, profile providers.SchemaProfile) (*env, chan string) {
	t.Helper()
	sent := make(chan string, 4)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sent <- string(body)
		_, _ = w.Write([]byte(`{"id":"row_1"}`))
	}))
	t.Cleanup(upstream.Close)
	add := &providers.Operation[rowIn, rowOut]{
		Name: "add_row", Title: "Add row", Description: "Add a row to a sheet.",
		Run: func(ctx context.Context, c *providers.Call, in rowIn) (rowOut, error) {
			body, _ := json.Marshal(in)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.URL("/rows"), strings.NewReader(string(body)))
			resp, err := c.HTTP.Do(req)
			if err != nil {
				return rowOut{}, err
			}
			defer resp.Body.Close()
			var out rowOut
			return out, json.NewDecoder(resp.Body).Decode(&out)
		},
	}
	reg := providers.NewRegistry()
	if err := reg.Register(providers.Spec{Name: "rows", Title: "Rows", Operations: []providers.Op{add},
		Verify: func(context.Context, *providers.Call) (providers.Account, error) { return providers.Account{}, nil }}); err != nil {
		t.Fatal(err)
	}
	_ = reg.SetBaseURL("rows", upstream.URL)
	e := &env{conns: &memConns{}, agents: newMemAgents()}
	e.conns.set(connections.Connection{ID: "con_r", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "rows", AccountLabel: "alice@rows", Status: connections.StatusActive})
	rtr := router.New(router.Options{Registry: reg, Connections: e.conns, Agents: e.agents})
	e.adapter = New(Options{Router: rtr, Auth: keys{"key-alice": alice}, Agents: e.agents, PublicURL: "https://hub.test", SchemaProfile: profile})
	t.Cleanup(func() { e.adapter.Close(context.Background()) })
	e.srv = httptest.NewServer(e.adapter)
	t.Cleanup(e.srv.Close)
	return e, sent
}

// TestPortableProfileCallsWithAFreeFormMap: under the default (portable) profile the
// tool is listed in a form OpenAI's strict mode, Anthropic and Gemini accept, its map
// as JSON text and its optional note nullable; a call written for that listing
// reaches the upstream as the operation's own arguments (the map decoded, the null
// note left out), and the hub still checks the full schema (the sheet's maxLength,
// which the listing leaves out; JSON text that is not an object's).
func TestPortableProfileCallsWithAFreeFormMap(t *testing.T) {
	t.Parallel()
	e, sent := rowsEnv(t, "")
	c, err := e.client(t, "acme", "key-alice")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var schema json.RawMessage
	for _, tool := range res.Tools {
		if tool.Name == "rows_add_row" {
			schema, _ = json.Marshal(tool.InputSchema)
			if tool.RawInputSchema != nil {
				schema = tool.RawInputSchema
			}
		}
	}
	if schema == nil {
		t.Fatalf("rows_add_row is not listed")
	}
	for _, r := range schemacheck.Vendors {
		if r.Profile != providers.ProfilePortable {
			continue
		}
		if v := r.Check(schema); len(v) > 0 {
			t.Errorf("%s refuses the listed input %s: %v", r.Vendor, schema, v)
		}
	}
	if !strings.Contains(string(schema), `"fields":{"description":"Cells by column name (JSON text of an object)","type":"string"}`) {
		t.Errorf("the map is not listed as JSON text: %s", schema)
	}

	got := call(t, c, "rows_add_row", map[string]any{"sheet": "main", "fields": `{"Name":"Ada","Age":"36"}`, "note": nil})
	if got.IsError {
		t.Fatalf("the call failed: %s", text(got))
	}
	if body := <-sent; body != `{"sheet":"main","fields":{"Age":"36","Name":"Ada"}}` {
		t.Errorf("the upstream got %s", body)
	}
	for _, c2 := range []struct {
		args  map[string]any
		field string
	}{
		{map[string]any{"sheet": "too long", "fields": `{}`, "note": nil}, "sheet"},
		{map[string]any{"sheet": "main", "fields": `not json`, "note": nil}, "fields"},
	} {
		got := call(t, c, "rows_add_row", c2.args)
		if !got.IsError || !strings.Contains(text(got), c2.field) {
			t.Errorf("%v: want a tool error naming %s, got %s", c2.args, c2.field, text(got))
		}
	}
	select {
	case body := <-sent:
		t.Errorf("a refused call reached the upstream: %s", body)
	default:
	}
}

// TestFullProfileListsTheMap: under the full profile the map is listed as an object
// and passed as one.
func TestFullProfileListsTheMap(t *testing.T) {
	t.Parallel()
	e, sent := rowsEnv(t, providers.ProfileFull)
	c, err := e.client(t, "acme", "key-alice")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res.Tools[0])
	if !strings.Contains(string(raw), `"fields":{"additionalProperties":{"type":"string"}`) {
		t.Errorf("the full profile does not list the map as an object: %s", raw)
	}
	got := call(t, c, "rows_add_row", map[string]any{"sheet": "main", "fields": map[string]any{"Name": "Ada"}})
	if got.IsError {
		t.Fatalf("the call failed: %s", text(got))
	}
	if body := <-sent; body != `{"sheet":"main","fields":{"Name":"Ada"}}` {
		t.Errorf("the upstream got %s", body)
	}
}
