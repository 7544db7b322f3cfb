package mcpadapter

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard/providers"
)

// maxListings bounds the listings kept of the surface's own tools (search, runs,
// workflows): a tenant's saved workflows bring schemas of their own.
const maxListings = 4096

// listings keeps the surface's own tools' inputs as the schema profile lists them,
// by schema, so each is made once, not per scope or per call.
type listings struct {
	mu sync.Mutex
	m  map[string]*providers.Listing
}

func (l *listings) get(profile providers.SchemaProfile, schema json.RawMessage) (*providers.Listing, error) {
	key := string(profile) + "\x00" + string(schema)
	l.mu.Lock()
	defer l.mu.Unlock()
	if got, ok := l.m[key]; ok {
		return got, nil
	}
	got, err := providers.ListInput(profile, schema)
	if err != nil {
		return nil, err
	}
	if l.m == nil || len(l.m) >= maxListings {
		l.m = map[string]*providers.Listing{}
	}
	l.m[key] = got
	return got, nil
}

// listedAs returns one of the surface's own tools (search_tools, call_tool, the runs
// and workflow tools) as the adapter's schema profile lists it: its input schema and
// description in that profile, and a handler that first turns the arguments written
// for that schema back into arguments for the tool's own (a JSON text decoded, a
// null for an optional property left out). A schema the profile cannot list is
// served as it is.
func (a *Adapter) listedAs(st server.ServerTool) server.ServerTool {
	profile := a.opts.SchemaProfile
	if profile == providers.ProfileFull {
		return st
	}
	schema := st.Tool.RawInputSchema
	if schema == nil {
		raw, err := json.Marshal(st.Tool.InputSchema)
		if err != nil {
			return st
		}
		schema = raw
	}
	l, err := a.listings.get(profile, schema)
	if err != nil {
		return st
	}
	st.Tool.RawInputSchema = l.Schema
	st.Tool.InputSchema = mcp.ToolInputSchema{} // said by the raw schema alone
	st.Tool.Description = providers.ListedDescription(profile, st.Tool.Description)
	handler := st.Handler
	st.Handler = func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if raw, err := rawArguments(req); err == nil {
			if args, err := l.Args(raw); err == nil {
				req.Params.RawArguments = args
				var m map[string]any
				if json.Unmarshal(args, &m) == nil {
					req.Params.Arguments = m
				}
			}
		}
		return handler(ctx, req)
	}
	return st
}
