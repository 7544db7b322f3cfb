package providers_test

import (
	"context"
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
)

type meIn struct{}

type meOut struct {
	Login string `json:"login" jsonschema:"The account's login"`
}

func TestReservedNames(t *testing.T) {
	t.Parallel()
	reg := providers.NewRegistry()
	for _, name := range []string{"github", "google_drive"} {
		spec := providers.Spec{
			Name: name, Title: name, BaseURL: "https://" + name + ".test", AuthKinds: []providers.AuthKind{providers.AuthAPIKey},
			Verify: func(context.Context, *providers.Call) (providers.Account, error) { return providers.Account{}, nil },
			Operations: []providers.Op{&providers.Operation[meIn, meOut]{Name: "get_me", Title: "Get me", Description: "Who the token is.",
				Run: func(context.Context, *providers.Call, meIn) (meOut, error) { return meOut{}, nil }}},
		}
		if err := reg.Register(spec); err != nil {
			t.Fatal(err)
		}
	}
	prefixes := []struct {
		prefix string
		with   string
	}{
		{prefix: "github", with: "github"},
		{prefix: "github_get", with: "github"},
		{prefix: "google", with: "google_drive"},
		{prefix: "google_drive_extra", with: "google_drive"},
		{prefix: "switchboard", with: "switchboard"},
		{prefix: "switchboardx", with: "switchboard"},
		{prefix: "workflow", with: "workflow"},
		{prefix: "workflow_extra", with: "workflow"},
		{prefix: "workflows"},
		{prefix: "run_flow", with: "run_flow"},
		{prefix: "run_flow_async", with: "run_flow"},
		{prefix: "query_flow", with: "query_flow"},
		{prefix: "run"},
		{prefix: "gitlab"},
		{prefix: "githubby"},
		{prefix: "docs"},
	}
	for _, tt := range prefixes {
		t.Run("prefix "+tt.prefix, func(t *testing.T) {
			t.Parallel()
			with, reserved := reg.ReservedPrefix(tt.prefix)
			if with != tt.with || reserved != (tt.with != "") {
				t.Errorf("ReservedPrefix(%q) = %q, %t; want %q", tt.prefix, with, reserved, tt.with)
			}
		})
	}
	tools := []struct {
		name     string
		reserved bool
	}{
		{name: "github_get_me", reserved: true},
		{name: "google_drive_get_me", reserved: true},
		{name: "switchboard_run_async", reserved: true},
		{name: "workflow_triage", reserved: true},
		{name: "run_workflow", reserved: true},
		{name: "cancel_workflow", reserved: true},
		{name: "run_workflows"},
		{name: "run_flow__triage", reserved: true},
		{name: "run_flow_async__triage", reserved: true},
		{name: "query_flow__triage_2", reserved: true},
		{name: "list_flows", reserved: true},
		{name: "cancel_flow", reserved: true},
		{name: "submit_flow_elicitation", reserved: true},
		{name: "replay_flow_pending_elicitation", reserved: true},
		{name: "run_flows_report"},
		{name: "runner_flow"},
		{name: "github_get_you"},
		{name: "docs_search"},
	}
	for _, tt := range tools {
		t.Run("tool "+tt.name, func(t *testing.T) {
			t.Parallel()
			if got := reg.ReservedToolName(tt.name); got != tt.reserved {
				t.Errorf("ReservedToolName(%q) = %t, want %t", tt.name, got, tt.reserved)
			}
		})
	}
}
