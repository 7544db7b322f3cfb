package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestSurfaceMatrix runs every kind of tool (curated, OpenAPI, remote MCP, workflow,
// the hub's own) through every surface (the MCP tenant and agent URLs in each protocol
// version, REST calls and runs, switchboard_run_async, MCP tasks, a workflow step, Try
// it, the audit log) as every kind of principal (owner, admin, member, agent key,
// OAuth grant), on one `switchboard serve`. Each subtest is one cell, named as a
// sentence: "agent key / workflow tool / MCP agent URL 2025-06-18: listed". A cell
// asserts what a person using the hub observes: the tool listed or not, the call
// answered (and what the upstream received) or refused (and the upstream received
// nothing), a confirmation asked, the call audited with its tool, principal and
// outcome.
func TestSurfaceMatrix(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	r := newMatrixRig(t, bin)
	n := 0
	nonce := func() string { n++; return fmt.Sprintf("matrix-%d", n) }
	for _, p := range []string{owner, admin, member, otherMember, agentKey, oauthGrant} {
		for _, k := range append(append([]toolKind{}, matrixKinds...), privateKind, outsideKind) {
			if k.name == outsideKind.name && p != agentKey {
				continue
			}
			for _, s := range matrixSurfaces() {
				if s.for_(p) {
					r.cell(t, p, k, s, mayUse(p, k), nonce())
				}
			}
		}
	}
	r.confirmationCells(t, nonce)
	r.workflowCells(t)
	r.remoteCells(t)
	r.redirectCells(t)
	r.listCells(t)
	r.browserCells(t)
	r.auditCells(t)
}

// mayUse says whether the principal may use the kind's tool: every principal the
// tenant's shared tools, only the member their private connection, and the agent only
// what it selected.
func mayUse(p string, k toolKind) bool {
	switch k.name {
	case privateKind.name:
		return p == member
	case outsideKind.name:
		return false
	}
	return true
}

// cell calls the kind's tool through the surface as the principal and checks what it
// observes.
func (r *matrixRig) cell(t *testing.T, p string, k toolKind, s surfaceKind, may bool, nonce string) {
	name := p + " / " + k.name + " / " + s.name
	m := r.mark()
	o := s.call(r, p, k, nonce)
	if o.listed != nil {
		if may {
			checkCell(t, name+": listed", func(fail func(string, ...any)) {
				if !*o.listed {
					fail("tools/list does not offer %s", k.tool)
				}
			})
		} else {
			checkCell(t, name+": not listed", func(fail func(string, ...any)) {
				if *o.listed {
					fail("tools/list offers %s", k.tool)
				}
			})
		}
	}
	if !may {
		checkCell(t, name+": refused", func(fail func(string, ...any)) {
			if o.answered {
				fail("answered: %s", short(o.text))
			}
			if ok, _ := k.reached(r, m, nonce); ok {
				fail("the upstream received the call (answer: %s)", short(o.text))
			}
		})
		return
	}
	checkCell(t, name+": answered", func(fail func(string, ...any)) {
		if !o.answered {
			fail("not answered: %s", short(o.text))
			return
		}
		if want := k.answer(nonce); !strings.Contains(o.text, want) {
			fail("the answer lacks %q: %s", want, short(o.text))
		}
		if ok, msg := k.reached(r, m, nonce); !ok {
			fail("%s", msg)
		}
	})
	if !o.answered {
		return
	}
	// The audit log keeps times to the millisecond: the window starts at the call's
	// millisecond, and the next call starts in a later one, so its row never falls in
	// this call's window.
	r.pendingAudits = append(r.pendingAudits, pendingAudit{name: name + ": audited", principal: p, tool: k.tool, since: m.at.Truncate(time.Millisecond), until: time.Now()})
	time.Sleep(2 * time.Millisecond)
}

// short cuts a long answer for a failure message.
func short(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}

// confirmationCells: the agent "careful" confirms every call with a person. A client
// without elicitation gets the call held with a link to its approval page (which
// opens for the person), and the upstream receives nothing; a client with
// elicitation is asked, and the call runs once it accepts.
func (r *matrixRig) confirmationCells(t *testing.T, nonce func() string) {
	for _, k := range matrixKinds {
		if strings.HasPrefix(k.name, "hub ") {
			continue
		}
		for _, v := range []string{"2025-06-18", tasksVersion} {
			name := confirmKey + " / " + k.name + " / MCP agent URL " + v
			n := nonce()
			m := r.mark()
			o := mcpCall(v, true)(r, confirmKey, k, n)
			t.Run(name+": confirmation asked", func(t *testing.T) {
				if !o.confirm {
					t.Errorf("no confirmation asked: %s", short(o.text))
				}
				if ok, _ := k.reached(r, m, n); ok && k.name != "remote MCP tool" {
					t.Errorf("the upstream received the call before anyone confirmed it")
				}
				if strings.Contains(o.text, "found: ") {
					t.Errorf("the remote server answered before anyone confirmed it: %s", o.text)
				}
			})
			t.Run(name+": approval page opens", func(t *testing.T) {
				i := strings.Index(o.text, "/approvals/")
				if i < 0 {
					t.Fatalf("the answer links no approval page: %s", short(o.text))
				}
				id := strings.FieldsFunc(o.text[i+len("/approvals/"):], func(c rune) bool {
					return !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
				})
				if len(id) == 0 {
					t.Fatalf("no run id after /approvals/ in %s", o.text)
				}
				res, err := r.person.Client.Get(r.srv.BaseURL + "/approvals/" + id[0])
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					t.Errorf("GET /approvals/%s as the owner: %d, want 200", id[0], res.StatusCode)
				}
			})
			n = nonce()
			m = r.mark()
			name = askKey + " / " + k.name + " / MCP agent URL " + v
			s, err := r.session(askKey, r.askingURL, v, true)
			if err != nil {
				t.Errorf("%s with elicitation: connect: %v", name, err)
				continue
			}
			before := s.elicited.Load()
			ctx, cancel := callCtx(r)
			args, _, err := s.argsFor(ctx, k, n)
			var text string
			var isErr bool
			if err == nil {
				text, isErr, err = s.call(ctx, k.tool, args)
			}
			cancel()
			t.Run(name+" with elicitation: confirmation asked", func(t *testing.T) {
				if s.elicited.Load() == before {
					t.Errorf("no elicitation/create reached the client (answer %v %s)", err, short(text))
				}
			})
			t.Run(name+" with elicitation: answered once accepted", func(t *testing.T) {
				if err != nil || isErr || !strings.Contains(text, k.answer(n)) {
					t.Errorf("answer: error %v, isError %v: %s", err, isErr, short(text))
				}
				if ok, msg := k.reached(r, m, n); !ok {
					t.Error(msg)
				}
			})
		}
	}
}

// workflowCells: a workflow tool behaves as a tool: a failed workflow answers
// isError, progress reports its steps, an agent's key neither saves nor runs a
// workflow with steps outside its agent's tools, and an agent saved with a remote
// server's tool keeps it.
func (r *matrixRig) workflowCells(t *testing.T) {
	for _, v := range []string{"2025-06-18", "2026-07-28"} {
		s, err := r.session(owner, r.srv.MCPURL, v, false)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		ctx, cancel := callCtx(r)
		text, isErr, err := s.call(ctx, "run_flow__matrix_fails", map[string]any{})
		cancel()
		t.Run("owner / failing workflow tool / MCP tenant URL "+v+": isError", func(t *testing.T) {
			if err != nil || !isErr {
				t.Errorf("isError %v (%v): %s", isErr, err, text)
			}
			if !strings.Contains(text, "failed") {
				t.Errorf("the answer does not say the workflow failed: %s", text)
			}
		})
	}
	s, err := r.session(owner, r.srv.MCPURL, "2025-06-18", false)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	before := s.progress.Load()
	ctx, cancel := callCtx(r)
	text, isErr, err := s.call(ctx, "run_flow__matrix_me", map[string]any{})
	cancel()
	t.Run("owner / workflow tool / MCP tenant URL 2025-06-18: progress notified", func(t *testing.T) {
		if err != nil || isErr {
			t.Fatalf("the call: %v %s", err, text)
		}
		if s.progress.Load() == before {
			t.Error("no notifications/progress during the workflow's run")
		}
	})

	m := r.mark()
	// Steps the agent's creator may run but the agent did not select.
	escape := "steps:\n  - {name: issue, tool: github_create_issue, connection: " + r.shared + ", args: {owner: " + githubOwner + ", repo: " + githubRepo + ", title: escaped}}\n" +
		"  - {name: repo, tool: github_get_repository, connection: " + r.shared + ", args: {owner: " + githubOwner + ", repo: " + githubRepo + "}}\n"
	status, body := r.saveWorkflow(agentKey, "matrix_escape", escape)
	t.Run("agent key / workflow with steps outside its agent / POST /api/workflows: refused", func(t *testing.T) {
		if status == http.StatusCreated || status == http.StatusOK {
			t.Errorf("saved: %d %s", status, body)
		}
		if status, body := r.api(agentKey).Do(t, http.MethodPost, "/api/workflows/matrix_escape/runs", map[string]any{"parameters": map[string]any{}}); status == http.StatusAccepted {
			var run struct {
				ID string `json:"run_id"`
			}
			_ = json.Unmarshal(body, &run)
			r.settled(agentKey, run.ID)
		}
		for _, q := range r.github.All()[m.github:] {
			if q.Method == http.MethodPost || q.Path == "/repos/"+githubOwner+"/"+githubRepo {
				t.Errorf("GitHub received %s %s (%s)", q.Method, q.Path, q.Authorization)
			}
		}
	})
	m = r.mark()
	status, body = r.api(agentKey).Do(t, http.MethodPost, "/api/workflows/"+outsideKind.step+"/runs", map[string]any{"parameters": map[string]any{}})
	t.Run("agent key / selected workflow with a step outside its agent / POST /api/workflows/{name}/runs: refused", func(t *testing.T) {
		if status == http.StatusAccepted {
			var run struct {
				ID string `json:"run_id"`
			}
			_ = json.Unmarshal(body, &run)
			if o := r.settled(agentKey, run.ID); o.answered {
				t.Errorf("the run completed: %s", o.text)
			}
		}
		for _, q := range r.github.All()[m.github:] {
			if q.Method == http.MethodPost || q.Authorization == "Bearer "+githubBetaToken || q.Path == "/repos/"+githubOwner+"/"+githubRepo {
				t.Errorf("GitHub received %s %s (%s)", q.Method, q.Path, q.Authorization)
			}
		}
	})

	var agent struct {
		Tools []struct {
			Tool string `json:"tool"`
		} `json:"tools"`
	}
	r.must(owner, http.MethodGet, "/api/agents/"+r.agentID, nil, http.StatusOK, &agent)
	t.Run("owner / remote MCP tool / agent saved through POST /api/agents: kept", func(t *testing.T) {
		if !slices.ContainsFunc(agent.Tools, func(x struct {
			Tool string `json:"tool"`
		}) bool {
			return x.Tool == "docs_search"
		}) {
			t.Errorf("the agent's tools %+v lack docs_search", agent.Tools)
		}
	})
}

// remoteCells: a remote server's prompts and resources are the tenant's, namespaced
// beside its tools, and a resource_link it answers is readable through the hub.
func (r *matrixRig) remoteCells(t *testing.T) {
	for _, v := range []string{"2025-06-18", "2026-07-28"} {
		s, err := r.session(owner, r.srv.MCPURL, v, false)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		ctx, cancel := callCtx(r)
		prompts, perr := s.c.ListPrompts(ctx, mcp.ListPromptsRequest{})
		t.Run("owner / remote MCP prompt / MCP tenant URL "+v+": listed", func(t *testing.T) {
			if perr != nil {
				t.Fatalf("prompts/list: %v", perr)
			}
			if !slices.ContainsFunc(prompts.Prompts, func(p mcp.Prompt) bool { return strings.Contains(p.Name, docsBrief) }) {
				t.Errorf("prompts/list %+v lacks the docs server's %s", prompts.Prompts, docsBrief)
			}
		})
		resources, rerr := s.c.ListResources(ctx, mcp.ListResourcesRequest{})
		t.Run("owner / remote MCP resource / MCP tenant URL "+v+": listed", func(t *testing.T) {
			if rerr != nil {
				t.Fatalf("resources/list: %v", rerr)
			}
			if !slices.ContainsFunc(resources.Resources, func(x mcp.Resource) bool { return strings.Contains(x.URI, "readme") }) {
				t.Errorf("resources/list %+v lacks the docs server's README", resources.Resources)
			}
		})
		text, isErr, err := s.call(ctx, "docs_readme", map[string]any{})
		t.Run("owner / remote MCP resource_link / MCP tenant URL "+v+": readable", func(t *testing.T) {
			if err != nil || isErr {
				t.Fatalf("docs_readme: %v %s", err, text)
			}
			_, uri, ok := strings.Cut(text, "resource_link ")
			if !ok {
				t.Fatalf("no resource_link in %s", text)
			}
			uri, _, _ = strings.Cut(uri, "\n")
			req := mcp.ReadResourceRequest{}
			req.Params.URI = uri
			res, err := s.c.ReadResource(ctx, req)
			if err != nil {
				t.Fatalf("resources/read %s: %v", uri, err)
			}
			b, _ := json.Marshal(res.Contents)
			if !strings.Contains(string(b), "the docs' readme") {
				t.Errorf("resources/read %s: %s", uri, b)
			}
		})
		cancel()
	}
}

// redirectCells: an upstream's redirect to another origin receives no credential of
// the connection, for a curated provider and an imported API alike, and a redirect to
// a private address outside the allowed ranges is not followed.
func (r *matrixRig) redirectCells(t *testing.T) {
	call := func(tool, conn string, args map[string]any) string {
		status, body := r.api(owner).Do(t, http.MethodPost, "/api/tools/"+tool+"/call", map[string]any{"connection_id": conn, "arguments": args})
		return fmt.Sprintf("%d %s", status, short(string(body)))
	}
	answer := call("github_get_repository", r.shared, map[string]any{"owner": githubOwner, "repo": "moved"})
	t.Run("owner / curated tool / upstream redirect to another origin: no credential sent", func(t *testing.T) {
		if !slices.Contains(r.front.redirects(), githubMovedRepo) {
			t.Fatalf("GitHub was not asked for %s (answer %s)", githubMovedRepo, answer)
		}
		for _, c := range r.front.elsewhere.received() {
			if c != "" {
				t.Errorf("the other origin received %q", c)
			}
		}
	})
	answer = call("github_get_repository", r.shared, map[string]any{"owner": githubOwner, "repo": "internal"})
	t.Run("owner / curated tool / upstream redirect to a private address: not followed", func(t *testing.T) {
		if !slices.Contains(r.front.redirects(), githubInternalRepo) {
			t.Fatalf("GitHub was not asked for %s (answer %s)", githubInternalRepo, answer)
		}
		if got := r.front.internal.received(); len(got) > 0 {
			t.Errorf("127.0.0.2, outside the allowed 127.0.0.1/32, received %d requests (credentials %q); answer %s", len(got), got, answer)
		}
	})
	answer = call("notes_list_notes", r.notesConn, map[string]any{"q": notesRedirectQuery})
	t.Run("owner / OpenAPI tool / upstream redirect to another origin: no credential sent", func(t *testing.T) {
		r.notes.mu.Lock()
		redirected := r.notes.redirected
		r.notes.mu.Unlock()
		if redirected == 0 {
			t.Fatalf("the notes API was not asked for the moved notes (answer %s)", answer)
		}
		for _, c := range r.notes.elsewhere.received() {
			if c != "" {
				t.Errorf("the other origin received %q", c)
			}
		}
	})
}

// listCells: every kind of tool but a flow's is listed with the lean output schema (its type and
// required fields; the full one is the REST catalog's).
func (r *matrixRig) listCells(t *testing.T) {
	s, err := r.session(owner, r.srv.MCPURL, "2025-06-18", false)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	ctx, cancel := callCtx(r)
	defer cancel()
	tools, err := s.listed(ctx)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	for _, k := range matrixKinds {
		t.Run("owner / "+k.name+" / MCP tenant URL 2025-06-18: lean output schema", func(t *testing.T) {
			tool, ok := tools[k.tool]
			if !ok {
				t.Fatalf("%s is not listed", k.tool)
			}
			if tool.OutputSchema.Type == "" {
				return // no output schema: nothing to trim
			}
			if strings.HasPrefix(k.tool, "run_flow__") {
				// A flow's tools list their output schema whole, as the flow specification
				// shows them: output and status.
				if _, ok := tool.OutputSchema.Properties["status"]; !ok {
					t.Errorf("%s's listed output schema has no status: %+v", k.tool, tool.OutputSchema)
				}
				return
			}
			if len(tool.OutputSchema.Properties) > 0 || len(tool.OutputSchema.Defs) > 0 {
				b, _ := json.Marshal(tool.OutputSchema)
				t.Errorf("the listed output schema carries its fields (%d bytes): %.300s", len(b), b)
			}
		})
	}
}
