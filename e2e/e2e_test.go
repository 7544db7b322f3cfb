package e2e

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/providers/github"
	"github.com/switchboard-hub/switchboard/providers/slack"
)

// TestEndToEnd runs the whole flow against the real binary: on SQLite always, and on a
// fresh PostgreSQL database when SWITCHBOARD_TEST_DATABASE_URL is set.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	requireNode(t)
	ensureClientPackages(t)
	bin := buildServer(t)

	stores := []store{{name: "sqlite", setup: func(*testing.T) (map[string]string, func(*testing.T) []byte) { return nil, nil }}}
	if base := os.Getenv(envPostgresURL); base != "" {
		stores = append(stores, store{name: "postgres", setup: func(t *testing.T) (map[string]string, func(*testing.T) []byte) {
			dbURL, db := freshPostgres(t, base)
			return map[string]string{"SWITCHBOARD_DATABASE_URL": dbURL}, func(t *testing.T) []byte { return dumpPostgres(t, db) }
		}})
	}
	for _, store := range stores {
		t.Run(store.name, func(t *testing.T) {
			t.Parallel()
			env, dump := store.setup(t)
			runFlow(t, bin, env, dump)
		})
	}
}

// store is a database the flow runs on. setup returns the server's extra environment
// and a function that dumps the database as text (nil: read the SQLite data directory).
type store struct {
	name  string
	setup func(t *testing.T) (env map[string]string, dump func(t *testing.T) []byte)
}

// runFlow starts the server with fake upstreams, connects GitHub and Slack for tenant
// default, creates tenant beta and connects its own GitHub account (another token,
// another login), drives both MCP URLs with the TypeScript client, and
// checks what the client saw, what the fakes received, and that no secret is stored in
// plain text. dump returns the database's contents as text; nil means the SQLite files
// in the data directory.
func runFlow(t *testing.T, bin string, env map[string]string, dump func(t *testing.T) []byte) {
	gh, ghRec := fakeGitHub(t)
	sl, slRec := fakeSlack(t)
	serverEnv := map[string]string{
		"SWITCHBOARD_GITHUB_BASE_URL": gh.URL,
		"SWITCHBOARD_SLACK_BASE_URL":  sl.URL + "/api",
	}
	for k, v := range env {
		serverEnv[k] = v
	}
	srv := startServer(t, bin, serverEnv)
	if want := srv.BaseURL + "/mcp/default"; srv.MCPURL != want {
		t.Errorf("printed MCP URL = %q, want %q", srv.MCPURL, want)
	}
	api := &apiClient{Base: srv.BaseURL, Key: srv.AdminKey}

	// Tenant beta, with an owner key of its own.
	status, body := api.Do(t, http.MethodPost, "/api/tenants", map[string]string{"slug": "beta", "name": "Beta", "owner_email": "owner@beta.test"})
	if status != http.StatusCreated {
		t.Fatalf("POST /api/tenants: status %d, want 201; body %s", status, body)
	}
	var beta struct {
		Tenant struct {
			Slug   string `json:"slug"`
			MCPURL string `json:"mcp_url"`
		} `json:"tenant"`
		APIKey struct {
			Key string `json:"key"`
		} `json:"api_key"`
	}
	if err := json.Unmarshal(body, &beta); err != nil {
		t.Fatalf("POST /api/tenants: decode %s: %v", redactKey(string(body)), err)
	}
	betaKey, betaURL := beta.APIKey.Key, srv.BaseURL+"/mcp/beta"
	if !strings.HasPrefix(betaKey, "sbk_") || beta.Tenant.Slug != "beta" || beta.Tenant.MCPURL != betaURL {
		t.Fatalf("POST /api/tenants answered %s; want tenant.slug beta, tenant.mcp_url %s and an sbk_ api_key.key", redactKey(string(body)), betaURL)
	}

	// Connections for tenant default: a token the upstream refuses, then good ones.
	connects := []struct {
		name      string
		provider  string
		token     string
		wantCode  int // 0: any 4xx refusal
		wantLabel string
	}{
		{name: "github revoked token", provider: "github", token: githubBadToken},
		{name: "github", provider: "github", token: githubToken, wantCode: http.StatusCreated, wantLabel: githubLogin},
		{name: "slack", provider: "slack", token: slackToken, wantCode: http.StatusCreated, wantLabel: slackTeam},
	}
	for _, c := range connects {
		status, body := api.Do(t, http.MethodPost, "/api/connections", map[string]string{"provider": c.provider, "token": c.token})
		if strings.Contains(string(body), c.token) {
			t.Errorf("connect %s: the answer echoes the token", c.name)
		}
		if c.wantCode != http.StatusCreated {
			var refusal struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &refusal); err != nil || status < 400 || status > 499 || refusal.Error.Code == "" || refusal.Error.Message == "" {
				t.Errorf("connect %s: status %d, body %s; want a 4xx refusal with an error code and message", c.name, status, body)
			}
			continue
		}
		if status != c.wantCode {
			t.Fatalf("connect %s: status %d, want %d; body %s", c.name, status, c.wantCode, body)
		}
		var got struct {
			ID           string `json:"id"`
			AccountLabel string `json:"account_label"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("connect %s: decode %s: %v", c.name, body, err)
		}
		if got.ID == "" || got.AccountLabel != c.wantLabel {
			t.Errorf("connect %s: id %q, account_label %q; want an id and %q", c.name, got.ID, got.AccountLabel, c.wantLabel)
		}
	}

	// Tenant beta's own GitHub account.
	betaAPI := &apiClient{Base: srv.BaseURL, Key: betaKey}
	status, body = betaAPI.Do(t, http.MethodPost, "/api/connections", map[string]string{"provider": "github", "token": githubBetaToken})
	if status != http.StatusCreated {
		t.Fatalf("connect beta's github: status %d, want 201; body %s", status, body)
	}
	var betaConn struct {
		AccountLabel string `json:"account_label"`
	}
	if err := json.Unmarshal(body, &betaConn); err != nil || betaConn.AccountLabel != githubBetaLogin {
		t.Fatalf("connect beta's github: %s (%v); want account_label %q", body, err, githubBetaLogin)
	}
	// Beta confirms nothing, so by default its URL would not list the run tools; the runs
	// flow calls them there to show A's run stays A's.
	if status, body := betaAPI.Do(t, http.MethodPut, "/api/mcp-settings", map[string]string{"confirm": "never", "tool_mode": "all", "run_tools": "on"}); status != http.StatusOK {
		t.Fatalf("PUT beta's /api/mcp-settings: status %d, want 200; body %s", status, body)
	}

	// Tenant default asks the person before destructive calls (the runs flow of run.mjs
	// checks it; its other calls are not destructive).
	if status, body := api.Do(t, http.MethodPut, "/api/mcp-settings", map[string]string{"confirm": "destructive", "tool_mode": "all"}); status != http.StatusOK {
		t.Fatalf("PUT /api/mcp-settings: status %d, want 200; body %s", status, body)
	}

	// The official TypeScript client.
	run := runClient(t, map[string]string{
		"MCP_URL_A": srv.MCPURL, "KEY_A": srv.AdminKey,
		"MCP_URL_B": betaURL, "KEY_B": betaKey,
		"GH_LABEL_A": githubLogin, "GH_LOGIN_B": githubBetaLogin,
		"GH_OWNER": githubOwner, "GH_REPO": githubRepo, "SLACK_CHANNEL": slackChannel,
	})
	if run.ExitCode != 0 || !run.Summary.OK {
		t.Errorf("run.mjs exit %d, failures:\n  %s\nstderr:\n%s", run.ExitCode, strings.Join(run.Summary.Failures, "\n  "), run.Stderr)
	}
	checkSummary(t, run.Summary)
	checkRunsSummary(t, run.Summary.runsSummary)

	// What the upstreams received.
	wantGitHub := []received{
		{Method: "GET", Path: "/user", Authorization: "Bearer " + githubBadToken, Accept: "application/vnd.github+json", APIVersion: "2022-11-28"},
		{Method: "GET", Path: "/user", Authorization: "Bearer " + githubToken, Accept: "application/vnd.github+json", APIVersion: "2022-11-28"},
		{Method: "GET", Path: "/user", Authorization: "Bearer " + githubBetaToken, Accept: "application/vnd.github+json", APIVersion: "2022-11-28"},
		{Method: "POST", Path: "/repos/" + githubOwner + "/" + githubRepo + "/issues", ContentType: "application/json",
			Authorization: "Bearer " + githubToken, Accept: "application/vnd.github+json", APIVersion: "2022-11-28",
			Body: `{"body":"Steps: start with an empty switchboard.yaml.","title":"Crash when the config file is empty"}`},
		// Beta's call runs on beta's token; its call naming default's account sent nothing.
		{Method: "POST", Path: "/repos/" + githubOwner + "/" + githubRepo + "/issues", ContentType: "application/json",
			Authorization: "Bearer " + githubBetaToken, Accept: "application/vnd.github+json", APIVersion: "2022-11-28",
			Body: `{"title":"Filed from tenant beta"}`},
		// The runs flow: the async run and the MCP task read the issue; the run confirmed
		// through switchboard_submit_elicitation and the call the person accepted close
		// it; the call they declined sent nothing.
		{Method: "GET", Path: fmt.Sprintf("/repos/%s/%s/issues/%d", githubOwner, githubRepo, githubIssueNum),
			Authorization: "Bearer " + githubToken, Accept: "application/vnd.github+json", APIVersion: "2022-11-28"},
		{Method: "GET", Path: fmt.Sprintf("/repos/%s/%s/issues/%d", githubOwner, githubRepo, githubIssueNum),
			Authorization: "Bearer " + githubToken, Accept: "application/vnd.github+json", APIVersion: "2022-11-28"},
		{Method: "PATCH", Path: fmt.Sprintf("/repos/%s/%s/issues/%d", githubOwner, githubRepo, githubIssueNum), ContentType: "application/json",
			Authorization: "Bearer " + githubToken, Accept: "application/vnd.github+json", APIVersion: "2022-11-28", Body: `{"state":"closed"}`},
		{Method: "PATCH", Path: fmt.Sprintf("/repos/%s/%s/issues/%d", githubOwner, githubRepo, githubIssueNum), ContentType: "application/json",
			Authorization: "Bearer " + githubToken, Accept: "application/vnd.github+json", APIVersion: "2022-11-28", Body: `{"state":"closed"}`},
	}
	if diff := cmp.Diff(wantGitHub, normalize(ghRec.All())); diff != "" {
		t.Errorf("GitHub fake received (-want +got):\n%s", diff)
	}
	wantSlack := []received{
		{Method: "GET", Path: "/api/auth.test", Authorization: "Bearer " + slackToken, Accept: "application/json"},
		{Method: "POST", Path: "/api/chat.postMessage", ContentType: "application/x-www-form-urlencoded",
			Authorization: "Bearer " + slackToken, Accept: "application/json",
			Body: url.Values{"channel": {slackChannel}, "text": {"Deploy finished :rocket:"}}.Encode()},
	}
	if diff := cmp.Diff(wantSlack, normalize(slRec.All())); diff != "" {
		t.Errorf("Slack fake received (-want +got):\n%s", diff)
	}

	// The async run through REST: its owner reads it, tenant beta gets a 404 like a
	// missing run's.
	checkRunsREST(t, api, betaAPI, run.Summary.AsyncRunID)

	// No secret in plain text where the server keeps its data.
	var stored []byte
	if dump != nil {
		stored = dump(t)
	} else {
		stored = readDataDir(t, srv.DataDir)
	}
	secrets := []struct{ name, value string }{
		{"GitHub token", githubToken}, {"Slack token", slackToken}, {"beta's GitHub token", githubBetaToken},
		{"admin API key", srv.AdminKey}, {"beta owner API key", betaKey},
	}
	for _, s := range secrets {
		if bytes.Contains(stored, []byte(s.value)) || bytes.Contains(stored, []byte(hex.EncodeToString([]byte(s.value)))) {
			t.Errorf("the %s is stored in plain text", s.name)
		}
	}
	logs := srv.Stdout.String() + srv.Stderr.String()
	for _, s := range secrets[:3] {
		if strings.Contains(logs, s.value) {
			t.Errorf("the server's output holds the %s", s.name)
		}
	}
	if strings.Contains(logs, betaKey) {
		t.Errorf("the server's output holds the beta owner API key")
	}
	// A control: the account labels are stored in clear, so a search that misses them
	// did not read the database.
	for _, label := range []string{githubLogin, slackTeam, githubBetaLogin} {
		if !bytes.Contains(stored, []byte(label)) {
			t.Errorf("the stored data (%d bytes) does not hold the account label %q: the secret check read the wrong data", len(stored), label)
		}
	}
}

// checkSummary checks run.mjs's summary beyond its own checks: the exact tool list, the
// structured results as the fakes' answers map to them, and the refusals.
func checkSummary(t *testing.T, s summary) {
	t.Helper()
	var wantTools []string
	// Every GitHub operation, whatever their number: the GitHub package tests each one.
	for _, op := range github.Spec().Operations {
		wantTools = append(wantTools, "github_"+op.Info().Name)
	}
	// Every Slack operation, whatever their number: the Slack package tests each one.
	for _, op := range slack.Spec().Operations {
		wantTools = append(wantTools, "slack_"+op.Info().Name)
	}
	// The management tools of asynchronous runs, on every MCP URL.
	runTools := []string{"switchboard_cancel_run", "switchboard_get_run", "switchboard_list_runs", "switchboard_run_async", "switchboard_submit_elicitation"}
	wantTools = append(wantTools, runTools...)
	// The workflow tools, on every MCP URL (no workflow is saved yet).
	wantTools = append(wantTools, "cancel_workflow", "create_workflow", "list_workflows", "run_workflow")
	// The tools of the caller's own flow instances, on every MCP URL.
	wantTools = append(wantTools, "cancel_flow", "list_flows", "replay_flow_pending_elicitation", "submit_flow_elicitation")
	slices.Sort(wantTools)
	if diff := cmp.Diff(wantTools, s.ToolsA); diff != "" {
		t.Errorf("tenant default's tools (-want +got):\n%s", diff)
	}
	// Under the default portable schema profile every property is listed as required,
	// the optional ones (assignees, body, labels, milestone) nullable (providers'
	// TestPortableInputTakesTheVendorsSubset pins the nullable forms).
	if diff := cmp.Diff([]string{"assignees", "body", "labels", "milestone", "owner", "repo", "title"}, s.CreateIssueRequired); diff != "" {
		t.Errorf("github_create_issue required arguments (-want +got):\n%s", diff)
	}
	wantIssue := callSummary{StructuredContent: map[string]any{
		"number": float64(githubIssueNum), "title": "Crash when the config file is empty", "state": "open",
		"is_pull_request": false, "body": "Steps: start with an empty switchboard.yaml.", "user": githubLogin,
		"labels": []any{}, "assignees": []any{}, "comments": float64(0), "locked": false,
		"html_url":   fmt.Sprintf("https://github.com/%s/%s/issues/%d", githubOwner, githubRepo, githubIssueNum),
		"created_at": githubCreatedAt, "updated_at": githubCreatedAt,
	}}
	if diff := cmp.Diff(wantIssue, s.GitHubCreateIssue); diff != "" {
		t.Errorf("github_create_issue result (-want +got):\n%s", diff)
	}
	wantPost := callSummary{StructuredContent: map[string]any{"channel": slackChannel, "ts": slackTS, "text": "Deploy finished :rocket:"}}
	if diff := cmp.Diff(wantPost, s.SlackPostMessage); diff != "" {
		t.Errorf("slack_post_message result (-want +got):\n%s", diff)
	}
	for _, e := range []struct {
		name  string
		got   toolErrorSummary
		field string
	}{
		{name: "github_create_issue with title 42", got: s.BadArgument, field: "title"},
		{name: "slack_post_message without text", got: s.MissingArgument, field: "text"},
	} {
		if !e.got.IsError || !strings.Contains(e.got.Text, e.field) {
			t.Errorf("%s: isError %v, text %q; want a tool error naming %q", e.name, e.got.IsError, e.got.Text, e.field)
		}
	}
	for _, r := range []struct {
		name string
		got  refusedConnect
	}{{"beta's key on default's URL", s.BKeyOnAURL}, {"default's key on beta's URL", s.AKeyOnBURL}} {
		if r.got.Connected || r.got.Code == nil || *r.got.Code != http.StatusForbidden {
			t.Errorf("%s: %+v; want the connection refused with HTTP 403", r.name, r.got)
		}
	}
	// Beta sees its GitHub account's tools and none of default's Slack.
	var wantToolsB []string
	for _, name := range wantTools {
		if strings.HasPrefix(name, "github_") || strings.HasPrefix(name, "switchboard_") || strings.HasSuffix(name, "_workflow") || name == "list_workflows" || name == "cancel_flow" || name == "list_flows" || strings.HasSuffix(name, "_flow_elicitation") || strings.HasSuffix(name, "_pending_elicitation") {
			wantToolsB = append(wantToolsB, name)
		}
	}
	if diff := cmp.Diff(wantToolsB, s.ToolsB); diff != "" {
		t.Errorf("tenant beta's tools (-want +got):\n%s", diff)
	}
	sc := s.TenantBCreateIssue.StructuredContent
	if s.TenantBCreateIssue.IsError || sc["user"] != githubBetaLogin || sc["title"] != "Filed from tenant beta" || sc["number"] != float64(githubIssueNum) {
		t.Errorf("tenant beta's github_create_issue: %+v; want the issue opened as %s", s.TenantBCreateIssue, githubBetaLogin)
	}
	if f := s.TenantBForeignConnection; !f.Refused || !strings.Contains(f.Message, "connection") {
		t.Errorf("tenant beta's github_create_issue with connection %q: %+v; want a refusal naming the connection argument", githubLogin, f)
	}
}

// normalize makes recorded requests comparable: JSON bodies re-encoded with sorted keys.
func normalize(reqs []received) []received {
	out := slices.Clone(reqs)
	for i, r := range out {
		if !strings.HasPrefix(r.ContentType, "application/json") {
			continue
		}
		var v any
		if json.Unmarshal([]byte(r.Body), &v) == nil {
			b, _ := json.Marshal(v)
			out[i].Body = string(b)
		}
	}
	return out
}

// readDataDir returns the bytes of every file under the server's data directory (the
// SQLite database, its WAL and the key file).
func readDataDir(t *testing.T, dir string) []byte {
	t.Helper()
	var all []byte
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		all = append(all, b...)
		return nil
	})
	if err != nil {
		t.Fatalf("read data directory %s: %v", dir, err)
	}
	return all
}

// dumpPostgres returns every row of every table of the database's public schema as
// text, for the plain-text secret check.
func dumpPostgres(t *testing.T, db *gorm.DB) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var tables []string
	if err := db.WithContext(ctx).Raw(`SELECT quote_ident(table_name) FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`).Scan(&tables).Error; err != nil {
		t.Fatalf("list tables: %v", err)
	}
	if !slices.Contains(tables, "connections") || !slices.Contains(tables, "api_keys") {
		t.Errorf("the database has tables %v; want connections and api_keys among them", tables)
	}
	var all bytes.Buffer
	for _, table := range tables {
		var rows []string
		if err := db.WithContext(ctx).Raw("SELECT t::text FROM " + table + " t").Scan(&rows).Error; err != nil {
			t.Fatalf("read table %s: %v", table, err)
		}
		for _, r := range rows {
			all.WriteString(r)
			all.WriteByte('\n')
		}
	}
	return all.Bytes()
}
