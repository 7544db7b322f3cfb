package mcpadapter

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/router"
)

// trapBody is a request body of size bytes, a tools/call padded with spaces, that
// counts the bytes read of it.
type trapBody struct {
	size int
	read atomic.Int64
}

func (b *trapBody) Read(p []byte) (int, error) {
	const msg = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notes_last_note","arguments":{}}}`
	at := int(b.read.Load())
	if at >= b.size {
		return 0, io.EOF
	}
	n := min(len(p), b.size-at)
	for i := range n {
		if at+i < len(msg) {
			p[i] = msg[at+i]
		} else {
			p[i] = ' '
		}
	}
	b.read.Add(int64(n))
	return n, nil
}

func (b *trapBody) Close() error { return nil }

// refusals records the admission's refusals.
type refusals struct {
	mu   sync.Mutex
	seen []string
}

func (r *refusals) Refused(scope, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, scope+"/"+reason)
}

func (r *refusals) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// admissionEnv is the test hub with one place node-wide and one waiting call per
// tenant, shared by the adapter and the router as serve wires them.
func admissionEnv(t *testing.T) (*env, *limits.Admission, *refusals) {
	t.Helper()
	rec := &refusals{}
	adm := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 1, TenantQueue: 1, MaxWait: time.Hour, Refused: rec.Refused})
	e := newEnvWith(t, func(o *Options) { o.Admission = adm }, func(o *router.Options) { o.Admission = adm })
	return e, adm, rec
}

// fillTenant takes the node's one place for the tenant and queues one more of its calls
// behind it, so the tenant is at its bound. release gives the place back; the queued
// call then takes a place and gives it straight back.
func fillTenant(t *testing.T, adm *limits.Admission, tenant switchboard.TenantID) (release func()) {
	t.Helper()
	held, err := adm.Admit(context.Background(), tenant)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	queued := make(chan struct{})
	go func() {
		defer close(queued)
		if s, err := adm.Admit(ctx, tenant); err == nil {
			s.Release()
		}
	}()
	t.Cleanup(func() { cancel(); held.Release(); testwait.Recv(t, queued, "the queued call to end") })
	testwait.Until(t, "the tenant's second call to queue", func() bool { return adm.Waiting() == 1 })
	return held.Release
}

// A request over its tenant's bound is refused before more than a small prefix of its
// body is read: a body declared larger is not read at all, one of unknown length is
// read up to refusalPeek and no further. Each gets 429 with Retry-After and a sentence
// saying nothing ran, and each refusal is counted.
func TestRefusedRequestIsNeverRead(t *testing.T) {
	t.Parallel()
	e, adm, rec := admissionEnv(t)
	fillTenant(t, adm, alice.TenantID)

	for _, c := range []struct {
		name          string
		contentLength int64
		maxRead       int64
	}{
		{"declared 1 MiB", 1 << 20, 0},
		{"unknown length", -1, refusalPeek + 1},
	} {
		body := &trapBody{size: 1 << 20}
		req := httptest.NewRequest(http.MethodPost, "/mcp/acme", body)
		req.ContentLength = c.contentLength
		req.Header.Set("Authorization", "Bearer key-alice")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", "mcs_whatever")
		w := httptest.NewRecorder()
		e.adapter.ServeHTTP(w, req)

		if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" {
			t.Fatalf("%s: refusal = %d, Retry-After %q: %s; want 429 with Retry-After 1", c.name, w.Code, w.Header().Get("Retry-After"), w.Body)
		}
		if !strings.Contains(w.Body.String(), "nothing was run; retry in 1 s") {
			t.Errorf("%s: refusal body = %s; want it to say nothing ran and when to retry", c.name, w.Body)
		}
		if n := body.read.Load(); n > c.maxRead {
			t.Errorf("%s: %d bytes of the refused request's body were read; want at most %d", c.name, n, c.maxRead)
		}
	}
	if got := rec.list(); len(got) != 2 || got[0] != "tenant/queue_full" || got[1] != "tenant/queue_full" {
		t.Errorf("refusals counted = %v; want tenant/queue_full twice", got)
	}
}

// While one tenant is at its bound and refused at the door, another tenant's call
// waits its turn and is answered, over real HTTP: the place its request took at the
// door is the one its tool call runs in (the router does not queue it again).
func TestQuietTenantAnsweredBesideARefusedOne(t *testing.T) {
	t.Parallel()
	e, adm, _ := admissionEnv(t)
	quiet, err := e.client(t, "beta", "key-bob")
	if err != nil {
		t.Fatal(err)
	}
	release := fillTenant(t, adm, alice.TenantID)

	answered := make(chan *mcp.CallToolResult, 1)
	failed := make(chan error, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "notes_create_note"
		req.Params.Arguments = map[string]any{"text": "quiet"}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := quiet.CallTool(ctx, req)
		if err != nil {
			failed <- err
			return
		}
		answered <- res
	}()
	testwait.Until(t, "the quiet tenant's call to queue beside the noisy one's", func() bool { return adm.Waiting() == 2 })

	code, _, body := postAs(t, e, "key-alice", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"notes_last_note","arguments":{}}}`, nil)
	if code != http.StatusOK || !strings.Contains(body, `"id":5`) || !strings.Contains(body, `"isError":true`) || !strings.Contains(body, "retry in 1 s") {
		t.Fatalf("noisy tenant's request = %d %s; want its tool error saying when to retry", code, body)
	}

	release()
	select {
	case res := <-answered:
		if res.IsError || !strings.Contains(text(res), "quiet") {
			t.Fatalf("quiet tenant's call = %s; want the note", text(res))
		}
	case err := <-failed:
		t.Fatalf("quiet tenant's call failed: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("after 30 s the quiet tenant's call is still unanswered")
	}
	select {
	case r := <-e.seen:
		if r.Header.Get("Authorization") != "Bearer tok-con_b" {
			t.Errorf("upstream got %q; want the quiet tenant's connection", r.Header.Get("Authorization"))
		}
	default:
		t.Error("the upstream never got the quiet tenant's call")
	}
}
