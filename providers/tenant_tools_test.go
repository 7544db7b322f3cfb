package providers

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
)

// TestTenantTools: a connectionless provider's tools per tenant are listed for that
// tenant, with the registry's own Spec as their provider, less any named like a
// registered operation's tool or given as another provider's; such a provider needs no
// Verify and is no provider a person connects.
func TestTenantTools(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	if err := r.Register(fakeSpec("echo", echoOp("say", Hints{ReadOnly: true}))); err != nil {
		t.Fatal(err)
	}
	other := &Spec{Name: "other"}
	flows := &Spec{Name: "flows", Title: "Flows", Connectionless: true}
	flows.TenantTools = func(_ context.Context, tenant switchboard.TenantID) ([]*Tool, error) {
		if tenant != "ten_a" {
			return nil, nil
		}
		var out []*Tool
		for _, c := range []struct {
			name string
			spec *Spec
		}{{"flow_daily", flows}, {"echo_say", flows}, {"flow_stolen", other}} {
			tool, err := NewConnectionTool(c.spec, c.name, echoOp("x", Hints{}), json.RawMessage(`{"type":"object"}`), nil)
			if err != nil {
				return nil, err
			}
			out = append(out, tool)
		}
		return out, nil
	}
	if err := r.Register(*flows); err != nil {
		t.Fatalf("a connectionless provider without Verify: %v", err)
	}
	if !r.PerTenant() {
		t.Error("PerTenant = false with a provider of tools per tenant")
	}
	ctx := context.Background()
	tools, err := r.TenantTools(ctx, "ten_a")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"flow_daily"}, toolNames(tools)); diff != "" {
		t.Errorf("ten_a's tools (-want +got):\n%s", diff)
	}
	spec, _ := r.Provider("flows")
	if tools[0].Provider != spec {
		t.Error("a tenant tool's provider is not the registry's Spec")
	}
	if got, _ := r.TenantTool(ctx, "ten_b", "flow_daily"); got != nil {
		t.Error("ten_b has ten_a's tool")
	}
	if got, _ := r.TenantTool(ctx, "ten_a", "echo_say"); got != nil {
		t.Error("a tenant tool shadows a registered operation")
	}
	echo, _ := r.Provider("echo")
	if !echo.Connectable() || spec.Connectable() {
		t.Errorf("Connectable: echo %t, flows %t; want true, false", echo.Connectable(), spec.Connectable())
	}
	if err := NewRegistry().Register(Spec{Name: "bad", TenantTools: flows.TenantTools, Verify: echo.Verify}); err == nil {
		t.Error("tools per tenant on a provider that needs connections were registered")
	}
}

// TestTenantToolsListedConcurrently: a provider may hand the same tools (cached per
// version) to listings running at once; the registry must not write to them (the race
// detector fails this test otherwise), and each listing still names the registry's Spec.
func TestTenantToolsListedConcurrently(t *testing.T) {
	t.Parallel()
	flows := &Spec{Name: "flows", Title: "Flows", Connectionless: true}
	cached, err := NewConnectionTool(flows, "flow_daily", echoOp("x", Hints{}), json.RawMessage(`{"type":"object"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	flows.TenantTools = func(context.Context, switchboard.TenantID) ([]*Tool, error) { return []*Tool{cached}, nil }
	r := NewRegistry()
	if err := r.Register(*flows); err != nil {
		t.Fatal(err)
	}
	spec, _ := r.Provider("flows")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			tools, err := r.TenantTools(context.Background(), "ten_a")
			if err != nil || len(tools) != 1 || tools[0].Provider != spec {
				t.Errorf("TenantTools = %v, %v; want flow_daily of the registry's Spec", toolNames(tools), err)
			}
		})
	}
	wg.Wait()
	if cached.Provider != flows {
		t.Error("the provider's own tool was changed by the registry")
	}
}
