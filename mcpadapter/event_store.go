package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// eventStore is a bounded, in-memory server.EventStore for one scope's streams. With
// an event store, mcp-go records every server-to-client message before the response
// of its request ends, so a notification sent just before a tool returns (progress,
// log lines) is never dropped, and a client that lost its SSE stream resumes it with
// Last-Event-ID. Memory stays bounded: each stream keeps only its newest perStream
// events, and a session's events go when the session ends (PurgeSession) or, at the
// latest, with the scope; a session keeps at most streamsPerSession streams, and a
// stream nothing was recorded on for streamTTL goes.
//
// A POST primed for resumption (primePost) starts its stream with an event of no
// message whose id the client holds before anything else is sent; the stream mcp-go
// records the call's messages on (or the answer primePost records itself) continues
// after it, so Last-Event-ID of the priming event replays the call's answer.
type eventStore struct {
	perStream int
	now       func() time.Time

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
	last   time.Time // when an event was last recorded
	primer *primer   // the POST that primed the stream, if one did
}

type storedEvent struct {
	id  string
	msg json.RawMessage // nil for a priming event, which is never replayed
}

// primer is a primed POST's first event: stream is where its events are kept, the
// primer's own until mcp-go records the first message on a stream of its own.
type primer struct {
	session string
	id      string
	stream  string // guarded by the store's mu
	bound   bool   // stream is mcp-go's; guarded by the store's mu
	ready   chan struct{}
	settle  func() // closes ready: a message was recorded, or the POST ended
	// canceled is set by notifications/cancelled: nothing more is recorded for the
	// call, so no answer is replayed after its cancellation either.
	canceled atomic.Bool
}

// errCanceledCall refuses to record a message of a canceled call.
var errCanceledCall = errors.New("the call was canceled: nothing more is recorded for it")

type primerKey struct{}

func withPrimer(ctx context.Context, p *primer) context.Context {
	return context.WithValue(ctx, primerKey{}, p)
}

func primerFrom(ctx context.Context) *primer {
	p, _ := ctx.Value(primerKey{}).(*primer)
	return p
}

var _ server.EventStore = (*eventStore)(nil)

func newEventStore(perStream int, now func() time.Time) *eventStore {
	if now == nil {
		now = time.Now
	}
	return &eventStore{perStream: perStream, now: now, sessions: map[string]*sessionEvents{}}
}

// prime starts a stream of the session with a priming event and returns it; settle
// it when the POST ends.
func (s *eventStore) prime(sessionID string) *primer {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	id := strconv.FormatInt(s.seq, 10)
	p := &primer{session: sessionID, id: id, stream: "primed-" + id, ready: make(chan struct{})}
	p.settle = sync.OnceFunc(func() { close(p.ready) })
	s.appendLocked(sessionID, p.stream, storedEvent{id: id})
	s.sessions[sessionID].streams[p.stream].primer = p
	return p
}

// awaitPrimed waits while lastEventID is the priming event of a POST still running
// that has recorded nothing since, so that a client resuming at once is replayed the
// answer instead of an empty stream; it returns when ctx ends at the latest.
func (s *eventStore) awaitPrimed(ctx context.Context, sessionID, lastEventID string) {
	s.mu.Lock()
	var p *primer
	if se := s.sessions[sessionID]; se != nil {
		if st := se.streams[se.where[lastEventID]]; st != nil && st.primer != nil && st.primer.id == lastEventID {
			p = st.primer
		}
	}
	s.mu.Unlock()
	if p == nil {
		return
	}
	select {
	case <-p.ready:
	case <-ctx.Done():
	}
}

// StoreEvent records message as the next event of the stream, dropping the stream's
// oldest event beyond the bound. The first message of a primed POST's stream (ctx
// carries its primer) continues the primer's stream.
func (s *eventStore) StoreEvent(ctx context.Context, sessionID, streamID string, message json.RawMessage) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := primerFrom(ctx); p != nil && p.session == sessionID {
		if p.canceled.Load() {
			return "", errCanceledCall
		}
		if se := s.sessions[sessionID]; se != nil && !p.bound && streamID != p.stream {
			if st := se.streams[p.stream]; st != nil {
				delete(se.streams, p.stream)
				se.streams[streamID] = st
				for _, ev := range st.events {
					se.where[ev.id] = streamID
				}
			}
			p.stream, p.bound = streamID, true
		}
		defer p.settle()
	}
	s.seq++
	id := strconv.FormatInt(s.seq, 10)
	s.appendLocked(sessionID, streamID, storedEvent{id: id, msg: append(json.RawMessage(nil), message...)})
	return id, nil
}

// appendLocked records ev on the stream, keeping the bounds: the stream's newest
// perStream events, the session's streamsPerSession most recently written streams,
// none idle for streamTTL.
func (s *eventStore) appendLocked(sessionID, streamID string, ev storedEvent) {
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
		for _, st := range se.streams {
			n += len(st.events)
		}
	}
	return n
}
