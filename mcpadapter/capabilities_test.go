package mcpadapter

import (
	"encoding/json"
	"fmt"
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
// logging/setLevel and tasks/list, which answer -32601), with tasks as the tasks
// extension, whose requests need the client to declare it (-32021); ping, which
// that version removed, is method not found with or without _meta.
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
		legacy := []string{"completions", "logging", "prompts", "prompts.listChanged", "resources", "resources.listChanged", "resources.subscribe", "tools", "tools.listChanged"}
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
			modernWith := func(method, caps string) map[string]any {
				return post(t, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{"level":"info","taskId":"tsk_none","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
					`"io.modelcontextprotocol/clientCapabilities":`+caps+`,"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`,
					map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: method})
			}
			withTasks := `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
			modern := func(method string) map[string]any { return modernWith(method, withTasks) }
			code := func(msg map[string]any) int {
				errObj, _ := msg["error"].(map[string]any)
				c, _ := errObj["code"].(float64)
				return int(c)
			}
			discover := modern("server/discover")
			got := capabilities(discover)
			// Tasks are the tasks extension on this version, not a core capability.
			want := []string{"completions", "extensions", "extensions.io.modelcontextprotocol/tasks", "prompts", "prompts.listChanged", "resources", "resources.listChanged", "resources.subscribe", "tools", "tools.listChanged"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("server/discover (-want +got):\n%s", diff)
			}
			raw, _ := json.Marshal(discover["result"])
			if !strings.Contains(string(raw), `"io.modelcontextprotocol/tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}`) {
				t.Errorf("server/discover = %s, want the tasks extension's settings (cancel, tools/call)", raw)
			}
			// What the version removed is indeed not served, so it must not be advertised.
			for _, method := range []string{"logging/setLevel", "tasks/list"} {
				if msg := modern(method); code(msg) != mcp.METHOD_NOT_FOUND {
					t.Errorf("%s on 2026-07-28 = %v, want -32601 (else advertise it)", method, msg)
				}
			}
			// A tasks request of a client that did not declare the extension.
			if msg := modernWith("tasks/get", `{}`); code(msg) != mcp.MISSING_REQUIRED_CLIENT_CAPABILITY || !strings.Contains(fmt.Sprint(msg), "io.modelcontextprotocol/tasks") {
				t.Errorf("tasks/get without the extension = %v, want -32021 naming it", msg)
			} else if data, _ := json.Marshal(msg["error"].(map[string]any)["data"]); string(data) != `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}` {
				t.Errorf("tasks/get without the extension: error data = %s, want requiredCapabilities naming the extension", data)
			}
			if msg := modern("tasks/get"); code(msg) == mcp.MISSING_REQUIRED_CLIENT_CAPABILITY || code(msg) == 0 {
				t.Errorf("tasks/get of an unknown task with the extension = %v, want the task refused as unknown", msg)
			}
			// ping, removed by the version: method not found, with or without _meta.
			for _, body := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`} {
				if msg := post(t, body, map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: "ping"}); code(msg) != mcp.METHOD_NOT_FOUND {
					t.Errorf("%s on 2026-07-28 = %v, want -32601", body, msg)
				}
			}
		})
	})
}
