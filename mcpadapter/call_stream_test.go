package mcpadapter

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/sessions"
)

type pagesIn struct {
	Pages int `json:"pages" jsonschema:"How many pages to read"`
}

type pagesOut struct {
	Read int `json:"read" jsonschema:"The pages read"`
}

// pagesSpec is a provider whose read_all reads its upstream page after page; the
// router reports the call's progress once per upstream response.
func pagesSpec() providers.Spec {
	read := &providers.Operation[pagesIn, pagesOut]{
		Name: "read_all", Title: "Read all pages", Description: "Read every page.",
		Hints: providers.Hints{ReadOnly: true},
		Run: func(ctx context.Context, c *providers.Call, in pagesIn) (pagesOut, error) {
			for i := range in.Pages {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.URL(fmt.Sprintf("/pages/%d", i)), nil)
				resp, err := c.HTTP.Do(req)
				if err != nil {
					return pagesOut{Read: i}, err
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					return pagesOut{Read: i}, providers.StatusError("pages", resp, "", "")
				}
			}
			return pagesOut{Read: in.Pages}, nil
		},
	}
	return providers.Spec{Name: "pages", Title: "Pages", Verify: func(context.Context, *providers.Call) (providers.Account, error) { return providers.Account{}, nil },
		Operations: []providers.Op{read}}
}

// TestCallNotificationsStayOnTheCallsStream calls a hub tool that reports its progress
// once per upstream page from a client that holds its GET stream open (mcp-go's
// client, on the latest session-based version), with the session's log level at
// debug: every notification of the call (the log line of its start, one progress per
// page in order, the log line of its end) reaches the client on the call's own stream,
// before its result, call after call and with calls at once. mcp-go's server queues a
// session's notifications on one channel that its GET stream reads too (with an event
// store, for as long as the session lives), so some left on the GET stream, after the
// result.
func TestCallNotificationsStayOnTheCallsStream(t *testing.T) {
	t.Parallel()
	const pages = 200
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/pages/") || r.Method != http.MethodGet {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(func() { testwait.CloseServer(t, upstream) })
	reg := providers.NewRegistry()
	for _, spec := range []providers.Spec{notesSpec(), pagesSpec()} {
		if err := reg.Register(spec); err != nil {
			t.Fatal(err)
		}
	}
	_ = reg.SetBaseURL("pages", upstream.URL)
	e := newEnvWith(t, nil, func(o *router.Options) { o.Registry = reg })
	e.conns.set(connections.Connection{ID: "con_p", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "pages", AccountLabel: "alice@pages", Status: connections.StatusActive})

	tr, err := transport.NewStreamableHTTP(e.srv.URL+"/mcp/acme",
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer key-alice"}), transport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string][]string{} // by progress token, or "log" for log lines
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		mu.Lock()
		defer mu.Unlock()
		switch n.Method {
		case string(mcp.MethodNotificationProgress):
			token, _ := n.Params.AdditionalFields["progressToken"].(string)
			got[token] = append(got[token], fmt.Sprint(n.Params.AdditionalFields["progress"]))
		case string(mcp.MethodNotificationMessage):
			data, _ := json.Marshal(n.Params.AdditionalFields["data"])
			got["log"] = append(got["log"], string(data))
		}
	})
	level := mcp.SetLevelRequest{}
	level.Params.Level = mcp.LoggingLevelDebug
	if err := c.SetLevel(ctx, level); err != nil {
		t.Fatal(err)
	}

	want := make([]string, pages)
	for i := range want {
		want[i] = fmt.Sprint(i + 1)
	}
	call := func(token string) error {
		req := mcp.CallToolRequest{}
		req.Params.Name = "pages_read_all"
		req.Params.Arguments = map[string]any{"pages": pages}
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			return fmt.Errorf("%s: %v %+v", token, err, res)
		}
		mu.Lock() // what arrived before the result
		defer mu.Unlock()
		if strings.Join(got[token], ",") != strings.Join(want, ",") {
			return fmt.Errorf("%s: before the result, %d progress notifications %v, want 1 to %d in order", token, len(got[token]), got[token], pages)
		}
		return nil
	}
	for i := range 3 {
		token := fmt.Sprintf("one-%d", i)
		if err := call(token); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		logs := got["log"]
		mu.Unlock()
		if len(logs) != 2*(i+1) || !strings.Contains(logs[2*i], `"tool_call"`) || !strings.Contains(logs[2*i+1], `"tool_done"`) {
			t.Fatalf("call %d: log lines before the result %v, want its tool_call and tool_done lines", i, logs)
		}
	}
	errs := make(chan error, 4)
	for i := range cap(errs) {
		go func() { errs <- call(fmt.Sprintf("together-%d", i)) }()
	}
	for range cap(errs) {
		if err := testwait.Recv(t, errs, "a call made with others to answer"); err != nil {
			t.Error(err)
		}
	}
}

// A client that lost a call's stream mid-call and resumes it with Last-Event-ID of
// the priming event is replayed what the call sent so far (its log line) and then
// follows the call live until its answer, each once and in order.
func TestResumedCallStreamFollowsTheCall(t *testing.T) {
	t.Parallel()
	h := newHeldCallEnv(t)
	h.version = "2025-11-25"
	session := h.session(t)
	resp, err := h.post(context.Background(), session, `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"info"}}`, false)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	primed, drop := h.primedCall(t, session)
	testwait.Recv(t, h.arrived, "the call to reach the upstream") // its tool_call line is sent by then
	drop()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound for the test
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.url, nil)
	req.Header.Set("Authorization", "Bearer key-alice")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", h.protocolVersion())
	req.Header.Set("Last-Event-ID", primed)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("resume: HTTP %d", res.StatusCode)
	}
	br := bufio.NewReader(res.Body)
	first, err := readEvent(br)
	if err != nil || !strings.Contains(first.data, `"tool_call"`) {
		t.Fatalf("the resumed stream began with %+v (%v), want the call's log line replayed", first, err)
	}
	// The resumption follows the call now: the answer comes live.
	close(h.release)
	var rest []sseEvent
	for {
		ev, err := readEvent(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read the resumed stream: %v (so far %+v)", err, rest)
		}
		rest = append(rest, ev)
	}
	if answers := answersOf(t, rest, "7"); len(answers) != 1 || answers[0]["result"] == nil {
		t.Fatalf("after the replay, answers for id 7 %v, want one result; events %+v", answers, rest)
	}
	if a, b := first.id, rest[len(rest)-1].id; len(a) > len(b) || len(a) == len(b) && a >= b {
		t.Errorf("event ids %q then %q do not increase", a, b)
	}
}

type askerIn struct{}

type askerOut struct {
	Answer string `json:"answer" jsonschema:"What the client's model said"`
}

// askerSpec is a provider whose sample turns to the calling client for an LLM
// completion during the call, as a remote MCP server's sampling request does.
// newAskerEnv is an env whose registry holds the asker provider, with alice's asker
// connection.
func newAskerEnv(t *testing.T) *env {
	t.Helper()
	reg := providers.NewRegistry()
	if err := reg.Register(askerSpec()); err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, nil, func(o *router.Options) { o.Registry = reg })
	e.conns.set(connections.Connection{ID: "con_s", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "asker", AccountLabel: "alice@asker", Status: connections.StatusActive})
	return e
}

func askerSpec() providers.Spec {
	sample := &providers.Operation[askerIn, askerOut]{
		Name: "sample", Title: "Sample", Description: "Ask the client's model.",
		Hints: providers.Hints{ReadOnly: true},
		Run: func(ctx context.Context, _ *providers.Call, _ askerIn) (askerOut, error) {
			c := providers.CallerFrom(ctx)
			if c == nil {
				return askerOut{}, fmt.Errorf("no caller")
			}
			raw, err := c.Ask(ctx, string(mcp.MethodSamplingCreateMessage), json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"Say hi"}}],"maxTokens":10}`))
			if err != nil {
				return askerOut{}, err
			}
			var res mcp.CreateMessageResult
			if err := json.Unmarshal(raw, &res); err != nil {
				return askerOut{}, err
			}
			text, _ := res.Content.(map[string]any)["text"].(string)
			return askerOut{Answer: res.Model + ": " + text}, nil
		},
	}
	return providers.Spec{Name: "asker", Title: "Asker", Verify: func(context.Context, *providers.Call) (providers.Account, error) { return providers.Account{}, nil },
		Operations: []providers.Op{sample}}
}

// sampler answers the hub's sampling requests.
type sampler struct{}

func (sampler) CreateMessage(context.Context, mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return &mcp.CreateMessageResult{Model: "test-model", SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("hi")}}, nil
}

// A sampling request the hub sends on a call's stream is answered by a client whose
// answer reaches another node: the relay brings it to the node where the call waits.
func TestSamplingAnswerReachesTheNodeWhereTheCallWaits(t *testing.T) {
	t.Parallel()
	e := newAskerEnv(t)
	store, relay := sessions.NewMemory(), mcptransport.NewLocalRelay()
	node := func() string {
		a := New(Options{Router: e.adapter.opts.Router, Auth: e.adapter.opts.Auth, Sessions: store, Relay: relay})
		t.Cleanup(func() { a.Close(context.Background()) })
		srv := httptest.NewServer(a)
		t.Cleanup(func() { testwait.CloseServer(t, srv) })
		return srv.URL
	}
	a, b := node(), node()
	lb := newBalancer(t, func(body string) int {
		if isAnswer(body) {
			return 1
		}
		return 0
	}, a, b)
	tr, err := transport.NewStreamableHTTP(a+"/mcp/acme", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer key-alice"}),
		transport.WithHTTPBasicClient(&http.Client{Transport: lb}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithSamplingHandler(sampler{}))
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	init.Params.Capabilities.Sampling = &mcp.SamplingCapability{}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	res := callWithin(t, c, "asker_sample", map[string]any{})
	if res.IsError || !strings.Contains(text(res), "test-model: hi") {
		t.Fatalf("asker_sample = %q (error %v), want the client's completion", text(res), res.IsError)
	}
	if n := len(lb.got(1, `"model":"test-model"`)); n != 1 {
		t.Errorf("node B got %d answers, want 1 (the one relayed to node A)", n)
	}
}
