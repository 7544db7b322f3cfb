package mcptransport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/server"
)

func TestEventStoreReplaysBoundsAndPurges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := NewEventStore(3, nil)
	var ids []string
	for i := range 5 {
		id, err := s.StoreEvent(ctx, "sess-1", "stream-a", json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if _, err := s.StoreEvent(ctx, "sess-1", "stream-b", json.RawMessage(`{"other":true}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StoreEvent(ctx, "sess-2", "stream-a", json.RawMessage(`{"n":0}`)); err != nil {
		t.Fatal(err)
	}
	if got := s.size(); got != 3+1+1 {
		t.Errorf("events held = %d, want 5 (three of stream-a, the bound)", got)
	}

	replay := func(session, after string) (string, []string, error) {
		var got []string
		stream, err := s.ReplayEventsAfter(ctx, session, after, func(_ string, m json.RawMessage) error {
			got = append(got, string(m))
			return nil
		})
		return stream, got, err
	}
	stream, got, err := replay("sess-1", ids[2])
	if err != nil {
		t.Fatal(err)
	}
	if stream != "stream-a" {
		t.Errorf("stream = %q, want stream-a", stream)
	}
	if diff := cmp.Diff([]string{`{"n":3}`, `{"n":4}`}, got); diff != "" {
		t.Errorf("replay after the third event (-want +got):\n%s", diff)
	}
	tests := []struct {
		name    string
		session string
		after   string
	}{
		{name: "an id dropped by the bound", session: "sess-1", after: ids[0]},
		{name: "another session's id", session: "sess-2", after: ids[3]},
		{name: "an id never issued", session: "sess-1", after: "999"},
	}
	for _, tt := range tests {
		if _, _, err := replay(tt.session, tt.after); !errors.Is(err, server.ErrUnknownEventID) {
			t.Errorf("%s: err = %v, want ErrUnknownEventID", tt.name, err)
		}
	}
	if err := s.PurgeSession(ctx, "sess-1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := replay("sess-1", ids[4]); !errors.Is(err, server.ErrUnknownEventID) {
		t.Errorf("after purge: err = %v, want ErrUnknownEventID", err)
	}
	if got := s.size(); got != 1 {
		t.Errorf("events held after purging sess-1 = %d, want 1", got)
	}
}

// A primed call's stream continues on the stream mcp-go records the POST's messages
// on: Last-Event-ID of the priming event replays them (never the priming event
// itself), whoever recorded them, in the order they were written to the POST.
func TestEventStorePrimedStreamContinuesOnTheCallsStream(t *testing.T) {
	t.Parallel()
	s := NewEventStore(8, nil)
	post := httptest.NewRecorder()
	cs := s.OpenCall("sess-1", post, true)
	ctx := WithCallStream(context.Background(), cs)
	if _, err := cs.Add("", json.RawMessage(`{"progress":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StoreEvent(ctx, "sess-1", "mcp-stream", json.RawMessage(`{"answer":1}`)); err != nil {
		t.Fatal(err)
	}
	primed := primingID(t, post.Body.String())
	if s.CallOf("sess-1", primed) != cs {
		t.Error("the priming event's id does not name the call's stream")
	}
	var got []string
	stream, err := s.ReplayEventsAfter(context.Background(), "sess-1", primed, func(_ string, m json.RawMessage) error {
		got = append(got, string(m))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if stream != "mcp-stream" {
		t.Errorf("stream = %q, want mcp-stream (one stream for the call)", stream)
	}
	want := []string{`{"progress":1}`, `{"answer":1}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replay after the priming event (-want +got):\n%s", diff)
	}
	var written []string
	for _, line := range strings.Split(post.Body.String(), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok && data != "" {
			written = append(written, data)
		}
	}
	if diff := cmp.Diff(want, written); diff != "" {
		t.Errorf("events written to the POST (-want +got):\n%s", diff)
	}
}

// A session keeps its streamsPerSession most recently written streams, and none that
// nothing was recorded on for streamTTL.
func TestEventStoreBoundsStreamsPerSessionAndExpires(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	s := NewEventStore(8, func() time.Time { return now })
	known := func(id string) bool {
		_, err := s.ReplayEventsAfter(ctx, "sess-1", id, func(string, json.RawMessage) error { return nil })
		return err == nil
	}
	var ids []string
	for i := range streamsPerSession + 1 {
		now = now.Add(time.Second)
		id, err := s.StoreEvent(ctx, "sess-1", fmt.Sprintf("stream-%d", i), json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if known(ids[0]) {
		t.Errorf("the least recently written stream is still held past %d streams", streamsPerSession)
	}
	if !known(ids[1]) || !known(ids[streamsPerSession]) {
		t.Errorf("the %d newest streams are not all held", streamsPerSession)
	}
	now = now.Add(streamTTL + time.Second)
	if _, err := s.StoreEvent(ctx, "sess-1", "fresh", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if known(ids[streamsPerSession]) {
		t.Errorf("a stream idle for more than %v is still held", streamTTL)
	}
	if got := s.size(); got != 1 {
		t.Errorf("events held = %d, want 1 (the fresh stream's)", got)
	}
}

// Nothing of a canceled call is recorded, so a resumption replays no answer after
// notifications/cancelled.
func TestEventStoreRecordsNothingOfACanceledCall(t *testing.T) {
	t.Parallel()
	s := NewEventStore(8, nil)
	post := httptest.NewRecorder()
	cs := s.OpenCall("sess-1", post, true)
	cs.canceled.Store(true)
	if _, err := s.StoreEvent(WithCallStream(context.Background(), cs), "sess-1", "mcp-stream", json.RawMessage(`{"answer":1}`)); !errors.Is(err, ErrCanceledCall) {
		t.Errorf("StoreEvent of a canceled call: err = %v, want ErrCanceledCall", err)
	}
	var got []string
	if _, err := s.ReplayEventsAfter(context.Background(), "sess-1", primingID(t, post.Body.String()), func(_ string, m json.RawMessage) error {
		got = append(got, string(m))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("replayed %v after the cancellation, want nothing", got)
	}
}

// primingID is the id of the priming event that starts an SSE stream.
func primingID(t *testing.T, stream string) string {
	t.Helper()
	id, ok := strings.CutPrefix(strings.SplitN(stream, "\n", 2)[0], "id: ")
	if !ok {
		t.Fatalf("the stream does not start with a priming event: %q", stream)
	}
	return id
}
