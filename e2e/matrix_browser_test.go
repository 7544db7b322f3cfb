package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/npmtest"
	"github.com/switchboard-hub/switchboard/internal/testproc"
)

// browserCells: signed in as the owner in Chromium (browser/matrix.mjs), every kind of
// tool is pickable in the agent builder and answers from its Try it page.
func (r *matrixRig) browserCells(t *testing.T) {
	t.Run("browser", func(t *testing.T) {
		requireNode(t)
		requireChromium(t)
		dir := browserDir(t)
		npmtest.Install(t, dir)
		tools := map[string]map[string]any{}
		nonces := map[string]string{}
		for _, k := range matrixKinds {
			nonce := "browser-" + strings.ReplaceAll(k.name, " ", "-")
			nonces[k.tool] = nonce
			tools[k.tool] = k.args(nonce)
		}
		toolsJSON, _ := json.Marshal(tools)
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		defer cancel()
		cmd := testproc.Command(ctx, "node", filepath.Join(dir, "matrix.mjs"))
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "BASE_URL="+r.srv.BaseURL, "EMAIL=admin@localhost", "PASSWORD="+personPassword, "TOOLS="+string(toolsJSON), "AGENT_ID="+r.agentID, "CHROMIUM="+chromiumPath)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("node matrix.mjs: %v\nstderr:\n%s", err, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		var sum struct {
			Tools map[string]struct {
				Pickable bool   `json:"pickable"`
				Answer   string `json:"answer"`
				Error    string `json:"error"`
			} `json:"tools"`
			Failures []string `json:"failures"`
			Resaved  struct {
				Before []string `json:"before"`
				After  []string `json:"after"`
				Error  string   `json:"error"`
			} `json:"resaved"`
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
			t.Fatalf("matrix.mjs printed no JSON summary: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		}
		if len(sum.Failures) > 0 {
			t.Fatalf("the browser run failed: %s\nstderr:\n%s", strings.Join(sum.Failures, "\n"), stderr.String())
		}
		t.Run("owner / remote MCP tool / agent made through the API, saved in the builder: kept", func(t *testing.T) {
			before, after := slices.Sorted(slices.Values(sum.Resaved.Before)), slices.Sorted(slices.Values(sum.Resaved.After))
			if sum.Resaved.Error != "" || !slices.Contains(before, "docs_search") || !slices.Equal(before, after) {
				t.Errorf("the agent's tools were %v, after the builder saved it %v (%s)", sum.Resaved.Before, sum.Resaved.After, sum.Resaved.Error)
			}
		})
		for _, k := range matrixKinds {
			got := sum.Tools[k.tool]
			if k.ambient {
				checkCell(t, "owner / "+k.name+" / agent builder: not offered, every agent has it", func(fail func(string, ...any)) {
					if got.Pickable {
						fail("the builder offers #pick-%s, which every agent has anyway", k.tool)
					}
				})
			} else {
				checkCell(t, "owner / "+k.name+" / agent builder: pickable", func(fail func(string, ...any)) {
					if !got.Pickable {
						fail("the builder offers no #pick-%s", k.tool)
					}
				})
			}
			checkCell(t, "owner / "+k.name+" / Try it: answered", func(fail func(string, ...any)) {
				if got.Error != "" || !strings.Contains(got.Answer, k.answer(nonces[k.tool])) {
					fail("Try it answered %q, error %q; want an answer holding %q", short(got.Answer), got.Error, k.answer(nonces[k.tool]))
				}
			})
		}
	})
}
