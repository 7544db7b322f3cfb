package mcpadapter

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestCapabilitiesFollowTheNegotiatedVersion checks what initialize and
// server/discover advertise against what each version serves: tasks from 2025-11-25
// on, and on 2026-07-28 neither logging nor tasks.list (that version removed
// logging/setLevel and tasks/list, which answer -32601).
func TestCapabilitiesFollowTheNegotiatedVersion(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		url := e.srv.URL + "/mcp/" + e.ann.TenantSlug
		post := func(t *testing.T, body string, header map[string]string) map[string]any {
			t.Helper()
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+keyAnn)
			for k, v := range header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var msg map[string]any
			if err := json.Unmarshal(raw, &msg); err != nil {
				t.Fatalf("%s: status %d %s", body, resp.StatusCode, raw)
			}
			return msg
		}
		capabilities := func(msg map[string]any) []string {
			result, _ := msg["result"].(map[string]any)
			caps, _ := result["capabilities"].(map[string]any)
			var names []string
			for name, v := range caps {
				names = append(names, name)
				if sub, ok := v.(map[string]any); ok {
					for k := range sub {
						names = append(names, name+"."+k)
					}
				}
			}
			return sortedCopy(names)
		}
		legacy := []string{"completions", "logging", "prompts", "prompts.listChanged", "resources", "resources.listChanged", "tools", "tools.listChanged"}
		for _, tt := range []struct {
			version string
			want    []string
		}{
			{version: "2025-03-26", want: legacy},
			{version: "2025-06-18", want: legacy},
			{version: "2025-11-25", want: sortedCopy(append([]string{"tasks", "tasks.cancel", "tasks.list", "tasks.requests"}, legacy...))},
		} {
			t.Run(tt.version, func(t *testing.T) {
				msg := post(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+tt.version+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
				if diff := cmp.Diff(tt.want, capabilities(msg)); diff != "" {
					t.Errorf("initialize at %s (-want +got):\n%s", tt.version, diff)
				}
			})
		}
		t.Run("2026-07-28", func(t *testing.T) {
			modern := func(method string) map[string]any {
				return post(t, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{"level":"info","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
					`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`,
					map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: method})
			}
			got := capabilities(modern("server/discover"))
			want := []string{"completions", "prompts", "prompts.listChanged", "resources", "resources.listChanged", "tasks", "tasks.cancel", "tasks.requests", "tools", "tools.listChanged"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("server/discover (-want +got):\n%s", diff)
			}
			// What the version removed is indeed not served, so it must not be advertised.
			for _, method := range []string{"logging/setLevel", "tasks/list"} {
				msg := modern(method)
				errObj, _ := msg["error"].(map[string]any)
				if code, _ := errObj["code"].(float64); int(code) != mcp.METHOD_NOT_FOUND {
					t.Errorf("%s on 2026-07-28 = %v, want -32601 (else advertise it)", method, msg)
				}
			}
		})
	})
}
