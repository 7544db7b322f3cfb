package workflows

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
)

// The "flow" test provider: tools whose every call goes to a function the test
// controls, with the hints the engine's rules turn on (read-only, a write that must
// not repeat, a destructive idempotent delete).

type readIn struct {
	Key string `json:"key" jsonschema:"What to read"`
	N   *int   `json:"n,omitempty" jsonschema:"How many items"`
}

type readOut struct {
	Value string   `json:"value" jsonschema:"The value read"`
	Items []string `json:"items" jsonschema:"The items"`
	Count int      `json:"count" jsonschema:"How many items"`
}

type writeIn struct {
	Text     string `json:"text" jsonschema:"What to write"`
	Priority *int   `json:"priority,omitempty" jsonschema:"Its priority, 1 to 5" schema:"minimum=1,maximum=5"`
}

type writeOut struct {
	ID string `json:"id" jsonschema:"The id of what was written"`
}

type removeIn struct {
	ID string `json:"id" jsonschema:"What to remove"`
}

type removeOut struct {
	Removed bool `json:"removed" jsonschema:"Whether it was removed"`
}

// flowHook answers one call of a flow tool.
type flowHook func(ctx context.Context, tool string, in json.RawMessage) (any, error)

func flowSpec(hook *flowHook) providers.Spec {
	call := func(ctx context.Context, tool string, in any) (json.RawMessage, error) {
		raw, _ := json.Marshal(in)
		out, err := (*hook)(ctx, tool, raw)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
	read := &providers.Operation[readIn, readOut]{
		Name: "read", Title: "Read", Description: "Read a value.",
		Hints: providers.Hints{ReadOnly: true, Idempotent: true},
		Run: func(ctx context.Context, _ *providers.Call, in readIn) (readOut, error) {
			var out readOut
			raw, err := call(ctx, "flow_read", in)
			if err == nil {
				err = json.Unmarshal(raw, &out)
			}
			return out, err
		},
	}
	write := &providers.Operation[writeIn, writeOut]{
		Name: "write", Title: "Write", Description: "Write a value.",
		Run: func(ctx context.Context, _ *providers.Call, in writeIn) (writeOut, error) {
			var out writeOut
			raw, err := call(ctx, "flow_write", in)
			if err == nil {
				err = json.Unmarshal(raw, &out)
			}
			return out, err
		},
	}
	remove := &providers.Operation[removeIn, removeOut]{
		Name: "remove", Title: "Remove", Description: "Remove a value for good.",
		Hints: providers.Hints{Destructive: true, Idempotent: true},
		Run: func(ctx context.Context, _ *providers.Call, in removeIn) (removeOut, error) {
			var out removeOut
			raw, err := call(ctx, "flow_remove", in)
			if err == nil {
				err = json.Unmarshal(raw, &out)
			}
			return out, err
		},
	}
	return providers.Spec{
		Name: "flow", Title: "Flow", BaseURL: "http://flow.invalid", AuthKinds: []providers.AuthKind{providers.AuthAPIKey},
		RateLimit: providers.RateLimit{PerSecond: 100000, Burst: 100000},
		Verify: func(context.Context, *providers.Call) (providers.Account, error) {
			return providers.Account{ID: "flow-1", Label: "flow-account"}, nil
		},
		Operations: []providers.Op{read, write, remove},
	}
}

// flowRegistry registers the flow provider; its calls go to *hook.
func flowRegistry(t testing.TB, hook *flowHook) *providers.Registry {
	t.Helper()
	reg := providers.NewRegistry()
	if err := reg.Register(flowSpec(hook)); err != nil {
		t.Fatal(err)
	}
	return reg
}

// staticCatalog is a catalog of the registry's tools on fixed connections, the same
// for every principal of the tenant "ten_a" (and nothing for others).
type staticCatalog struct {
	reg    *providers.Registry
	conns  []router.ConnectionRef
	tenant switchboard.TenantID // "ten_a" when empty
}

func (c staticCatalog) Tools(_ context.Context, p switchboard.Principal) ([]router.Binding, error) {
	if want := c.tenant; p.TenantID != want && (want != "" || p.TenantID != "ten_a") {
		return nil, nil
	}
	var out []router.Binding
	for _, t := range c.reg.Tools("flow") {
		out = append(out, router.Binding{Tool: t, Connections: c.conns})
	}
	return out, nil
}
