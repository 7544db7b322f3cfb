package mcpadapter

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/schemacheck"
	"github.com/switchboard-hub/switchboard/router"
)

// regionOp is a connectionless operation whose input annotates arguments with
// x-mcp-header (SEP-2243): region (required), zone (optional) and the integer shard.
type regionOp struct{}

const regionInput = `{"type":"object","properties":{` +
	`"region":{"type":"string","description":"Where to run","x-mcp-header":"Region"},` +
	`"zone":{"type":"string","x-mcp-header":"Zone"},` +
	`"shard":{"type":"integer","x-mcp-header":"Shard"},` +
	`"tags":{"type":"array","items":{"type":"string"},"x-mcp-header":"Tags"}},"required":["region","shard"]}`

func (regionOp) Info() providers.Info {
	return providers.Info{Name: "run", Title: "Run", Description: "Run in a region.", Hints: providers.Hints{ReadOnly: true}}
}

func (regionOp) InputSchema() (*jsonschema.Schema, error) {
	var s jsonschema.Schema
	return &s, json.Unmarshal([]byte(regionInput), &s)
}

func (regionOp) OutputSchema() (*jsonschema.Schema, error) { return nil, nil }

func (regionOp) Invoke(_ context.Context, _ *providers.Call, args json.RawMessage) (any, error) {
	var in struct {
		Region string `json:"region"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, err
	}
	return &providers.ContentResult{Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"ran in ` + in.Region + `"}`)}}, nil
}

// regionEnv serves the regions provider under the schema profile.
func regionEnv(t *testing.T, profile providers.SchemaProfile) *env {
	t.Helper()
	reg := providers.NewRegistry()
	if err := reg.Register(providers.Spec{Name: "regions", Title: "Regions", Connectionless: true, Operations: []providers.Op{regionOp{}}}); err != nil {
		t.Fatal(err)
	}
	e := &env{conns: &memConns{}, agents: newMemAgents()}
	rtr := router.New(router.Options{Registry: reg, Connections: e.conns, Agents: e.agents})
	e.adapter = New(Options{Router: rtr, Auth: keys{"key-alice": alice}, Agents: e.agents, PublicURL: "https://hub.test", SchemaProfile: profile})
	t.Cleanup(func() { e.adapter.Close(context.Background()) })
	e.srv = httptest.NewServer(e.adapter)
	t.Cleanup(e.srv.Close)
	return e
}

// modernCall posts a tools/call of 2026-07-28 of regions_run with the arguments and
// the Mcp-Param headers given, and returns the HTTP status and the JSON-RPC answer.
func modernCall(t *testing.T, e *env, args map[string]any, params map[string]string) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": "regions_run", "arguments": args,
		"_meta": map[string]any{
			mcp.MetaKeyProtocolVersion:    mcp.ProtocolVersion20260728,
			mcp.MetaKeyClientInfo:         map[string]any{"name": "modern", "version": "1"},
			mcp.MetaKeyClientCapabilities: map[string]any{},
		}}})
	header := map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: "tools/call", mcp.HeaderName: "regions_run"}
	for k, v := range params {
		header[mcp.HeaderParamPrefix+k] = v
	}
	status, raw := rawPost(t, e, string(body), header)
	var msg map[string]any
	if err := json.Unmarshal([]byte(raw), &msg); err != nil {
		t.Fatalf("tools/call answered %d %s: %v", status, raw, err)
	}
	return status, msg
}

// listedRegionInput returns regions_run's input schema as a 2026-07-28 tools/list
// gives it.
func listedRegionInput(t *testing.T, e *env) map[string]any {
	t.Helper()
	list := modernPost(t, e, "tools/list", nil)
	result, _ := list["result"].(map[string]any)
	tools, _ := result["tools"].([]any)
	for _, tl := range tools {
		m, _ := tl.(map[string]any)
		if m["name"] == "regions_run" {
			in, _ := m["inputSchema"].(map[string]any)
			return in
		}
	}
	t.Fatalf("regions_run is not listed: %v", list)
	return nil
}

// headerOf returns the x-mcp-header of a listed property, "" when it has none.
func headerOf(in map[string]any, prop string) string {
	props, _ := in["properties"].(map[string]any)
	p, _ := props[prop].(map[string]any)
	h, _ := p["x-mcp-header"].(string)
	return h
}

// A tool whose input annotates arguments with x-mcp-header is listed with the
// annotations under every schema profile (the portable one keeps it on what it lists
// as a string, an integer or a boolean, and drops it from the optional zone it lists
// nullable; no profile keeps it on the array, which no header carries), and a call
// of 2026-07-28 is checked against what is listed: a header that is missing, not valid
// Base64 in its =?base64?…?= form, or not the body's value is refused with HTTP 400
// and -32020 (HeaderMismatch) before the tool runs; the matching headers, Base64 or
// literal, run it.
func TestHeaderParamsAreListedAndChecked(t *testing.T) {
	t.Parallel()
	for _, profile := range []providers.SchemaProfile{providers.ProfilePortable, providers.ProfileFull, providers.ProfileGemini} {
		t.Run(string(profile), func(t *testing.T) {
			t.Parallel()
			e := regionEnv(t, profile)
			in := listedRegionInput(t, e)
			wantZone := "Zone"
			if profile == providers.ProfilePortable {
				wantZone = "" // listed as anyOf string or null: no header's type
			}
			for prop, want := range map[string]string{"region": "Region", "shard": "Shard", "zone": wantZone, "tags": ""} {
				if got := headerOf(in, prop); got != want {
					t.Errorf("%s is listed with x-mcp-header %q, want %q: %v", prop, got, want, in)
				}
			}
			if profile == providers.ProfilePortable {
				// Less the annotations a client mirrors into headers, the listing is one
				// every vendor takes.
				raw, _ := json.Marshal(in)
				for _, r := range schemacheck.Vendors {
					if v := r.Check(providers.WithoutHeaderAnnotations(raw)); r.Profile == profile && len(v) > 0 {
						t.Errorf("%s refuses the listing: %v", r.Vendor, v)
					}
				}
			}

			args := func(region string) map[string]any {
				a := map[string]any{"region": region, "shard": 3}
				if profile == providers.ProfilePortable {
					a["zone"], a["tags"] = nil, nil
				}
				return a
			}
			for _, c := range []struct {
				name    string
				region  string
				headers map[string]string
				ok      bool
			}{
				{"base64", "Hello", map[string]string{"Region": "=?base64?SGVsbG8=?=", "Shard": "3"}, true},
				{"literal that looks like base64", "SGVsbG8=", map[string]string{"Region": "SGVsbG8=", "Shard": "3"}, true},
				{"literal without the suffix", "=?base64?SGVsbG8=", map[string]string{"Region": "=?base64?SGVsbG8=", "Shard": "3"}, true},
				{"bad padding", "Hello", map[string]string{"Region": "=?base64?SGVsbG8?=", "Shard": "3"}, false},
				{"bad characters", "Hello", map[string]string{"Region": "=?base64?SGVs!!!bG8=?=", "Shard": "3"}, false},
				{"another value", "eu-west", map[string]string{"Region": "us-east", "Shard": "3"}, false},
				{"missing", "eu-west", map[string]string{"Shard": "3"}, false},
				{"another integer", "eu-west", map[string]string{"Region": "eu-west", "Shard": "4"}, false},
			} {
				status, msg := modernCall(t, e, args(c.region), c.headers)
				errObj, _ := msg["error"].(map[string]any)
				if c.ok {
					raw, _ := json.Marshal(msg["result"])
					if status != http.StatusOK || errObj != nil || !strings.Contains(string(raw), "ran in "+c.region) {
						t.Errorf("%s: %d %v, want the tool's result", c.name, status, msg)
					}
					continue
				}
				if code, _ := errObj["code"].(float64); status != http.StatusBadRequest || int(code) != mcp.HEADER_MISMATCH {
					t.Errorf("%s: %d %v, want 400 and %d", c.name, status, msg, mcp.HEADER_MISMATCH)
				}
			}
		})
	}
}

// A session-era client knows no Mcp-Param headers: its calls are not asked for them.
func TestHeaderParamsAreNotAskedOfSessionClients(t *testing.T) {
	t.Parallel()
	e := regionEnv(t, providers.ProfileFull)
	c, err := e.client(t, "acme", "key-alice")
	if err != nil {
		t.Fatal(err)
	}
	got := call(t, c, "regions_run", map[string]any{"region": "eu-west", "shard": 1})
	if got.IsError || !strings.Contains(text(got), "ran in eu-west") {
		t.Errorf("the call failed: %s", text(got))
	}
}
