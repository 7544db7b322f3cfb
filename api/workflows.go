package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/workflows"
)

// WorkflowService saves workflows and starts, follows and cancels their runs
// (workflows.Service). Every method answers about the caller's tenant only, and
// about the caller's own runs.
type WorkflowService interface {
	Create(ctx context.Context, p switchboard.Principal, def *workflows.Definition, source string, overwrite bool) (workflows.Workflow, bool, error)
	Get(ctx context.Context, p switchboard.Principal, name string) (workflows.Workflow, error)
	List(ctx context.Context, p switchboard.Principal, category string) ([]workflows.Workflow, error)
	Delete(ctx context.Context, p switchboard.Principal, name string) error
	DryRun(ctx context.Context, p switchboard.Principal, name string, params json.RawMessage) (workflows.Plan, error)
	DryRunDefinition(ctx context.Context, p switchboard.Principal, def *workflows.Definition, params json.RawMessage) (workflows.Plan, error)
	Start(ctx context.Context, p switchboard.Principal, name string, params json.RawMessage, o workflows.StartOptions) (runs.View, error)
	RunsOf(ctx context.Context, p switchboard.Principal, name, cursor string) ([]runs.View, string, error)
	Status(ctx context.Context, p switchboard.Principal, runID string) (workflows.RunStatus, error)
	LastRun(ctx context.Context, p switchboard.Principal, name string) (*runs.View, error)
	Cancel(ctx context.Context, p switchboard.Principal, runID string) (runs.View, error)
	SetWebhookSecret(ctx context.Context, p switchboard.Principal, name, provider, secret string) error
	Webhook(ctx context.Context, tenant switchboard.TenantID, name, provider string, h http.Header, read func() ([]byte, error), now time.Time) (workflows.HookAnswer, error)
	SetActive(ctx context.Context, p switchboard.Principal, name string, active bool) error
	ToolAliases(ctx context.Context, p switchboard.Principal) (bool, error)
	SetToolAliases(ctx context.Context, p switchboard.Principal, on bool) error
}

// WebhookPath starts the URLs providers deliver a workflow's webhook events to:
// /hooks/workflows/{tenant}/{workflow}/{github|slack}.
const WebhookPath = "/hooks/workflows/"

// setWebhookSecret stores the signing secret of a workflow's webhook trigger and
// answers the URL to give the provider.
func (s *server) setWebhookSecret(c *gin.Context) {
	p, ok := s.workflowEditor(c)
	if !ok {
		return
	}
	var req struct {
		Secret string `json:"secret"`
	}
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	name, provider := c.Param("name"), c.Param("provider")
	if err := s.Workflows.SetWebhookSecret(c.Request.Context(), p, name, provider, req.Secret); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"url": strings.TrimSuffix(s.PublicURL, "/") + WebhookPath + p.TenantSlug + "/" + name + "/" + provider})
}

// webhook takes a provider's delivery for a workflow: no API key, the signature is
// the authentication. The body is read only once the workflow's secret is found and
// the request carries a signature; it counts as a public body of at most MaxBodyBytes,
// in the budget's pool of webhooks, that must arrive within BodyTimeout.
func (s *server) webhook(c *gin.Context) {
	if s.Workflows == nil || s.Tenants == nil {
		notFoundRoute(c)
		return
	}
	ten, err := s.Tenants.TenantBySlug(c.Request.Context(), c.Param("tenant"))
	if err != nil {
		limits.CloseUnread(c.Writer, c.Request)
		s.fail(c, switchboard.NotFound("webhook"))
		return
	}
	var release func()
	read := false
	defer func() {
		if release != nil {
			release()
		}
	}()
	readBody := func() ([]byte, error) {
		read = true
		var err error
		if release, err = s.reservePublic(c, "webhooks", MaxBodyBytes); err != nil {
			return nil, err
		}
		body, err := io.ReadAll(c.Request.Body)
		if err != nil {
			return nil, switchboard.Invalid("body", "is too large or unreadable")
		}
		return body, nil
	}
	ans, err := s.Workflows.Webhook(c.Request.Context(), ten.ID, c.Param("name"), c.Param("provider"), c.Request.Header, readBody, time.Now())
	if err != nil {
		if !read {
			limits.CloseUnread(c.Writer, c.Request)
		}
		s.failBody(c, err)
		return
	}
	c.JSON(ans.Status, ans.Body)
}

// workflowView is a saved workflow as the API answers it.
type workflowView struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Category    string `json:"category,omitempty"`
	Tool        string `json:"tool"`
	Version     int64  `json:"version"`
	// State is active, or deactivated: it does not run until activated again.
	State      string          `json:"state"`
	Definition json.RawMessage `json:"definition,omitempty"`
	Source     string          `json:"source,omitempty"`
	CreatedBy  string          `json:"created_by"`
	UpdatedBy  string          `json:"updated_by"`
	CreatedAt  time.Time       `json:"created_at"`
	UpdatedAt  time.Time       `json:"updated_at"`
	// Triggers and LastRun are in lists only.
	Triggers []string   `json:"triggers,omitempty"`
	LastRun  *runs.View `json:"last_run,omitempty"`
}

// triggersOf says how a workflow starts by itself, one phrase a trigger: "schedule
// 0 9 * * 1", "github issues, push", "slack".
func triggersOf(w workflows.Workflow) []string {
	def, err := workflows.Parse([]byte(w.Definition))
	if err != nil {
		return nil
	}
	var out []string
	for _, t := range def.Triggers {
		switch {
		case t.Schedule != "":
			out = append(out, "schedule "+t.Schedule)
		case t.GitHub != nil:
			out = append(out, strings.TrimSpace("github "+strings.Join(t.GitHub.Events, ", ")))
		case t.Slack != nil:
			out = append(out, strings.TrimSpace("slack "+strings.Join(t.Slack.Events, ", ")))
		}
	}
	return out
}

func viewWorkflow(w workflows.Workflow, full bool) workflowView {
	v := workflowView{Name: w.Name, Description: w.Description, Category: w.Category, Tool: workflows.RunToolName(w.Name, 0),
		Version: w.Version, State: w.Lifecycle(), CreatedBy: w.CreatedBy, UpdatedBy: w.UpdatedBy, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
	if full {
		v.Definition, v.Source = json.RawMessage(w.Definition), w.Source
	}
	return v
}

// workflowRequest carries a definition (an object, or its YAML or JSON text), and for
// a dry run the parameters.
type workflowRequest struct {
	Definition json.RawMessage `json:"definition"`
	Overwrite  bool            `json:"overwrite"`
	Parameters json.RawMessage `json:"parameters"`
}

// definition reads the request's definition; source is the text as written.
func (r workflowRequest) definition() (*workflows.Definition, string, error) {
	if len(r.Definition) == 0 || string(r.Definition) == "null" {
		return nil, "", switchboard.Invalid("definition", "is required")
	}
	source := string(r.Definition)
	var text string
	if json.Unmarshal(r.Definition, &text) == nil {
		source = text
	}
	def, err := workflows.Parse([]byte(source))
	return def, source, err
}

// workflowService is the caller, for the routes any key may use: an agent's key follows
// and cancels its own runs there, as a person does.
func (s *server) workflowService(c *gin.Context) (switchboard.Principal, bool) {
	p, err := principal(c)
	return p, s.workflowsReady(c, err)
}

// workflowEditor is workflowService for what only a person does: save, replace and
// delete workflows, check and draw drafts, set webhook secrets. An agent's key never
// does, whatever its creator's role.
func (s *server) workflowEditor(c *gin.Context) (switchboard.Principal, bool) {
	p, err := asUserTo(c, "manage workflows")
	return p, s.workflowsReady(c, err)
}

// workflowNamed is workflowService for a route on the workflow the path names: an
// agent's key reads, checks and runs only a workflow its agent selected.
func (s *server) workflowNamed(c *gin.Context) (switchboard.Principal, bool) {
	p, err := principal(c)
	if err == nil && p.Kind != switchboard.PrincipalUser {
		err = s.agentSelectedWorkflow(c.Request.Context(), p, c.Param("name"))
	}
	return p, s.workflowsReady(c, err)
}

// workflowsReady fails the request with err, or when this server runs no workflows.
func (s *server) workflowsReady(c *gin.Context, err error) bool {
	if err == nil && s.Workflows == nil {
		err = switchboard.Errorf(switchboard.CodeUnavailable, "this server runs no workflows")
	}
	if err != nil {
		s.fail(c, err)
		return false
	}
	return true
}

// agentSelectedWorkflow refuses an agent's key a workflow its agent did not select.
func (s *server) agentSelectedWorkflow(ctx context.Context, p switchboard.Principal, name string) error {
	selected, err := s.agentWorkflows(ctx, p)
	if err != nil {
		return err
	}
	if !selected[name] {
		return switchboard.AgentForbidden("use workflow " + name + ": it reads and runs only the workflows its agent selected")
	}
	return nil
}

// agentWorkflows names the workflows an agent's key may use, as the router lists its
// tools: the workflows provider's tools its agent selected.
func (s *server) agentWorkflows(ctx context.Context, p switchboard.Principal) (map[string]bool, error) {
	bindings, err := s.tools().Tools(ctx, p)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, b := range bindings {
		if workflows.IsTool(b.Tool) {
			out[b.Tool.Info.Name] = true
		}
	}
	return out, nil
}

// failWorkflow answers a definition's problems, each with its step and field, or any
// other error as fail does. With the definition (when it parsed), the answer outlines
// its steps too, so an editor can show each problem beside its step.
func (s *server) failWorkflow(c *gin.Context, err error, def ...*workflows.Definition) {
	ps := workflows.ProblemsOf(err)
	if ps == nil {
		s.fail(c, err)
		return
	}
	e := switchboard.AsError(ps.AsError())
	body := gin.H{
		"error":    errorDetail{Code: e.Code, Message: e.Message, Field: e.Field},
		"problems": ps,
	}
	if len(def) == 1 && def[0] != nil {
		body["steps"] = outline(def[0])
	}
	c.AbortWithStatusJSON(http.StatusBadRequest, body)
}

// stepOutline is a step of a definition that did not pass its checks.
type stepOutline struct {
	Name    string   `json:"name"`
	Tool    string   `json:"tool"`
	Needs   []string `json:"needs,omitempty"`
	If      string   `json:"if,omitempty"`
	Foreach string   `json:"foreach,omitempty"`
}

func outline(def *workflows.Definition) []stepOutline {
	out := make([]stepOutline, 0, len(def.Steps))
	for _, st := range def.Steps {
		out = append(out, stepOutline{Name: st.Name, Tool: st.Tool, Needs: st.Needs, If: st.If, Foreach: st.Foreach})
	}
	return out
}

// draftGraph draws the steps of a definition that is not saved (the editor's draft)
// as SVG: it only needs to parse, so a draft with problems is drawn too.
func (s *server) draftGraph(c *gin.Context) {
	if _, ok := s.workflowEditor(c); !ok {
		return
	}
	var req workflowRequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	def, _, err := req.definition()
	if err != nil {
		s.failWorkflow(c, err, def)
		return
	}
	writeGraph(c, workflows.Diagram(def, nil))
}

// writeGraph answers an SVG drawing, uncached, and inert if opened on its own.
func writeGraph(c *gin.Context, svg []byte) {
	c.Header("Cache-Control", "no-store")
	c.Header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	c.Data(http.StatusOK, "image/svg+xml", svg)
}

// workflowGraph draws a saved workflow's steps as SVG; ?run= colours them by their
// state in one of the caller's runs of it.
func (s *server) workflowGraph(c *gin.Context) {
	p, ok := s.workflowNamed(c)
	if !ok {
		return
	}
	w, err := s.Workflows.Get(c.Request.Context(), p, c.Param("name"))
	if err != nil {
		s.fail(c, err)
		return
	}
	def, err := workflows.Parse([]byte(w.Definition))
	if err != nil {
		s.fail(c, err)
		return
	}
	var states map[string]workflows.StepState
	if id := c.Query("run"); id != "" {
		st, err := s.Workflows.Status(c.Request.Context(), p, id)
		if err != nil {
			s.fail(c, err)
			return
		}
		if st.Workflow != w.Name {
			s.fail(c, switchboard.Invalid("run", "is a run of workflow "+st.Workflow+", not of "+w.Name))
			return
		}
		states = map[string]workflows.StepState{}
		for _, r := range st.Steps {
			states[r.StepName] = r.Status
		}
	}
	writeGraph(c, workflows.Diagram(def, states))
}

// listWorkflows lists the tenant's workflows: ?category=. An agent's key lists those
// its agent selected.
func (s *server) listWorkflows(c *gin.Context) {
	p, ok := s.workflowService(c)
	if !ok {
		return
	}
	ws, err := s.Workflows.List(c.Request.Context(), p, c.Query("category"))
	if err != nil {
		s.fail(c, err)
		return
	}
	var selected map[string]bool // an agent's key lists only its agent's workflows
	if p.Kind != switchboard.PrincipalUser {
		if selected, err = s.agentWorkflows(c.Request.Context(), p); err != nil {
			s.fail(c, err)
			return
		}
	}
	out := make([]workflowView, 0, len(ws))
	for _, w := range ws {
		if selected != nil && !selected[w.Name] {
			continue
		}
		v := viewWorkflow(w, false)
		v.Triggers = triggersOf(w)
		if v.LastRun, err = s.Workflows.LastRun(c.Request.Context(), p, w.Name); err != nil {
			s.fail(c, err)
			return
		}
		out = append(out, v)
	}
	c.JSON(http.StatusOK, gin.H{"workflows": out})
}

// createWorkflow saves a workflow (201), or with overwrite replaces one (200).
func (s *server) createWorkflow(c *gin.Context) {
	s.saveWorkflow(c, "")
}

// putWorkflow replaces the workflow the path names (or creates it).
func (s *server) putWorkflow(c *gin.Context) {
	s.saveWorkflow(c, c.Param("name"))
}

func (s *server) saveWorkflow(c *gin.Context, name string) {
	p, ok := s.workflowEditor(c)
	if !ok {
		return
	}
	var req workflowRequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	def, source, err := req.definition()
	if err != nil {
		s.failWorkflow(c, err, def)
		return
	}
	overwrite := req.Overwrite
	if name != "" {
		if def.Name != name {
			s.fail(c, switchboard.Invalid("definition.name", "must be "+name+", the workflow this path names"))
			return
		}
		overwrite = true
	}
	w, created, err := s.Workflows.Create(c.Request.Context(), p, def, source, overwrite)
	if err != nil {
		s.failWorkflow(c, err, def)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		c.Header("Location", "/api/workflows/"+w.Name)
	}
	c.JSON(status, viewWorkflow(w, true))
}

func (s *server) getWorkflow(c *gin.Context) {
	p, ok := s.workflowNamed(c)
	if !ok {
		return
	}
	w, err := s.Workflows.Get(c.Request.Context(), p, c.Param("name"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, viewWorkflow(w, true))
}

func (s *server) deleteWorkflow(c *gin.Context) {
	p, ok := s.workflowEditor(c)
	if !ok {
		return
	}
	if err := s.Workflows.Delete(c.Request.Context(), p, c.Param("name")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// dryRunDefinition checks an unsaved definition (and parameters) and answers the plan.
func (s *server) dryRunDefinition(c *gin.Context) {
	p, ok := s.workflowEditor(c)
	if !ok {
		return
	}
	var req workflowRequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	def, _, err := req.definition()
	if err != nil {
		s.failWorkflow(c, err, def)
		return
	}
	plan, err := s.Workflows.DryRunDefinition(c.Request.Context(), p, def, req.Parameters)
	if err != nil {
		s.failWorkflow(c, err, def)
		return
	}
	c.JSON(http.StatusOK, plan)
}

// dryRunWorkflow checks a saved workflow with parameters and answers the plan.
func (s *server) dryRunWorkflow(c *gin.Context) {
	p, ok := s.workflowNamed(c)
	if !ok {
		return
	}
	var req struct {
		Parameters json.RawMessage `json:"parameters"`
	}
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	plan, err := s.Workflows.DryRun(c.Request.Context(), p, c.Param("name"), req.Parameters)
	if err != nil {
		s.failWorkflow(c, err)
		return
	}
	c.JSON(http.StatusOK, plan)
}

// startWorkflow starts a run of a workflow and answers 202 with it at once.
func (s *server) startWorkflow(c *gin.Context) {
	p, ok := s.workflowNamed(c)
	if !ok {
		return
	}
	var req struct {
		Parameters    json.RawMessage `json:"parameters"`
		ParallelLimit int             `json:"parallel_limit"`
		Timeout       int             `json:"timeout"` // seconds
	}
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	v, err := s.Workflows.Start(c.Request.Context(), p, c.Param("name"), req.Parameters,
		workflows.StartOptions{ParallelLimit: req.ParallelLimit, Timeout: time.Duration(req.Timeout) * time.Second})
	if err != nil {
		s.failWorkflow(c, err)
		return
	}
	c.Header("Location", "/api/workflow-runs/"+v.ID)
	c.JSON(http.StatusAccepted, v)
}

// listWorkflowRuns lists the caller's runs of a workflow: ?cursor=.
func (s *server) listWorkflowRuns(c *gin.Context) {
	p, ok := s.workflowNamed(c)
	if !ok {
		return
	}
	list, next, err := s.Workflows.RunsOf(c.Request.Context(), p, c.Param("name"), c.Query("cursor"))
	if err != nil {
		s.fail(c, err)
		return
	}
	body := gin.H{"runs": list}
	if next != "" {
		body["next_cursor"] = next
	}
	c.JSON(http.StatusOK, body)
}

// getWorkflowRun answers one of the caller's workflow runs with each step's state,
// timing and output.
func (s *server) getWorkflowRun(c *gin.Context) {
	p, ok := s.workflowService(c)
	if !ok {
		return
	}
	st, err := s.Workflows.Status(c.Request.Context(), p, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, st)
}

func (s *server) cancelWorkflowRun(c *gin.Context) {
	p, ok := s.workflowService(c)
	if !ok {
		return
	}
	v, err := s.Workflows.Cancel(c.Request.Context(), p, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

// workflowRoutes adds /api/workflows and /api/workflow-runs.
func (s *server) workflowRoutes(a *gin.RouterGroup) {
	a.GET("/workflows", s.listWorkflows)
	a.POST("/workflows", s.createWorkflow)
	a.POST("/workflows/dry-run", s.dryRunDefinition)
	a.POST("/workflows/graph.svg", s.draftGraph)
	a.GET("/workflows/:name", s.getWorkflow)
	a.PUT("/workflows/:name", s.putWorkflow)
	a.DELETE("/workflows/:name", s.deleteWorkflow)
	a.POST("/workflows/:name/dry-run", s.dryRunWorkflow)
	a.POST("/workflows/:name/runs", s.startWorkflow)
	a.GET("/workflows/:name/runs", s.listWorkflowRuns)
	a.GET("/workflows/:name/graph.svg", s.workflowGraph)
	a.GET("/workflow-runs/:id", s.getWorkflowRun)
	a.POST("/workflow-runs/:id/cancel", s.cancelWorkflowRun)
	a.PUT("/workflows/:name/webhooks/:provider", s.setWebhookSecret)
	a.POST("/workflows/:name/activate", s.activateWorkflow(true))
	a.POST("/workflows/:name/deactivate", s.activateWorkflow(false))
	a.GET("/workflow-settings", s.getWorkflowSettings)
	a.PUT("/workflow-settings", s.putWorkflowSettings)
}

// activateWorkflow activates or deactivates a workflow and answers it: a deactivated
// one does not run, and its tools say so for a while before they go.
func (s *server) activateWorkflow(active bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		p, ok := s.workflowEditor(c)
		if !ok {
			return
		}
		ctx := c.Request.Context()
		if err := s.Workflows.SetActive(ctx, p, c.Param("name"), active); err != nil {
			s.fail(c, err)
			return
		}
		w, err := s.Workflows.Get(ctx, p, c.Param("name"))
		if err != nil {
			s.fail(c, err)
			return
		}
		c.JSON(http.StatusOK, viewWorkflow(w, false))
	}
}

// workflowSettings is the tenant's settings of its workflows' tools.
type workflowSettings struct {
	// ToolAliases keeps each workflow's tool workflow_<name> beside its run_flow__,
	// run_flow_async__ and query_flow__ tools.
	ToolAliases *bool `json:"tool_aliases"`
}

func (s *server) getWorkflowSettings(c *gin.Context) {
	p, ok := s.workflowEditor(c)
	if !ok {
		return
	}
	on, err := s.Workflows.ToolAliases(c.Request.Context(), p)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, workflowSettings{ToolAliases: &on})
}

func (s *server) putWorkflowSettings(c *gin.Context) {
	p, ok := s.workflowEditor(c)
	if !ok {
		return
	}
	var req workflowSettings
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if req.ToolAliases == nil {
		s.fail(c, switchboard.Invalid("tool_aliases", "is required: true keeps each workflow's tool workflow_<name>"))
		return
	}
	if err := s.Workflows.SetToolAliases(c.Request.Context(), p, *req.ToolAliases); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, req)
}
