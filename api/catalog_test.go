package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
	hubtools "github.com/switchboard-hub/switchboard/providers/hub"
)

func TestCatalog(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		reg := providers.NewRegistry()
		if err := all.Register(reg); err != nil {
			t.Fatal(err)
		}

		var catalog struct {
			Providers []struct {
				Name       string   `json:"name"`
				Title      string   `json:"title"`
				AuthKinds  []string `json:"auth_kinds"`
				TokenHelp  string   `json:"token_help"`
				DocsURL    string   `json:"docs_url"`
				Operations int      `json:"operations"`
			} `json:"providers"`
		}
		w.want(w.member, http.MethodGet, "/api/providers", "", http.StatusOK, &catalog)
		type row struct {
			Name, Title string
			Ops         int
			HasHelp     bool
		}
		var got, want []row
		for _, p := range catalog.Providers {
			got = append(got, row{p.Name, p.Title, p.Operations, p.TokenHelp != "" && p.DocsURL != "" && len(p.AuthKinds) > 0})
		}
		for _, p := range reg.Providers() {
			want = append(want, row{p.Name, p.Title, len(reg.Tools(p.Name)), true})
		}
		// Then the hub's own tools, which run on no connection (nothing to connect): the
		// tenant's saved workflows (none yet), tool search and the run tools every caller
		// has, and the workflows' management.
		want = append(want, row{"workflows", "Workflows", 0, false}, row{hubtools.SearchProvider, "Tool search", 3, false}, row{hubtools.Provider, "Switchboard", 5, false},
			row{hubtools.WorkflowsProvider, "Manage workflows", 9, false})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("catalog (-want +got):\n%s", diff)
		}

		for _, p := range reg.Providers() {
			t.Run(p.Name, func(t *testing.T) {
				var ops struct {
					Provider   string `json:"provider"`
					Operations []struct {
						Tool         string          `json:"tool"`
						Title        string          `json:"title"`
						Description  string          `json:"description"`
						Scopes       []string        `json:"scopes"`
						Annotations  map[string]bool `json:"annotations"`
						InputSchema  json.RawMessage `json:"input_schema"`
						OutputSchema json.RawMessage `json:"output_schema"`
					} `json:"operations"`
				}
				w.want(w.member, http.MethodGet, "/api/providers/"+p.Name+"/operations", "", http.StatusOK, &ops)
				tools := reg.Tools(p.Name)
				if len(ops.Operations) != len(tools) {
					t.Fatalf("%d operations, want %d", len(ops.Operations), len(tools))
				}
				for i, tool := range tools {
					op := ops.Operations[i]
					if op.Tool != tool.Name || op.Title != tool.Info.Title || op.Description != tool.Info.Description {
						t.Errorf("operation %d = %s %q, want %s %q", i, op.Tool, op.Title, tool.Name, tool.Info.Title)
					}
					// The catalog serves the registry's schema bytes, the ones MCP serves.
					if !bytes.Equal(compact(t, op.InputSchema), compact(t, tool.InputSchema)) {
						t.Errorf("%s input_schema differs from the registry's:\n got %s\nwant %s", tool.Name, op.InputSchema, tool.InputSchema)
					}
					if !bytes.Equal(compact(t, op.OutputSchema), compact(t, tool.OutputSchema)) {
						t.Errorf("%s output_schema differs from the registry's", tool.Name)
					}
					wantHints := map[string]bool{
						"readOnlyHint":    tool.Info.Hints.ReadOnly,
						"destructiveHint": tool.Info.Hints.Destructive,
						"idempotentHint":  tool.Info.Hints.Idempotent || tool.Info.Hints.ReadOnly,
						"openWorldHint":   !tool.Info.Hints.ClosedWorld,
					}
					if diff := cmp.Diff(wantHints, op.Annotations); diff != "" {
						t.Errorf("%s annotations (-want +got):\n%s", tool.Name, diff)
					}
				}
			})
		}

		status, b := w.do(w.member, http.MethodGet, "/api/providers/no_such_provider/operations", "")
		if status != http.StatusNotFound || decodeError(t, b).Error.Code != "not_found" {
			t.Errorf("unknown provider: status %d body %s, want 404 not_found", status, b)
		}
	})
}

func compact(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatalf("compact %s: %v", b, err)
	}
	return out.Bytes()
}
