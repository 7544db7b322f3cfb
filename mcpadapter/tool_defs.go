package mcpadapter

import (
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard/providers"
)

// toolDef is a registry tool as every scope lists it: its MCP definition with the
// registry's schemas, annotations from the operation's hints, and the task support the
// extensions declare. It is immutable once made, and shared by every scope that serves
// the tool: a scope holds a pointer to it, and a copy of its own only where it differs
// (a connection argument listing several accounts, a reconnect mark). 10,000 tenants
// with the same GitHub connection hold one definition of each GitHub tool, not 10,000.
type toolDef struct {
	tool mcp.Tool
}

// toolDefs holds the shared definitions, one per registry tool. The registry is built
// at start-up and read-only afterwards, so its *providers.Tool is the provider's tool
// at the registry's version; a provider whose tools come per connection (a remote MCP
// server, an OpenAPI description) gets a definition per binding instead, kept by the
// scopes that use it and no longer.
type toolDefs struct {
	mu   sync.Mutex
	defs map[toolDefKey]*toolDef
}

type toolDefKey struct {
	tool        *providers.Tool
	taskSupport bool
	profile     providers.SchemaProfile
}

// def returns the shared definition of t, its input schema and description as the
// schema profile lists them (the tool keeps each profile's listing, made once).
func (d *toolDefs) def(t *providers.Tool, taskSupport bool, profile providers.SchemaProfile) *toolDef {
	if t.Provider != nil && (t.Provider.PerConnection() || t.Provider.TenantTools != nil) {
		return newToolDef(t, taskSupport, profile)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	key := toolDefKey{t, taskSupport, profile}
	if def, ok := d.defs[key]; ok {
		return def
	}
	if d.defs == nil {
		d.defs = map[toolDefKey]*toolDef{}
	}
	def := newToolDef(t, taskSupport, profile)
	d.defs[key] = def
	return def
}

func newToolDef(t *providers.Tool, taskSupport bool, profile providers.SchemaProfile) *toolDef {
	info := t.Info
	input, output := t.ListedFor(profile)
	h := info.Hints
	tool := mcp.Tool{
		Name:            t.Name,
		Description:     t.DescriptionFor(profile),
		RawInputSchema:  input,
		RawOutputSchema: output,
		// The display title is said once, in annotations.title: every protocol
		// version reads it there (2025-06-18 and later fall back to it when the
		// tool has no title of its own), and a second copy cost every list ~1.5 KB.
		Annotations: mcp.ToolAnnotation{
			Title:           info.Title,
			ReadOnlyHint:    mcp.ToBoolPtr(h.ReadOnly),
			DestructiveHint: mcp.ToBoolPtr(h.Destructive),
			IdempotentHint:  mcp.ToBoolPtr(h.Idempotent || h.ReadOnly),
			OpenWorldHint:   mcp.ToBoolPtr(!h.ClosedWorld),
		},
	}
	if t.Meta != nil {
		tool.Meta = mcp.NewMetaFromMap(t.Meta)
	}
	if taskSupport {
		// Every hub tool runs with or without a task unless it says otherwise; a
		// tool that never runs as one is listed without execution (forbidden is
		// the default).
		switch info.Task {
		case providers.TaskRequired:
			tool.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}
		case providers.TaskForbidden:
		default:
			tool.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
		}
	}
	return &toolDef{tool: tool}
}

// taskSupport reports whether an extension runs task-augmented calls of hub tools.
func (a *Adapter) taskSupport() bool {
	for _, e := range a.opts.Extensions {
		if e.TaskSupport {
			return true
		}
	}
	return false
}
