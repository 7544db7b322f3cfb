package mcpadapter

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
)

type pollerIn struct{}

type pollerOut struct {
	Answer string `json:"answer" jsonschema:"What the call found"`
}

// pollerSpec is a provider whose wait lets its client poll (providers.ReleaseStream),
// reports whether its stream was released, and answers once proceed is closed.
func pollerSpec(released chan<- bool, proceed <-chan struct{}) providers.Spec {
	wait := &providers.Operation[pollerIn, pollerOut]{
		Name: "wait", Title: "Wait", Description: "Let the client poll, then answer.",
		Hints: providers.Hints{ReadOnly: true},
		Run: func(ctx context.Context, _ *providers.Call, _ pollerIn) (pollerOut, error) {
			released <- providers.ReleaseStream(ctx)
			select {
			case <-proceed:
				return pollerOut{Answer: "polled"}, nil
			case <-ctx.Done():
				return pollerOut{}, ctx.Err()
			}
		},
	}
	return providers.Spec{Name: "poller", Title: "Poller", Verify: func(context.Context, *providers.Call) (providers.Account, error) { return providers.Account{}, nil },
		Operations: []providers.Op{wait}}
}

// A call that releases its stream (SEP-1699 polling) ends its POST's SSE stream after
// the priming event, whose retry field is Options.StreamRetry, and runs on; its client
// resumes with Last-Event-ID and gets the answer there.
func TestReleasedStreamEndsAndTheAnswerIsResumed(t *testing.T) {
	t.Parallel()
	released, proceed := make(chan bool, 1), make(chan struct{})
	reg := providers.NewRegistry()
	if err := reg.Register(pollerSpec(released, proceed)); err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, func(o *Options) { o.StreamRetry = 2500 * time.Millisecond }, func(o *router.Options) { o.Registry = reg })
	e.conns.set(connections.Connection{ID: "con_p", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "poller", AccountLabel: "alice@poller", Status: connections.StatusActive})
	srv := httptest.NewServer(e.adapter)
	t.Cleanup(func() { testwait.CloseServer(t, srv) })
	t.Cleanup(func() {
		select {
		case <-proceed:
		default:
			close(proceed)
		}
	})
	h := &heldCallEnv{env: e, url: srv.URL + "/mcp/acme", version: "2025-11-25"}
	session := h.session(t)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound for the test
	defer cancel()
	resp, err := h.post(ctx, session, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"poller_wait","arguments":{}}}`, false)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("tools/call answered HTTP %d %q, want 200 text/event-stream", resp.StatusCode, ct)
	}
	if !testwait.Recv(t, released, "the call to release its stream") {
		t.Fatal("ReleaseStream reported no stream to release on a primed call of a session")
	}
	// The POST's stream ends while the call still waits: its one event is the priming event.
	br := bufio.NewReader(resp.Body)
	var events []sseEvent
	for {
		ev, err := readEvent(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read the released stream: %v (so far %+v)", err, events)
		}
		events = append(events, ev)
	}
	if len(events) != 1 || events[0].id == "" || events[0].data != "" {
		t.Fatalf("the released stream carried %+v, want the priming event alone", events)
	}
	if events[0].retry != "2500" {
		t.Errorf("the priming event's retry field is %q, want 2500 (Options.StreamRetry in ms)", events[0].retry)
	}

	type resumed struct {
		status int
		events []sseEvent
		err    error
	}
	got := make(chan resumed, 1)
	go func() {
		status, events, err := h.resumeStream(session, events[0].id)
		got <- resumed{status, events, err}
	}()
	close(proceed)
	r := testwait.Recv(t, got, "the resumed stream to end")
	if r.err != nil || r.status != http.StatusOK {
		t.Fatalf("resume: HTTP %d, %v", r.status, r.err)
	}
	answers := answersOf(t, r.events, "9")
	if len(answers) != 1 || !strings.Contains(string(answers[0]["result"]), "polled") {
		t.Fatalf("resumed answers for id 9: %v, want the call's result; events %+v", answers, r.events)
	}
}

// A call without a resumable stream (a client that reads no SSE) has nothing to
// release: ReleaseStream says so and the call answers as usual.
func TestReleaseWithoutAStreamChangesNothing(t *testing.T) {
	t.Parallel()
	released, proceed := make(chan bool, 1), make(chan struct{})
	close(proceed)
	reg := providers.NewRegistry()
	if err := reg.Register(pollerSpec(released, proceed)); err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, nil, func(o *router.Options) { o.Registry = reg })
	e.conns.set(connections.Connection{ID: "con_p", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "poller", AccountLabel: "alice@poller", Status: connections.StatusActive})
	srv := httptest.NewServer(e.adapter)
	t.Cleanup(func() { testwait.CloseServer(t, srv) })
	h := &heldCallEnv{env: e, url: srv.URL + "/mcp/acme", version: "2025-11-25"}
	session := h.session(t)
	req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"poller_wait","arguments":{}}}`))
	req.Header.Set("Authorization", "Bearer key-alice")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", h.protocolVersion())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if testwait.Recv(t, released, "the call to try to release its stream") {
		t.Error("ReleaseStream released the stream of a client that reads no SSE")
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "polled") {
		t.Fatalf("tools/call answered HTTP %d %s, want the call's result", resp.StatusCode, body)
	}
}
