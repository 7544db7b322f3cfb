package providers

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ownTools is a provider whose tools exist per connection: each connection brings
// <label>_echo; the "shadow" connection also brings a tool named like the registry's
// fake_echo and one named switchboard_run, and the "down" connection cannot list.
func ownTools(t *testing.T) Spec {
	t.Helper()
	spec := &Spec{Name: "own", Title: "Own"}
	spec.Tools = func(_ context.Context, c Connection) ([]*Tool, error) {
		if c.Label == "down" {
			return nil, errors.New("the server is down")
		}
		names := []string{c.Label + "_echo"}
		if c.Label == "shadow" {
			names = append(names, "fake_echo", "switchboard_run")
		}
		var out []*Tool
		for _, n := range names {
			tool, err := NewConnectionTool(spec, n, echoOp("echo", Hints{ReadOnly: true}), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tool)
		}
		return out, nil
	}
	return *spec
}

func toolNames(tools []*Tool) []string {
	out := []string{}
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

// TestConnectionTools: the registry answers a connection's tools, and one of them by
// name, for registered providers and per-connection ones alike; a per-connection
// tool never shadows the hub's.
func TestConnectionTools(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	if err := r.Register(fakeSpec("fake", echoOp("echo", Hints{ReadOnly: true}))); err != nil {
		t.Fatal(err)
	}
	if r.PerConnection() {
		t.Error("a registry without per-connection providers says it has one")
	}
	if err := r.Register(ownTools(t)); err != nil {
		t.Fatal(err)
	}
	if !r.PerConnection() {
		t.Error("PerConnection = false after registering one")
	}
	ctx := context.Background()
	tests := []struct {
		name  string
		conn  Connection
		want  []string
		err   bool
		found map[string]bool // ConnectionTool's answer by name
	}{
		{name: "registered provider", conn: Connection{Provider: "fake", ID: "con_1"}, want: []string{"fake_echo"},
			found: map[string]bool{"fake_echo": true, "docs_echo": false}},
		{name: "per-connection provider", conn: Connection{Provider: "own", ID: "con_2", Label: "docs"}, want: []string{"docs_echo"},
			found: map[string]bool{"docs_echo": true, "fake_echo": false, "wiki_echo": false}},
		{name: "the hub's names are left out", conn: Connection{Provider: "own", ID: "con_3", Label: "shadow"}, want: []string{"shadow_echo"},
			found: map[string]bool{"shadow_echo": true, "fake_echo": false, "switchboard_run": false}},
		{name: "unknown provider", conn: Connection{Provider: "gone", ID: "con_4"}, want: []string{},
			found: map[string]bool{"fake_echo": false}},
		{name: "a listing failure is the caller's to see", conn: Connection{Provider: "own", ID: "con_5", Label: "down"}, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := r.ConnectionTools(ctx, tt.conn)
			if tt.err {
				if err == nil {
					t.Fatal("no error from a connection whose tools cannot be listed")
				}
				if _, err := r.ConnectionTool(ctx, tt.conn, "down_echo"); err == nil {
					t.Error("ConnectionTool: no error from a connection whose tools cannot be listed")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, toolNames(got)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			for name, want := range tt.found {
				tool, err := r.ConnectionTool(ctx, tt.conn, name)
				if err != nil {
					t.Fatal(err)
				}
				if (tool != nil) != want || tool != nil && tool.Name != name {
					t.Errorf("ConnectionTool(%s) = %v, want found %v", name, tool, want)
				}
				if want {
					if err := tool.Validate([]byte(`{"text":"x"}`)); err != nil {
						t.Errorf("%s: %v", name, err)
					}
				}
			}
		})
	}
}

// TestRegisterPerConnection: a per-connection provider needs no Verify, may not also
// have operations, and reserves no prefix (its tools are named by its connections).
func TestRegisterPerConnection(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	mixed := ownTools(t)
	mixed.Name, mixed.Operations = "mixed", []Op{echoOp("echo", Hints{})}
	if err := r.Register(mixed); err == nil {
		t.Error("a provider with tools per connection and operations both was registered")
	}
	if err := r.Register(ownTools(t)); err != nil {
		t.Fatal(err)
	}
	if with, reserved := r.ReservedPrefix("own"); reserved {
		t.Errorf("ReservedPrefix(own) = %s: a per-connection provider reserves its name", with)
	}
	if err := r.Register(Spec{Name: "noverify", Title: "No verify"}); err == nil {
		t.Error("a provider without Verify nor per-connection tools was registered")
	}
}
