package mcptransport

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/sessions"
)

// memoryLog is a StreamLog two stores (two nodes) share, as they share a database.
type memoryLog struct {
	mu      sync.Mutex
	streams map[string][]sessions.StreamEvent // by tenant, session and stream
}

func (m *memoryLog) Append(_ context.Context, tenant switchboard.TenantID, session, stream string, events []sessions.StreamEvent) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.streams == nil {
		m.streams = map[string][]sessions.StreamEvent{}
	}
	k := string(tenant) + "/" + session + "/" + stream
	m.streams[k] = append(m.streams[k], events...)
	return nil
}

func (m *memoryLog) After(_ context.Context, tenant switchboard.TenantID, session, id string) ([]sessions.StreamEvent, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, events := range m.streams {
		if !strings.HasPrefix(k, string(tenant)+"/"+session+"/") {
			continue
		}
		for i, ev := range events {
			if ev.ID == id {
				return append([]sessions.StreamEvent(nil), events[i+1:]...), true, nil
			}
		}
	}
	return nil, false, nil
}

func (m *memoryLog) Prune(context.Context, time.Time) error { return nil }

func (m *memoryLog) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, events := range m.streams {
		n += len(events)
	}
	return n
}

func sseMessages(stream string) []string {
	var out []string
	for _, line := range strings.Split(stream, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok && data != "" {
			out = append(out, data)
		}
	}
	return out
}

// A call whose client left before the answer is resumed on another node: its event
// ids are not the other node's, the events recorded after the client's Last-Event-ID
// are replayed there, and the answer, which came after the resumption began, follows.
func TestCallStreamResumesOnAnotherNodeOnceItsClientLeft(t *testing.T) {
	t.Parallel()
	log := &memoryLog{}
	nodeA, nodeB := NewEventStore(8, nil), NewEventStore(8, nil)
	for _, s := range []*EventStore{nodeA, nodeB} {
		s.Log, s.Tenant = log, "ten_1"
	}

	post := httptest.NewRecorder()
	conn, leave := context.WithCancel(context.Background())
	cs := nodeA.OpenCall("sess-1", post, true)
	cs.KeepWhenGone(conn)
	primed := primingID(t, post.Body.String())
	if !EventID(primed) || EventID("42") || EventID("ev_1; drop") {
		t.Errorf("EventID does not tell an issued id (%q) from others", primed)
	}
	if nodeB.Issued(primed) || !nodeA.Issued(primed) {
		t.Fatalf("event id %q is not told apart by the node that issued it", primed)
	}
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`
	if _, err := cs.Add("", json.RawMessage(progress)); err != nil {
		t.Fatal(err)
	}
	if log.count() != 0 {
		t.Fatalf("the log holds %d events of a call whose client is still there", log.count())
	}

	leave() // the client's connection ends before the answer
	testwait.Until(t, "the call's stream kept in the log", func() bool { return log.count() == 2 })

	get := httptest.NewRequest(http.MethodGet, "/mcp/ten_1", nil)
	resumed := httptest.NewRecorder()
	served := make(chan bool)
	go func() { served <- nodeB.ResumeLogged(resumed, get, "sess-1", primed) }()

	cw := NewCallWriter(false)
	answer := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}`
	cw.Header().Set("Content-Type", "application/json")
	_, _ = cw.Write([]byte(answer))
	cs.End(cw)

	if !testwait.Recv(t, served, "the resumption on node B to end") {
		t.Fatal("node B did not serve the resumption")
	}
	if ct := resumed.Header().Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q, want text/event-stream", ct)
	}
	if diff := cmp.Diff([]string{progress, answer}, sseMessages(resumed.Body.String())); diff != "" {
		t.Errorf("events node B replayed after the priming event (-want +got):\n%s", diff)
	}

	// Node A's own ids are its own: it resumes them from memory, not from the log.
	if nodeA.ResumeLogged(httptest.NewRecorder(), get, "sess-1", primed) {
		t.Error("node A served its own event id from the log")
	}
}

// A call whose client stays to the answer leaves nothing in the log.
func TestCallStreamWithItsClientKeepsNothingInTheLog(t *testing.T) {
	t.Parallel()
	log := &memoryLog{}
	s := NewEventStore(8, nil)
	s.Log, s.Tenant = log, "ten_1"
	conn, leave := context.WithCancel(context.Background())
	cs := s.OpenCall("sess-1", httptest.NewRecorder(), true)
	cs.KeepWhenGone(conn)
	cw := NewCallWriter(false)
	_, _ = cw.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	cs.End(cw)
	leave() // after the answer
	if n := log.count(); n != 0 {
		t.Errorf("the log holds %d events of a call answered to its client", n)
	}
}
