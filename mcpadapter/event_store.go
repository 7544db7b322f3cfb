package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// eventStore is a bounded, in-memory server.EventStore for one scope's streams. With
// an event store, mcp-go records every server-to-client message before the response
// of its request ends, so a notification sent just before a tool returns (progress,
// log lines) is never dropped, and a client that lost its SSE stream resumes it with
// Last-Event-ID. Memory stays bounded: each stream keeps only its newest perStream
// events, and a session's events go when the session ends (PurgeSession) or, at the
// latest, with the scope.
type eventStore struct {
	perStream int

	mu       sync.Mutex
	seq      int64
	sessions map[string]*sessionEvents
}

type sessionEvents struct {
	streams map[string][]storedEvent
	// where maps an event id to its stream; ids of dropped events are removed.
	where map[string]string
}

type storedEvent struct {
	id  string
	msg json.RawMessage
}

var _ server.EventStore = (*eventStore)(nil)

func newEventStore(perStream int) *eventStore {
	return &eventStore{perStream: perStream, sessions: map[string]*sessionEvents{}}
}

// StoreEvent records message as the next event of the stream, dropping the stream's
// oldest event beyond the bound.
func (s *eventStore) StoreEvent(_ context.Context, sessionID, streamID string, message json.RawMessage) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.sessions[sessionID]
	if se == nil {
		se = &sessionEvents{streams: map[string][]storedEvent{}, where: map[string]string{}}
		s.sessions[sessionID] = se
	}
	s.seq++
	id := strconv.FormatInt(s.seq, 10)
	events := append(se.streams[streamID], storedEvent{id: id, msg: append(json.RawMessage(nil), message...)})
	if len(events) > s.perStream {
		for _, old := range events[:len(events)-s.perStream] {
			delete(se.where, old.id)
		}
		events = append([]storedEvent(nil), events[len(events)-s.perStream:]...)
	}
	se.streams[streamID] = events
	se.where[id] = streamID
	return id, nil
}

// ReplayEventsAfter sends the events of lastEventID's stream that followed it; an id
// never issued, or dropped by the bound, is server.ErrUnknownEventID.
func (s *eventStore) ReplayEventsAfter(_ context.Context, sessionID, lastEventID string, send func(eventID string, message json.RawMessage) error) (string, error) {
	s.mu.Lock()
	se := s.sessions[sessionID]
	var streamID string
	var tail []storedEvent
	if se != nil {
		streamID = se.where[lastEventID]
	}
	if streamID == "" {
		s.mu.Unlock()
		return "", fmt.Errorf("%w: %s", server.ErrUnknownEventID, lastEventID)
	}
	events := se.streams[streamID]
	for i, ev := range events {
		if ev.id == lastEventID {
			tail = append(tail, events[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
	for _, ev := range tail {
		if err := send(ev.id, ev.msg); err != nil {
			return "", err
		}
	}
	return streamID, nil
}

// PurgeSession forgets a session's events.
func (s *eventStore) PurgeSession(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, sessionID)
	return nil
}

// size is the number of events held, for tests.
func (s *eventStore) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, se := range s.sessions {
		for _, events := range se.streams {
			n += len(events)
		}
	}
	return n
}
