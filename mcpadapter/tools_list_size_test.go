package mcpadapter

import (
	"encoding/json"
	"strings"
	"testing"

	hubtools "github.com/switchboard-hub/switchboard/providers/hub"

	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers/github"
	"github.com/switchboard-hub/switchboard/providers/slack"
	"github.com/switchboard-hub/switchboard/router"
)

// listedBytes asks for the tools at path as key in a fresh session and returns the
// bytes of each tool of the real tools/list answer by provider prefix ("github",
// "slack", "switchboard"), and of the whole answer.
func listedBytes(t *testing.T, e *env, path, key string) (map[string]int, map[string]int, int) {
	t.Helper()
	s := openSession(t, e, path, key)
	a, _ := post(t, e, path, key, s, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
	var r struct {
		Result struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(a.Body), &r); err != nil || len(r.Result.Tools) == 0 {
		t.Fatalf("tools/list at %s: %v: %.300s", path, err, a.Body)
	}
	bytes, count := map[string]int{}, map[string]int{}
	for _, raw := range r.Result.Tools {
		var tool struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &tool); err != nil {
			t.Fatal(err)
		}
		prefix, _, _ := strings.Cut(tool.Name, "_")
		bytes[prefix] += len(raw)
		count[prefix]++
	}
	return bytes, count, len(a.Body)
}

// githubAndSlack is an env whose tenant acme has one GitHub and one Slack connection.
func githubAndSlack(t *testing.T, opt func(*Options)) *env {
	t.Helper()
	e := newEnvWith(t, opt, func(o *router.Options) {
		for _, spec := range []func() error{
			func() error { return o.Registry.Register(github.Spec()) },
			func() error { return o.Registry.Register(slack.Spec()) },
			// The hub's own tools, as serve registers them: the run tools among them are
			// listed where the run-tools setting serves them.
			func() error { return o.Registry.Register((&hubtools.Tools{}).Spec()) },
		} {
			if err := spec(); err != nil {
				t.Fatal(err)
			}
		}
	})
	e.conns.set(
		connections.Connection{ID: "con_gh", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "github", AccountLabel: "octocat", Status: connections.StatusActive},
		connections.Connection{ID: "con_sl", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "slack", AccountLabel: "acme", Status: connections.StatusActive},
	)
	return e
}

// TestToolsListIsLean counts the bytes of the real tools/list answer of a tenant with
// GitHub and Slack. GitHub's 51 tools must take at most half of the
// 136,917 bytes they took with the full schemas: 68,458. They are there because the
// listed output schemas keep only the result's type and required fields (models are
// not shown output schemas; the REST catalog has them whole), pagination is explained
// once, in the cursor parameter, and a few descriptions no longer repeat what their
// parameters say. TestListedSchemasKeepWhatCallersNeed (providers/all) checks that
// nothing a caller needs went with them.
func TestToolsListIsLean(t *testing.T) {
	t.Parallel()
	e := githubAndSlack(t, nil)
	size, count, total := listedBytes(t, e, "/mcp/acme", "key-alice")
	if count["github"] != 51 || count["slack"] != 26 {
		t.Fatalf("listed %d GitHub and %d Slack tools, want 51 and 26", count["github"], count["slack"])
	}
	t.Logf("tools/list: %d bytes; GitHub %d bytes (%d per tool), Slack %d bytes (%d per tool)",
		total, size["github"], size["github"]/51, size["slack"], size["slack"]/26)
	if size["github"] > 136_917/2 {
		t.Errorf("GitHub's 51 tools take %d bytes of tools/list, want at most half of 136,917 (%d)", size["github"], 136_917/2)
	}
	if size["slack"] > 33_000 {
		t.Errorf("Slack's 26 tools take %d bytes of tools/list, want at most 33,000", size["slack"])
	}
}

// TestRunToolsFollowTheSetting: the five run tools are listed where the run-tools
// setting serves them: by default (auto) only where the confirm policy asks before
// some calls, whose answers point at switchboard_get_run and
// switchboard_submit_elicitation; on and off decide outright, and an agent's own
// setting wins over its tenant's. Where they are listed they cost every list the
// bytes logged here.
func TestRunToolsFollowTheSetting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		tenant agents.Settings
		agent  agents.Agent // at the agent URL when ID is set
		want   bool
	}{
		{name: "default, no confirmations", tenant: agents.Settings{Confirm: agents.ConfirmNever}, want: false},
		{name: "default, confirm destructive", tenant: agents.Settings{Confirm: agents.ConfirmDestructive}, want: true},
		{name: "auto, confirm always", tenant: agents.Settings{Confirm: agents.ConfirmAlways, RunTools: agents.RunToolsAuto}, want: true},
		{name: "on", tenant: agents.Settings{Confirm: agents.ConfirmNever, RunTools: agents.RunToolsOn}, want: true},
		{name: "off despite confirmations", tenant: agents.Settings{Confirm: agents.ConfirmAlways, RunTools: agents.RunToolsOff}, want: false},
		{name: "agent inherits on", tenant: agents.Settings{Confirm: agents.ConfirmNever, RunTools: agents.RunToolsOn},
			agent: agents.Agent{ID: "agt_triage"}, want: true},
		{name: "agent inherits auto with its own confirmations", tenant: agents.Settings{Confirm: agents.ConfirmNever},
			agent: agents.Agent{ID: "agt_triage", Confirm: agents.ConfirmDestructive}, want: true},
		{name: "agent off over tenant on", tenant: agents.Settings{Confirm: agents.ConfirmNever, RunTools: agents.RunToolsOn},
			agent: agents.Agent{ID: "agt_triage", RunTools: agents.RunToolsOff}, want: false},
		{name: "agent on over tenant off", tenant: agents.Settings{Confirm: agents.ConfirmAlways, RunTools: agents.RunToolsOff},
			agent: agents.Agent{ID: "agt_triage", RunTools: agents.RunToolsOn}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := githubAndSlack(t, func(o *Options) {
				o.Extensions = []Extension{RunsExtension(RunsOptions{StateKey: []byte("tools-list-size")})}
			})
			st := tt.tenant
			st.TenantID = "ten_a"
			e.agents.setSettings(st)
			path, key := "/mcp/acme", "key-alice"
			if tt.agent.ID != "" {
				a := tt.agent
				a.TenantID, a.Name, a.CreatedBy, a.Version = "ten_a", "Triage", "usr_alice", 1
				a.Tools = []agents.Tool{{Tool: "github_get_issue", ConnectionID: "con_gh"}}
				e.agents.put(a)
				path, key = "/mcp/acme/agents/agt_triage", "key-triage"
			}
			size, count, _ := listedBytes(t, e, path, key)
			if got := count["switchboard"]; (tt.want && got != 5) || (!tt.want && got != 0) {
				t.Fatalf("listed %d switchboard_ tools, want the 5 run tools listed: %v", got, tt.want)
			}
			if tt.want {
				t.Logf("the 5 run tools take %d bytes of tools/list", size["switchboard"])
			}
		})
	}
}

// TestToolTitleSaidOnce: each tool's display title is listed once, in
// annotations.title, which clients of every protocol version read (2025-06-18 and
// later fall back to it when the tool has no title of its own); a second copy in the
// tool's own title cost GitHub's list about 1.5 KB.
func TestToolTitleSaidOnce(t *testing.T) {
	t.Parallel()
	e := githubAndSlack(t, func(o *Options) {
		o.Extensions = []Extension{RunsExtension(RunsOptions{StateKey: []byte("tools-list-size")})}
	})
	e.agents.setSettings(agents.Settings{TenantID: "ten_a", Confirm: agents.ConfirmNever, RunTools: agents.RunToolsOn})
	s := openSession(t, e, "/mcp/acme", "key-alice")
	a, _ := post(t, e, "/mcp/acme", "key-alice", s, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
	var r struct {
		Result struct {
			Tools []struct {
				Name        string                 `json:"name"`
				Title       *string                `json:"title"`
				Annotations struct{ Title string } `json:"annotations"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(a.Body), &r); err != nil || len(r.Result.Tools) == 0 {
		t.Fatalf("tools/list: %v: %.300s", err, a.Body)
	}
	runTools := 0
	for _, tool := range r.Result.Tools {
		if tool.Title != nil {
			t.Errorf("%s: title %q is listed twice (title and annotations.title)", tool.Name, *tool.Title)
		}
		if tool.Annotations.Title == "" {
			t.Errorf("%s: no annotations.title", tool.Name)
		}
		if strings.HasPrefix(tool.Name, "switchboard_") {
			runTools++
		}
	}
	if runTools == 0 {
		t.Errorf("no switchboard_ run tools listed with run tools on")
	}
}
