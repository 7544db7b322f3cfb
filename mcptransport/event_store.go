package mcptransport

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
)

// EventStore is a bounded, in-memory server.EventStore for one scope's streams. With
// an event store, mcp-go records every server-to-client message before the response
// of its request ends, so a notification sent just before a tool returns (progress,
// log lines) is never dropped, and a client that lost its SSE stream resumes it with
// Last-Event-ID. Memory stays bounded: each stream keeps only its newest perStream
// events, and a session's events go when the session ends (PurgeSession) or, at the
// latest, with the scope; a session keeps at most streamsPerSession streams, and a
// stream nothing was recorded on for streamTTL goes.
//
// A tools/call's stream (CallStream) is kept here too: its events, its own and
// mcp-go's, are recorded on one stream, and Last-Event-ID of any of them (the priming
// event's included) resumes it.
type EventStore struct {
	perStream int
	now       func() time.Time
	// IDs renumbers the server's requests recorded on a call's stream.
	IDs RequestIDs
	// Notified, when set, is told of every notification mcp-go records for a session:
	// mcp-go answers a session's requests as SSE from its first notification on.
	Notified func(session string)

	// Log, when set, keeps a call's stream where every node reads it once the call's
	// client is gone (CallStream.KeepWhenGone), so that Last-Event-ID resumes it on any
	// node (ResumeLogged); Tenant is the scope's tenant, which every record names.
	Log    StreamLog
	Tenant switchboard.TenantID
	Logger *slog.Logger

	// Retry is the reconnection time a call's priming event gives its client (the SSE
	// retry field): how long a client whose stream ends before the answer waits before
	// it resumes the stream. Zero sends DefaultRetry.
	Retry time.Duration

	// prefix starts every event id and call stream name this store issues: random,
	// so that ids are unique across the fleet and a node tells another's from its own.
	prefix string
	calls  atomic.Int64 // names the calls' own streams

	mu       sync.Mutex
	seq      int64
	sessions map[string]*sessionEvents
}

const (
	// streamsPerSession bounds the streams (one per POST answered as SSE, and the
	// GET stream) a session keeps for resumption; the least recently written go first.
	streamsPerSession = 64
	// streamTTL is how long a stream nothing was recorded on stays resumable.
	streamTTL = 10 * time.Minute
)

type sessionEvents struct {
	streams map[string]*storedStream
	// where maps an event id to its stream; ids of dropped events are removed.
	where map[string]string
}

type storedStream struct {
	events []storedEvent
	last   time.Time   // when an event was last recorded
	call   *CallStream // the tools/call whose stream it is, if one
}

type storedEvent struct {
	id  string
	msg json.RawMessage // nil for a priming event, which is never replayed
}

var _ server.EventStore = (*EventStore)(nil)

// DefaultRetry is the reconnection time a priming event gives when EventStore.Retry is
// not set.
const DefaultRetry = time.Second

func NewEventStore(perStream int, now func() time.Time) *EventStore {
	if now == nil {
		now = time.Now
	}
	return &EventStore{perStream: perStream, now: now, sessions: map[string]*sessionEvents{}, prefix: "ev" + switchboard.RandomToken(6) + "_"}
}

// StoreEvent records message as the next event of the stream, dropping the stream's
// oldest event beyond the bound. A message of a tools/call the hub streams (ctx
// carries its CallStream) goes on the call's stream, and is written there.
func (s *EventStore) StoreEvent(ctx context.Context, sessionID, streamID string, message json.RawMessage) (string, error) {
	if s.Notified != nil && IsNotification(message) {
		s.Notified(sessionID)
	}
	if cs := CallStreamFrom(ctx); cs != nil && cs.store == s && cs.session == sessionID {
		return cs.Add(streamID, s.IDs.Outgoing(message)) // the hub writes it: renumbered here
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	id := s.prefix + strconv.FormatInt(s.seq, 10)
	// mcp-go writes it, and replays it, through RequestIDs.Writer: recorded as it is.
	s.appendLocked(sessionID, streamID, storedEvent{id: id, msg: append(json.RawMessage(nil), message...)})
	return id, nil
}

// addCall records msg (nil: a priming event) as the next event of the call's stream,
// which continues on stream (mcp-go's, "" when the hub records) from then on, and
// returns its id.
func (s *EventStore) addCall(cs *CallStream, stream string, msg json.RawMessage) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stream != "" && stream != cs.stream && !cs.bound {
		if se := s.sessions[cs.session]; se != nil {
			if st := se.streams[cs.stream]; st != nil {
				delete(se.streams, cs.stream)
				se.streams[stream] = st
				for _, ev := range st.events {
					se.where[ev.id] = stream
				}
			}
		}
		cs.stream = stream
	}
	if stream != "" {
		cs.bound = true
	}
	s.seq++
	id := s.prefix + strconv.FormatInt(s.seq, 10)
	if msg != nil {
		msg = append(json.RawMessage(nil), msg...)
	}
	s.appendLocked(cs.session, cs.stream, storedEvent{id: id, msg: msg})
	s.sessions[cs.session].streams[cs.stream].call = cs
	return id
}

// callOf returns the call whose stream holds the session's event lastEventID, if one.
func (s *EventStore) CallOf(sessionID, lastEventID string) *CallStream {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.sessions[sessionID]
	if se == nil {
		return nil
	}
	if st := se.streams[se.where[lastEventID]]; st != nil {
		return st.call
	}
	return nil
}

// Issued reports whether id is one of this store's event ids.
func (s *EventStore) Issued(id string) bool { return strings.HasPrefix(id, s.prefix) }

// eventIDShape is the shape of every event id a store issues: its prefix, then a
// sequence number.
var eventIDShape = regexp.MustCompile(`^ev[0-9a-z]{1,32}_[0-9]{1,19}$`)

// EventID reports whether id has the shape of an event id some node issued.
func EventID(id string) bool { return eventIDShape.MatchString(id) }

// callEvents returns the events of the call's stream this store still holds.
func (s *EventStore) callEvents(cs *CallStream) []storedEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.sessions[cs.session]
	if se == nil || se.streams[cs.stream] == nil {
		return nil
	}
	return append([]storedEvent(nil), se.streams[cs.stream].events...)
}

// eventsAfter returns the events that followed lastEventID on its stream.
func (s *EventStore) eventsAfter(sessionID, lastEventID string) []storedEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.sessions[sessionID]
	if se == nil {
		return nil
	}
	st := se.streams[se.where[lastEventID]]
	if st == nil {
		return nil
	}
	for i, ev := range st.events {
		if ev.id == lastEventID {
			return append([]storedEvent(nil), st.events[i+1:]...)
		}
	}
	return nil
}

// appendLocked records ev on the stream, keeping the bounds: the stream's newest
// perStream events, the session's streamsPerSession most recently written streams,
// none idle for streamTTL.
func (s *EventStore) appendLocked(sessionID, streamID string, ev storedEvent) {
	now := s.now()
	se := s.sessions[sessionID]
	if se == nil {
		se = &sessionEvents{streams: map[string]*storedStream{}, where: map[string]string{}}
		s.sessions[sessionID] = se
	}
	st := se.streams[streamID]
	if st == nil {
		st = &storedStream{}
		se.streams[streamID] = st
	}
	st.events = append(st.events, ev)
	st.last = now
	if len(st.events) > s.perStream {
		for _, old := range st.events[:len(st.events)-s.perStream] {
			delete(se.where, old.id)
		}
		st.events = append([]storedEvent(nil), st.events[len(st.events)-s.perStream:]...)
	}
	se.where[ev.id] = streamID
	for id, other := range se.streams {
		if now.Sub(other.last) > streamTTL {
			se.drop(id)
		}
	}
	for len(se.streams) > streamsPerSession {
		oldest := ""
		for id, other := range se.streams {
			if oldest == "" || other.last.Before(se.streams[oldest].last) {
				oldest = id
			}
		}
		se.drop(oldest)
	}
}

func (se *sessionEvents) drop(streamID string) {
	for _, ev := range se.streams[streamID].events {
		delete(se.where, ev.id)
	}
	delete(se.streams, streamID)
}

// ReplayEventsAfter sends the events of lastEventID's stream that followed it; an id
// never issued, or dropped by the bound, is server.ErrUnknownEventID.
func (s *EventStore) ReplayEventsAfter(_ context.Context, sessionID, lastEventID string, send func(eventID string, message json.RawMessage) error) (string, error) {
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
	events := se.streams[streamID].events
	for i, ev := range events {
		if ev.id == lastEventID {
			tail = append(tail, events[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
	for _, ev := range tail {
		if ev.msg == nil {
			continue // a priming event
		}
		if err := send(ev.id, ev.msg); err != nil {
			return "", err
		}
	}
	return streamID, nil
}

// PurgeSession forgets a session's events.
func (s *EventStore) PurgeSession(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, sessionID)
	return nil
}

// size is the number of events held, for tests.
func (s *EventStore) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, se := range s.sessions {
		for _, st := range se.streams {
			n += len(st.events)
		}
	}
	return n
}
