package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// toolKind is one kind of tool the matrix runs through every surface: the tool, its
// connection, and what its upstream receives when it runs.
type toolKind struct {
	name string // as a cell's name says it: "curated tool"
	tool string
	// conn is the connection a REST call names ("" for tools without one).
	conn func(r *matrixRig) string
	// mcpArgs are the arguments at an MCP URL (where the connection is chosen by its
	// label when there are several); args the arguments elsewhere.
	args    func(nonce string) map[string]any
	mcpArgs func(nonce string) map[string]any
	// answer is what an answer of the call holds.
	answer func(nonce string) string
	// reached says whether the upstream received the call since the mark, and what.
	reached func(r *matrixRig, m mark, nonce string) (bool, string)
	// ambient marks a tool every caller has (the run tools): an agent has it without
	// picking it, so the builder does not offer it.
	ambient bool
	// step is the saved workflow whose one step calls the tool.
	step string
}

// mark is where the fakes' request logs stood before a cell.
type mark struct {
	github, notes int
	at            time.Time
}

func (r *matrixRig) mark() mark {
	return mark{github: len(r.github.All()), notes: r.notes.count(), at: time.Now().Truncate(time.Millisecond)}
}

// githubReached is whether GitHub received method path with the token since m.
func githubReached(method, path, token string) func(r *matrixRig, m mark, nonce string) (bool, string) {
	return func(r *matrixRig, m mark, _ string) (bool, string) {
		got := r.github.All()[m.github:]
		var seen []string
		for _, q := range got {
			seen = append(seen, q.Method+" "+q.Path+" ("+q.Authorization+")")
			if q.Method == method && q.Path == path && q.Authorization == "Bearer "+token {
				return true, ""
			}
		}
		return false, fmt.Sprintf("GitHub received %v, want %s %s with the connection's token", seen, method, path)
	}
}

func noArgs(string) map[string]any { return map[string]any{} }

// matrixKinds are the kinds of tool the tenant has.
var matrixKinds = []toolKind{
	{
		name: "curated tool", tool: "github_get_me", step: "step_curated",
		conn:    func(r *matrixRig) string { return r.shared },
		args:    noArgs,
		mcpArgs: func(string) map[string]any { return map[string]any{"connection": githubLogin} },
		answer:  func(string) string { return githubLogin },
		reached: githubReached(http.MethodGet, "/user", githubToken),
	},
	{
		name: "OpenAPI tool", tool: "notes_list_notes", step: "step_openapi",
		conn:   func(r *matrixRig) string { return r.notesConn },
		args:   func(n string) map[string]any { return map[string]any{"q": n} },
		answer: func(n string) string { return "note about " + n },
		reached: func(r *matrixRig, m mark, n string) (bool, string) {
			got := r.notes.requests(m.notes)
			for _, q := range got {
				if q.Path == "/notes" && q.Query == "q="+url.QueryEscape(n) && q.Authorization == notesKey {
					return true, ""
				}
			}
			return false, fmt.Sprintf("the notes API received %+v, want GET /notes?q=%s with its key", got, n)
		},
	},
	{
		name: "remote MCP tool", tool: "docs_search", step: "step_remote",
		conn:   func(r *matrixRig) string { return r.docsConn },
		args:   func(n string) map[string]any { return map[string]any{"query": n} },
		answer: func(n string) string { return "found: " + n },
		// The remote server answers with the query it received.
		reached: func(*matrixRig, mark, string) (bool, string) { return true, "" },
	},
	{
		name: "workflow tool", tool: "run_flow__matrix_me", step: "step_workflow",
		conn:    func(*matrixRig) string { return "" },
		args:    noArgs,
		answer:  func(string) string { return githubLogin },
		reached: githubReached(http.MethodGet, "/user", githubToken),
	},
	{
		name: "hub tool", tool: "switchboard_list_runs", step: "step_hub", ambient: true,
		conn:    func(*matrixRig) string { return "" },
		args:    noArgs,
		answer:  func(string) string { return "runs" },
		reached: func(*matrixRig, mark, string) (bool, string) { return true, "" },
	},
	{
		name: "hub workflows tool", tool: "list_workflows", step: "step_hub_workflows",
		conn:    func(*matrixRig) string { return "" },
		args:    noArgs,
		answer:  func(string) string { return "matrix_me" },
		reached: func(*matrixRig, mark, string) (bool, string) { return true, "" },
	},
}

// privateKind is the member's private GitHub connection: only the member may use it.
var privateKind = toolKind{
	name: "another member's private connection", tool: "github_get_me", step: "step_private",
	conn:    func(r *matrixRig) string { return r.private },
	args:    noArgs,
	mcpArgs: func(string) map[string]any { return map[string]any{"connection": privateLogin} },
	answer:  func(string) string { return privateLogin },
	reached: githubReached(http.MethodGet, "/user", githubBetaToken),
}

// outsideKind is a tool on the shared connection that the agent did not select.
var outsideKind = toolKind{
	name: "curated tool outside its agent", tool: "github_get_repository", step: "step_outside",
	conn:    func(r *matrixRig) string { return r.shared },
	args:    func(string) map[string]any { return map[string]any{"owner": githubOwner, "repo": githubRepo} },
	answer:  func(string) string { return githubRepo },
	reached: githubReached(http.MethodGet, "/repos/"+githubOwner+"/"+githubRepo, githubToken),
}

func (k toolKind) argsAt(mcp bool, nonce string) map[string]any {
	if mcp && k.mcpArgs != nil {
		return k.mcpArgs(nonce)
	}
	return k.args(nonce)
}

// outcome is what a surface did with a call.
type outcome struct {
	// listed is whether the surface offered the tool (nil where it lists nothing).
	listed *bool
	// answered: the call ran and answered without error.
	answered bool
	text     string // the answer, or the refusal
	// confirm: the surface asked for a confirmation instead of running the call.
	confirm bool
}

func listedAs(b bool) *bool { return &b }

// surfaceKind is one way to call a tool.
type surfaceKind struct {
	name string
	// for says which principals the surface is theirs (an agent's key has its agent's
	// URL, a person the tenant's).
	for_ func(principal string) bool
	call func(r *matrixRig, principal string, k toolKind, nonce string) outcome
}

func people(p string) bool    { return p != agentKey && p != confirmKey }
func restUsers(p string) bool { return p != oauthGrant && p != confirmKey }
func everyone(p string) bool  { return p != confirmKey }

// matrixSurfaces are the surfaces every tool is called through.
func matrixSurfaces() []surfaceKind {
	var out []surfaceKind
	for _, v := range protocolVersions {
		out = append(out,
			surfaceKind{name: "MCP tenant URL " + v, for_: people, call: mcpCall(v, false)},
			surfaceKind{name: "MCP agent URL " + v, for_: func(p string) bool { return p == agentKey }, call: mcpCall(v, true)})
	}
	return append(out,
		surfaceKind{name: "REST /api/tools/{tool}/call", for_: restUsers, call: restCall},
		surfaceKind{name: "POST /api/runs", for_: restUsers, call: restRun},
		surfaceKind{name: "switchboard_run_async", for_: everyone, call: runAsync},
		surfaceKind{name: "MCP tasks", for_: everyone, call: mcpTask},
		surfaceKind{name: "workflow step", for_: restUsers, call: workflowStep},
	)
}

// urlOf is the MCP URL of the principal: its agent's, or the tenant's.
func (r *matrixRig) urlOf(principal string) string {
	switch principal {
	case agentKey:
		return r.agentURL
	case confirmKey:
		return r.carefulURL
	case askKey:
		return r.askingURL
	}
	return r.srv.MCPURL
}

// callCtx bounds one cell's call.
func callCtx(r *matrixRig) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.t.Context(), 60*time.Second)
}

func mcpCall(version string, agentURL bool) func(r *matrixRig, principal string, k toolKind, nonce string) outcome {
	return func(r *matrixRig, principal string, k toolKind, nonce string) outcome {
		ctx, cancel := callCtx(r)
		defer cancel()
		s, err := r.session(principal, r.urlOf(principal), version, false)
		if err != nil {
			return outcome{text: "connect: " + err.Error()}
		}
		if s.version != version {
			return outcome{text: "the session speaks " + s.version + ", not " + version}
		}
		args, listed, err := s.argsFor(ctx, k, nonce)
		if err != nil {
			return outcome{text: "tools/list: " + err.Error()}
		}
		o := outcome{listed: listedAs(listed)}
		text, isErr, err := s.call(ctx, k.tool, args)
		switch {
		case err != nil:
			o.text = err.Error()
		case isErr:
			o.text = text
			o.confirm = asksConfirmation(text)
		default:
			// A workflow held for its confirmation answers with its status (a flow
			// tool's status.state, run_workflow's status).
			o.answered, o.text = true, text
			o.confirm = strings.Contains(text, `"status":"input_required"`) || strings.Contains(text, `"state":"input_required"`)
		}
		return o
	}
}

// argsFor lists the session's tools and returns the arguments of the kind's call there
// and whether the tool is offered. A tool on several connections takes the
// connection's label, and is offered on the connection when its label is; on one
// connection it takes none, and that is the tenant's shared one.
func (s *matrixSession) argsFor(ctx context.Context, k toolKind, nonce string) (map[string]any, bool, error) {
	tools, err := s.listed(ctx)
	if err != nil {
		return nil, false, err
	}
	tool, ok := tools[k.tool]
	args := k.argsAt(true, nonce)
	if label, named := args["connection"]; ok && named {
		b, _ := json.Marshal(tool.InputSchema.Properties["connection"])
		switch {
		case strings.Contains(string(b), fmt.Sprintf("%q", label)):
		case tool.InputSchema.Properties["connection"] == nil && label == githubLogin:
			delete(args, "connection")
		default:
			ok = false
		}
	}
	return args, ok, nil
}

// asksConfirmation is whether an answer asks a person to confirm the call.
func asksConfirmation(text string) bool {
	return strings.Contains(text, "input_required") || strings.Contains(text, "/approvals/") || strings.Contains(strings.ToLower(text), "confirm")
}

func restCall(r *matrixRig, principal string, k toolKind, nonce string) outcome {
	status, body := r.api(principal).Do(r.t, http.MethodPost, "/api/tools/"+k.tool+"/call", map[string]any{"connection_id": k.conn(r), "arguments": k.args(nonce)})
	return outcome{answered: status == http.StatusOK, text: fmt.Sprintf("%d %s", status, body)}
}

func restRun(r *matrixRig, principal string, k toolKind, nonce string) outcome {
	status, body := r.api(principal).Do(r.t, http.MethodPost, "/api/runs", map[string]any{"tool": k.tool, "connection_id": k.conn(r), "arguments": k.args(nonce)})
	if status != http.StatusAccepted {
		return outcome{text: fmt.Sprintf("%d %s", status, body)}
	}
	var run struct {
		ID string `json:"run_id"`
	}
	mustJSON(r.t, body, &run)
	return r.settled(principal, run.ID)
}

// settled waits for the run's end and says how it ended.
func (r *matrixRig) settled(principal, id string) outcome {
	if principal == oauthGrant || principal == confirmKey || principal == askKey {
		principal = owner // a grant has no REST API: the owner follows the run
	}
	deadline := time.Now().Add(time.Minute)
	for {
		status, body := r.api(principal).Do(r.t, http.MethodGet, "/api/runs/"+id, nil)
		var v struct {
			State string `json:"state"`
		}
		if status != http.StatusOK || json.Unmarshal(body, &v) != nil {
			return outcome{text: fmt.Sprintf("GET /api/runs/%s: %d %s", id, status, body)}
		}
		switch v.State {
		case "working":
		case "completed":
			return outcome{answered: true, text: string(body)}
		case "input_required":
			return outcome{confirm: true, text: string(body)}
		default:
			return outcome{text: string(body)}
		}
		if time.Now().After(deadline) {
			return outcome{text: "the run is still working after a minute: " + string(body)}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runIDPattern finds the run id in switchboard_run_async's answer.
var runIDPattern = regexp.MustCompile(`"run_id":\s*"([^"]+)"`)

func runAsync(r *matrixRig, principal string, k toolKind, nonce string) outcome {
	ctx, cancel := callCtx(r)
	defer cancel()
	s, err := r.session(principal, r.urlOf(principal), "2025-06-18", false)
	if err != nil {
		return outcome{text: "connect: " + err.Error()}
	}
	args, _, err := s.argsFor(ctx, k, nonce)
	if err != nil {
		return outcome{text: "tools/list: " + err.Error()}
	}
	text, isErr, err := s.call(ctx, "switchboard_run_async", map[string]any{"tool": k.tool, "arguments": args})
	if err != nil || isErr {
		return outcome{text: fmt.Sprint(text, err), confirm: asksConfirmation(text)}
	}
	id := runIDPattern.FindStringSubmatch(text)
	if id == nil {
		return outcome{text: "no run_id in the answer: " + text}
	}
	return r.settled(principal, id[1])
}

func mcpTask(r *matrixRig, principal string, k toolKind, nonce string) outcome {
	ctx, cancel := callCtx(r)
	defer cancel()
	s, err := r.session(principal, r.urlOf(principal), tasksVersion, false)
	if err != nil {
		return outcome{text: "connect: " + err.Error()}
	}
	args, _, err := s.argsFor(ctx, k, nonce)
	if err != nil {
		return outcome{text: "tools/list: " + err.Error()}
	}
	id, answer, err := s.callAsTask(ctx, k.tool, args)
	if err != nil {
		return outcome{text: err.Error()}
	}
	if id == "" {
		declared := "no execution.taskSupport"
		if tools, err := s.listed(ctx); err == nil && tools[k.tool].Execution != nil {
			b, _ := json.Marshal(tools[k.tool].Execution)
			declared = "execution " + string(b)
		}
		return outcome{text: "tools/call with a task answered no task (the tool lists " + declared + "): " + string(answer)}
	}
	text, isErr, err := s.taskResult(ctx, id)
	if err != nil || isErr {
		return outcome{text: fmt.Sprint(text, err), confirm: asksConfirmation(text)}
	}
	return outcome{answered: true, text: text}
}

func workflowStep(r *matrixRig, principal string, k toolKind, nonce string) outcome {
	if msg := r.stepSaved[k.step]; msg != "" {
		return outcome{text: "workflow " + k.step + " could not be saved: " + msg}
	}
	status, body := r.api(principal).Do(r.t, http.MethodPost, "/api/workflows/"+k.step+"/runs", map[string]any{"parameters": map[string]any{"nonce": nonce}})
	if status != http.StatusAccepted {
		return outcome{text: fmt.Sprintf("%d %s", status, body)}
	}
	var run struct {
		ID string `json:"run_id"`
	}
	mustJSON(r.t, body, &run)
	return r.settled(principal, run.ID)
}

// saveSteps saves, as principal, a workflow per kind whose one step calls its tool with
// the run's nonce parameter; what refused one is kept for its cells.
func (r *matrixRig) saveSteps(principal string, kinds []toolKind) {
	for _, k := range kinds {
		step := "  - {name: call, tool: " + k.tool
		if c := k.conn(r); c != "" {
			step += ", connection: " + c
		}
		var args []string
		for name, v := range k.args("NONCE") {
			if v == "NONCE" {
				args = append(args, name+": \"${{ params.nonce }}\"")
			} else {
				args = append(args, fmt.Sprintf("%s: %q", name, v))
			}
		}
		if len(args) > 0 {
			step += ", args: {" + strings.Join(args, ", ") + "}"
		}
		def := "parameters: {type: object, properties: {nonce: {type: string}}}\nsteps:\n" + step + "}\n"
		if status, body := r.saveWorkflow(principal, k.step, def); status != http.StatusCreated && status != http.StatusOK {
			r.stepSaved[k.step] = fmt.Sprintf("%d %s", status, body)
		}
	}
}

// pendingAudit is a call whose audit row a cell checks once every call was made.
type pendingAudit struct {
	name, principal, tool string
	// The row is between since and until: when the call was made and when it ended.
	since, until time.Time
}

// auditEvent is an audit row as GET /api/audit answers it.
type auditEvent struct {
	At        time.Time `json:"at"`
	Principal string    `json:"principal"`
	Tool      string    `json:"tool"`
	Outcome   string    `json:"outcome"`
}

// auditEvents returns every tool call audited in the tenant.
func (r *matrixRig) auditEvents(t *testing.T) []auditEvent {
	var all []auditEvent
	cursor := ""
	for {
		var page struct {
			Events     []auditEvent `json:"events"`
			NextCursor string       `json:"next_cursor"`
		}
		r.must(owner, http.MethodGet, "/api/audit?kind=tool_call&limit=200&cursor="+url.QueryEscape(cursor), nil, http.StatusOK, &page)
		all = append(all, page.Events...)
		if page.NextCursor == "" || len(page.Events) == 0 {
			return all
		}
		cursor = page.NextCursor
	}
}

// auditCells: each answered call left an audit row with its tool, its principal and
// the outcome ok. The rows are read once every call was made (the writer batches
// them); a call whose row is missing is looked for again after a while.
func (r *matrixRig) auditCells(t *testing.T) {
	find := func(events []auditEvent, a pendingAudit) (bool, []string) {
		var seen []string
		for _, e := range events {
			if e.Tool != a.tool || e.At.Before(a.since) || e.At.After(a.until) {
				continue
			}
			if e.Principal == r.principalIDs[a.principal] && e.Outcome == "ok" {
				return true, nil
			}
			seen = append(seen, e.Principal+" "+e.Outcome)
		}
		return false, seen
	}
	events := r.auditEvents(t)
	for _, a := range r.pendingAudits {
		if ok, _ := find(events, a); !ok {
			time.Sleep(2 * time.Second) // the writer's batch may not have landed yet
			events = r.auditEvents(t)
			break
		}
	}
	for _, a := range r.pendingAudits {
		checkCell(t, a.name, func(fail func(string, ...any)) {
			if ok, seen := find(events, a); !ok {
				fail("no audit row of %s by %s (%s) with outcome ok; its rows since the call: %v", a.tool, a.principal, r.principalIDs[a.principal], seen)
			}
		})
	}
}
