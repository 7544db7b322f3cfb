package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/server"
)

func TestEventStoreReplaysBoundsAndPurges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newEventStore(3)
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
