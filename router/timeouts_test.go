package router

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
)

type ticketIn struct {
	Title string `json:"title" jsonschema:"The ticket's title"`
}

type ticketOut struct {
	ID int `json:"id" jsonschema:"The ticket's number"`
}

// deskProvider has a read (GET /tickets/1) and a write that is not idempotent
// (POST /tickets), each asking its upstream once.
func deskProvider(deadlines providers.Deadlines) providers.Spec {
	op := func(name, method, path string, hints providers.Hints) providers.Op {
		return &providers.Operation[ticketIn, ticketOut]{
			Name: name, Title: name, Description: "A desk operation.", Hints: hints,
			Run: func(ctx context.Context, c *providers.Call, in ticketIn) (ticketOut, error) {
				body, _ := json.Marshal(in)
				req, _ := http.NewRequestWithContext(ctx, method, c.URL(path), bytes.NewReader(body))
				resp, err := c.HTTP.Do(req)
				if err != nil {
					return ticketOut{}, err
				}
				defer resp.Body.Close()
				var out ticketOut
				return out, json.NewDecoder(resp.Body).Decode(&out)
			},
		}
	}
	// fileTicketJSON is file_ticket through providers.JSONRequest, as the JSON providers send.
	fileTicketJSON := &providers.Operation[ticketIn, ticketOut]{
		Name: "file_ticket_json", Title: "file_ticket_json", Description: "A desk operation.",
		Run: func(ctx context.Context, c *providers.Call, in ticketIn) (out ticketOut, err error) {
			err = providers.JSONRequest{Provider: "desk", Title: "Desk", Method: http.MethodPost, Path: "/tickets", Body: in, MaxBytes: 1 << 20}.
				Do(ctx, c, &out, func(resp *http.Response) error { return providers.StatusError("desk", resp, "", "") })
			return out, err
		},
	}
	return providers.Spec{Name: "desk", Title: "Desk", Deadlines: deadlines,
		Verify: func(context.Context, *providers.Call) (providers.Account, error) { return providers.Account{}, nil },
		Operations: []providers.Op{
			op("read_ticket", http.MethodGet, "/tickets/1", providers.Hints{ReadOnly: true}),
			op("file_ticket", http.MethodPost, "/tickets", providers.Hints{}),
			fileTicketJSON,
		}}
}

// deskUpstream misbehaves as told: "reset" reads the request, then drops the
// connection without an answer; "hang" never answers; "ok" answers at once.
type deskUpstream struct {
	*httptest.Server
	mu   sync.Mutex
	got  []string
	mode string
}

func newDeskUpstream(t *testing.T, mode string) *deskUpstream {
	t.Helper()
	u := &deskUpstream{mode: mode}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in ticketIn
		_ = json.NewDecoder(r.Body).Decode(&in)
		u.mu.Lock()
		u.got = append(u.got, r.Method+" "+r.URL.Path+" "+in.Title)
		u.mu.Unlock()
		switch u.mode {
		case "reset":
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.(interface{ SetLinger(int) error }).SetLinger(0) // RST, as a broken proxy would
				_ = conn.Close()
			}
		case "hang":
			<-r.Context().Done()
		default:
			_ = json.NewEncoder(w).Encode(ticketOut{ID: 7})
		}
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *deskUpstream) requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.got...)
}

// deskRouter is a router over the desk provider at upstream, with its audit rows and
// log lines kept.
func deskRouter(t *testing.T, upstream string, spec, override providers.Deadlines) (*Router, *memAudit, *bytes.Buffer) {
	t.Helper()
	reg := providers.NewRegistry()
	if err := reg.Register(deskProvider(spec)); err != nil {
		t.Fatal(err)
	}
	_ = reg.SetBaseURL("desk", upstream)
	conns := &memConns{conns: map[string]connections.Connection{}, creds: map[string]connections.Credentials{}}
	conns.add(connections.Connection{ID: "con_a1", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "desk", AccountLabel: "desk", Status: connections.StatusActive}, "token")
	rec := &memAudit{}
	var logs bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return New(Options{Registry: reg, Connections: conns, Audit: rec, Logger: log, Deadlines: override}), rec, &logs
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestLostAnswers: a write sent in full whose answer was lost says the outcome is
// unknown and is not retried; a read is bounded by its read deadline; a write that
// never left says so and invites a retry.
func TestLostAnswers(t *testing.T) {
	t.Parallel()
	short := 50 * time.Millisecond
	tests := []struct {
		name      string
		mode      string
		tool      string
		spec      providers.Deadlines // the provider's
		override  providers.Deadlines // the deployment's
		down      bool                // the upstream is not listening
		wantCode  switchboard.Code
		wantMsg   string
		wantCalls int
	}{
		{name: "write reset after sending", mode: "reset", tool: "desk_file_ticket", wantCode: switchboard.CodeOutcomeUnknown,
			wantMsg: "sent; the outcome is unknown: check before retrying", wantCalls: 1},
		{name: "write past its deadline", mode: "hang", tool: "desk_file_ticket", spec: providers.Deadlines{Write: short}, wantCode: switchboard.CodeOutcomeUnknown,
			wantMsg: "sent; the outcome is unknown: check before retrying", wantCalls: 1},
		{name: "write past the deployment's deadline", mode: "hang", tool: "desk_file_ticket", spec: providers.Deadlines{Write: time.Hour}, override: providers.Deadlines{Write: short},
			wantCode: switchboard.CodeOutcomeUnknown, wantMsg: "did not answer within 50ms", wantCalls: 1},
		{name: "read past its read deadline", mode: "hang", tool: "desk_read_ticket", spec: providers.Deadlines{Read: short, Write: time.Hour}, wantCode: switchboard.CodeUpstream,
			wantMsg: "Desk did not answer within 50ms, so the call was stopped", wantCalls: 1},
		{name: "write never sent", down: true, tool: "desk_file_ticket", wantCode: switchboard.CodeUpstream, wantMsg: "retrying later may help"},
		// providers.JSONRequest says "could not be reached; try again" of any broken
		// connection: a write it sent in full must still say its outcome is unknown.
		{name: "JSON write reset after sending", mode: "reset", tool: "desk_file_ticket_json", wantCode: switchboard.CodeOutcomeUnknown,
			wantMsg: "sent; the outcome is unknown: check before retrying", wantCalls: 1},
		{name: "JSON write never sent", down: true, tool: "desk_file_ticket_json", wantCode: switchboard.CodeUpstream, wantMsg: "could not be reached; try again shortly"},
		{name: "JSON write answered", mode: "ok", tool: "desk_file_ticket_json", wantCalls: 1},
		{name: "write answered", mode: "ok", tool: "desk_file_ticket", wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newDeskUpstream(t, tt.mode)
			if tt.down {
				up.Close()
			}
			r, rec, _ := deskRouter(t, up.URL, tt.spec, tt.override)
			_, err := r.Execute(context.Background(), alice, Request{Tool: tt.tool, ConnectionID: "con_a1", Args: json.RawMessage(`{"title":"printer on fire"}`)})
			if got := switchboard.CodeOf(err); got != tt.wantCode {
				t.Fatalf("code = %q (%v), want %q", got, err, tt.wantCode)
			}
			if tt.wantMsg != "" && !strings.Contains(switchboard.AsError(err).Message, tt.wantMsg) {
				t.Errorf("message = %q, want it to say %q", switchboard.AsError(err).Message, tt.wantMsg)
			}
			if tt.wantCode == switchboard.CodeOutcomeUnknown && strings.Contains(switchboard.AsError(err).Message, "retrying later may help") {
				t.Errorf("an unknown outcome invites a retry: %q", switchboard.AsError(err).Message)
			}
			// A request sent before its deadline may reach the fake's handler after
			// Execute returned on a loaded machine: wait for it, then count.
			testwait.Until(t, fmt.Sprintf("the upstream to have %d requests", tt.wantCalls), func() bool { return len(up.requests()) >= tt.wantCalls })
			if got := len(up.requests()); got != tt.wantCalls {
				t.Errorf("upstream got %d requests %q, want %d (a write whose answer was lost is never sent again)", got, up.requests(), tt.wantCalls)
			}
			want := "ok"
			if tt.wantCode != "" {
				want = string(tt.wantCode)
			}
			if ev := rec.last(t); ev.Outcome != want {
				t.Errorf("audit outcome = %q, want %q", ev.Outcome, want)
			}
		})
	}
}

// TestCanceledCall: a call its caller cancels while the upstream works is audited as
// canceled and logged below ERROR.
func TestCanceledCall(t *testing.T) {
	t.Parallel()
	up := newDeskUpstream(t, "hang")
	r, rec, logs := deskRouter(t, up.URL, providers.Deadlines{}, providers.Deadlines{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := r.Execute(ctx, alice, Request{Tool: "desk_read_ticket", ConnectionID: "con_a1", Args: json.RawMessage(`{"title":"x"}`)})
		done <- err
	}()
	testwait.Until(t, "the call to reach the upstream", func() bool { return len(up.requests()) > 0 })
	cancel()
	err := testwait.Recv(t, done, "the canceled call to return")
	if got := switchboard.CodeOf(err); got != switchboard.CodeCanceled {
		t.Fatalf("code = %q (%v), want canceled", got, err)
	}
	if ev := rec.last(t); ev.Outcome != "canceled" {
		t.Errorf("audit outcome = %q, want canceled", ev.Outcome)
	}
	if strings.Contains(logs.String(), "level=ERROR") || strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("a cancellation was logged above INFO:\n%s", logs)
	}
}

// TestDrainWaitsForCallsUnderWay: Drain refuses new calls at once, with Retry-After,
// and returns only when the call under way has answered.
func TestDrainWaitsForCallsUnderWay(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	var once sync.Once
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-gate
		_ = json.NewEncoder(w).Encode(ticketOut{ID: 9})
	}))
	t.Cleanup(func() { once.Do(func() { close(gate) }); up.Close() })
	r, _, _ := deskRouter(t, up.URL, providers.Deadlines{}, providers.Deadlines{})
	answered := make(chan error, 1)
	go func() {
		_, err := r.Execute(context.Background(), alice, Request{Tool: "desk_read_ticket", ConnectionID: "con_a1", Args: json.RawMessage(`{"title":"x"}`)})
		answered <- err
	}()
	testwait.Until(t, "the call to be under way", func() bool { return r.active.Load() > 0 })
	drained := make(chan error, 1)
	go func() { drained <- r.Drain(context.Background()) }()
	testwait.Until(t, "the router to start draining", r.Draining)
	_, err := r.Execute(context.Background(), alice, Request{Tool: "desk_read_ticket", ConnectionID: "con_a1", Args: json.RawMessage(`{"title":"y"}`)})
	if e := switchboard.AsError(err); e.Code != switchboard.CodeUnavailable || e.RetryAfter <= 0 {
		t.Fatalf("a call during the drain: %v, want unavailable with Retry-After", err)
	}
	select {
	case err := <-drained:
		t.Fatalf("Drain returned (%v) while a call was under way", err)
	default:
	}
	once.Do(func() { close(gate) })
	if err := testwait.Recv(t, answered, "the call under way to answer"); err != nil {
		t.Errorf("the call under way: %v, want its answer", err)
	}
	if err := testwait.Recv(t, drained, "Drain to return"); err != nil {
		t.Errorf("Drain: %v", err)
	}

	// A drain that runs out of time says how many calls it left.
	r.active.Add(1) // a call that will not finish
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := r.Drain(ctx); err == nil || !strings.Contains(err.Error(), "1 tool calls still running") {
		t.Errorf("Drain past its time: %v, want the count of calls left", err)
	}
}

// TestDatabaseOutageIsUnavailable: a call that cannot read its connection because the
// database does not answer is told to retry (unavailable, Retry-After), not "internal
// error", and the log says so below ERROR.
func TestDatabaseOutageIsUnavailable(t *testing.T) {
	t.Parallel()
	up := newDeskUpstream(t, "ok")
	r, rec, logs := deskRouter(t, up.URL, providers.Deadlines{}, providers.Deadlines{})
	r.pool.conns = downConns{r.pool.conns.(*memConns)}
	_, err := r.Execute(context.Background(), alice, Request{Tool: "desk_read_ticket", ConnectionID: "con_a1", Args: json.RawMessage(`{"title":"x"}`)})
	e := switchboard.AsError(err)
	if e.Code != switchboard.CodeUnavailable || e.RetryAfter != switchboard.DatabaseRetry || !strings.Contains(e.Message, "retry in 5 s") {
		t.Fatalf("error = %v (retry after %v), want unavailable advising a retry in 5 s", err, e.RetryAfter)
	}
	if ev := rec.last(t); ev.Outcome != "unavailable" {
		t.Errorf("audit outcome = %q, want unavailable", ev.Outcome)
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a database outage was logged at ERROR:\n%s", logs)
	}
	if len(up.requests()) != 0 {
		t.Errorf("the upstream got %q", up.requests())
	}
}

// TestUnreachableUpstreamIsLoggedWithItsAddress: a call whose upstream refuses the
// connection answers that the provider could not be reached, and the log tells the
// operator where the hub dialled and what the network said.
func TestUnreachableUpstreamIsLoggedWithItsAddress(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there now
	r, _, logs := deskRouter(t, "http://"+addr, providers.Deadlines{}, providers.Deadlines{})
	_, err = r.Execute(context.Background(), alice, Request{Tool: "desk_read_ticket", ConnectionID: "con_a1", Args: json.RawMessage(`{"title":"x"}`)})
	if switchboard.CodeOf(err) != switchboard.CodeUpstream {
		t.Fatalf("answer = %v; want upstream", err)
	}
	if got := logs.String(); !strings.Contains(got, "upstream could not be reached") || !strings.Contains(got, "addr="+addr) || !strings.Contains(got, "connection refused") {
		t.Errorf("the log does not name the address and the refusal:\n%s", got)
	}
}
