package web

import "net/http"

// workflowPages are the Workflows section: the list, the editor (a new workflow, or a
// saved one by name) and a run's page. workflows.js fills them from /api/workflows.
var workflowPages = []appPageSpec{
	{"GET /workflows", "workflows", "Workflows"},
	{"GET /workflows/new", "workflow", "New workflow"},
	{"GET /workflows/{name}", "workflow", "Workflow"},
	{"GET /workflow-runs/{id}", "workflow_run", "Workflow run"},
}

// pageScripts are the static scripts pages load after app.js, by template.
var pageScripts = map[string]string{
	"workflows":    "workflows.js",
	"workflow":     "workflows.js",
	"workflow_run": "workflows.js",
	"integrations": "openapi.js", // APIs added by their OpenAPI description
	"overview":     "usage.js",
}

// workflowParam is a workflow page's path parameter: the workflow's name, or the run's id.
func workflowParam(page string, r *http.Request) string {
	if page == "workflow_run" {
		return r.PathValue("id")
	}
	return r.PathValue("name")
}
