package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/notesfake"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// The official Go SDK (v1.8.0) has no tasks API. What it has: a sending middleware,
// which may hand its tools/call a params type of the caller's own (ParamsBase plus a
// task field), and custom methods (AddSendingCustomMethod, CallCustomMethod) for
// tasks/get, tasks/list and tasks/result. What it lacks: its tools/call always decodes
// the answer as a CallToolResult, so the CreateTaskResult's task (the task id) is
// dropped, and it refuses to register tools/call as a custom method. The id comes from
// tasks/list on 2025-11-25; 2026-07-28 has no tasks/list, so there the test's HTTP
// client reads it from the answer the SDK received (the server decides there that the
// call is a task, and answers a flat CreateTaskResult). 2026-07-28 has no tasks/result
// either: its tasks/get inlines the task's result.

type taskCallParams struct {
	sdk.ParamsBase
	Name      string         `json:"name"`
	Arguments any            `json:"arguments"`
	Task      map[string]any `json:"task"`
}

type taskIDParams struct {
	sdk.ParamsBase
	TaskID string `json:"taskId"`
}

type listTasksParams struct {
	sdk.ParamsBase
}

type sdkTask struct {
	TaskID string `json:"taskId"`
	Status string `json:"status"`
}

type getTaskResult struct {
	sdk.ResultBase
	sdkTask
	Result *taskPayload `json:"result"`
}

type listTasksResult struct {
	sdk.ResultBase
	Tasks []sdkTask `json:"tasks"`
}

type taskPayload struct {
	sdk.ResultBase
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
}

type asTaskKey struct{}

// taskIDs is the test's HTTP client: it adds the API key and notes the task ids in
// the answers the SDK received.
type taskIDs struct {
	key string
	mu  sync.Mutex
	ids []string
}

var taskIDPattern = regexp.MustCompile(`(?:"task":\{|"resultType":"task")[^}]*"taskId":"([^"]+)"`)

func (t *taskIDs) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.key)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || r.Method != http.MethodPost {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if m := taskIDPattern.FindSubmatch(body); m != nil {
		t.mu.Lock()
		t.ids = append(t.ids, string(m[1]))
		t.mu.Unlock()
	}
	return resp, nil
}

// TestGoSDKClientRunsATask makes a task-augmented tools/call with the official Go
// SDK's client on both eras, through its sending middleware and custom methods (it
// has no tasks API): the task runs the tool once, tasks/get says it completed, and
// tasks/result gives the tool's output (2025-11-25).
func TestGoSDKClientRunsATask(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			testdb.Each(t, func(t *testing.T, db *gorm.DB) {
				t.Parallel()
				e := newRunsEnv(t, db)
				ctx := context.Background()
				// On 2026-07-28 tasks are an extension the client declares.
				client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-tasks", Version: "1"}, &sdk.ClientOptions{
					Capabilities: &sdk.ClientCapabilities{Extensions: map[string]any{TasksExtension: map[string]any{}}}})
				client.AddSendingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
					return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
						p, ok := req.GetParams().(*sdk.CallToolParams)
						if method != "tools/call" || !ok || ctx.Value(asTaskKey{}) == nil {
							return next(ctx, method, req)
						}
						tp := &taskCallParams{Name: p.Name, Arguments: p.Arguments, Task: map[string]any{}}
						tp.Meta = p.Meta
						return next(ctx, method, &sdk.ClientRequest[*taskCallParams]{Session: req.GetSession().(*sdk.ClientSession), Params: tp})
					}
				})
				for _, m := range []error{
					sdk.AddSendingCustomMethod[*taskIDParams, *getTaskResult](client, "tasks/get"),
					sdk.AddSendingCustomMethod[*taskIDParams, *taskPayload](client, "tasks/result"),
					sdk.AddSendingCustomMethod[*listTasksParams, *listTasksResult](client, "tasks/list"),
				} {
					if m != nil {
						t.Fatal(m)
					}
				}
				ids := &taskIDs{key: keyAnn}
				cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
					Endpoint: e.srv.URL + "/mcp/" + e.ann.TenantSlug, HTTPClient: &http.Client{Transport: ids}, DisableStandaloneSSE: true,
				}, &sdk.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				t.Cleanup(func() { _ = cs.Close() })

				if _, err := cs.CallTool(context.WithValue(ctx, asTaskKey{}, true), &sdk.CallToolParams{Name: "notes_create_note", Arguments: map[string]any{"text": "as a Go SDK task"}}); err != nil {
					t.Fatalf("task-augmented tools/call: %v", err)
				}
				var id string
				if version < "2026-07-28" {
					tasks, err := sdk.CallCustomMethod[*listTasksParams, *listTasksResult](ctx, cs, "tasks/list", &listTasksParams{})
					if err != nil || len(tasks.Tasks) != 1 {
						t.Fatalf("tasks/list: %+v, %v", tasks, err)
					}
					id = tasks.Tasks[0].TaskID
				} else {
					ids.mu.Lock()
					if len(ids.ids) == 1 {
						id = ids.ids[0]
					}
					ids.mu.Unlock()
				}
				if id == "" {
					t.Fatalf("no task created (task ids in the answers: %v)", ids.ids)
				}
				var done *getTaskResult
				testwait.Until(t, "the task to complete", func() bool {
					got, err := sdk.CallCustomMethod[*taskIDParams, *getTaskResult](ctx, cs, "tasks/get", &taskIDParams{TaskID: id})
					if err != nil {
						t.Fatalf("tasks/get: %v", err)
					}
					done = got
					return got.Status == "completed"
				})
				reqs := e.up.Requests()
				if len(reqs) != 1 || !strings.Contains(reqs[0].Body, "as a Go SDK task") {
					t.Errorf("upstream requests = %+v, want the task's one call", reqs)
				}
				res := done.Result
				if version < "2026-07-28" {
					if res != nil {
						t.Errorf("tasks/get inlined a result on %s: %+v", version, res)
					}
					res, err = sdk.CallCustomMethod[*taskIDParams, *taskPayload](ctx, cs, "tasks/result", &taskIDParams{TaskID: id})
					if err != nil {
						t.Fatalf("tasks/result: %v", err)
					}
				} else if res == nil {
					t.Fatalf("tasks/get of the completed task = %+v, want its result inlined", done)
				}
				var note notesfake.Note
				if err := json.Unmarshal(res.StructuredContent, &note); err != nil || res.IsError || note.Text != "as a Go SDK task" {
					t.Fatalf("tasks/result = %+v (%s)", res, res.StructuredContent)
				}
			})
		})
	}
}
