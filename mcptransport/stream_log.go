package mcptransport

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/sessions"
)

// A call's stream lives in the memory of the node that runs the call. When the call's
// client goes away before the answer, the node keeps the stream in a StreamLog too
// (CallStream.KeepWhenGone), which every node reads: a client that reconnects with
// Last-Event-ID through a balancer that sends it to another node, or after the call's
// node died, is replayed the events that followed that id there, and the call's answer
// when it comes (EventStore.ResumeLogged).

// StreamLog keeps calls' streams where every node of the fleet reads them: the
// sessions package's StreamLog on the hub's database. It bounds what it keeps.
type StreamLog interface {
	// Append records events of a call's stream (named stream, of the tenant's session),
	// in order.
	Append(ctx context.Context, tenant switchboard.TenantID, session, stream string, events []sessions.StreamEvent) error
	// After returns the events of the stream holding lastEventID that followed it, in
	// order; found is false when no stream of the session holds lastEventID.
	After(ctx context.Context, tenant switchboard.TenantID, session, lastEventID string) (events []sessions.StreamEvent, found bool, err error)
	// Prune forgets what was kept longer than the log keeps anything, at now.
	Prune(ctx context.Context, now time.Time) error
}

const (
	// logWait is how long a resumption of another node's event id waits for it to reach
	// the log: the node running the call keeps its stream there once it sees the client
	// leave, which may be just after the client came back here.
	logWait = 10 * time.Second
	// logPoll is how often a resumption from the log looks for the call's next events.
	logPoll = 200 * time.Millisecond
	// logWrite bounds one write to the log.
	logWrite = 10 * time.Second
)

// logEvents appends events of the call's stream to the log; a failure loses only the
// resumption on another node, and is logged.
func (s *EventStore) logEvents(cs *CallStream, events []sessions.StreamEvent) {
	if len(events) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), logWrite)
	defer cancel()
	if err := s.Log.Append(ctx, s.Tenant, cs.session, cs.key, events); err != nil && s.Logger != nil {
		s.Logger.Warn("keep a call's stream for its resumption on another node", "tenant", s.Tenant, "err", err)
	}
}

// ResumeLogged serves a GET that resumes, after lastEventID, a call's stream another
// node kept in the log: the events that followed it, then the call's next ones as they
// reach the log, until the stream's end or the client's departure. It reports false,
// having written nothing, when lastEventID is this store's own, is no event id, or no
// logged stream of the session holds it.
func (s *EventStore) ResumeLogged(w http.ResponseWriter, r *http.Request, session, lastEventID string) bool {
	if s.Log == nil || s.Issued(lastEventID) || !EventID(lastEventID) {
		return false
	}
	ctx := r.Context()
	poll := time.NewTicker(logPoll)
	defer poll.Stop()
	events, found, err := s.Log.After(ctx, s.Tenant, session, lastEventID)
	for wait := time.Now().Add(logWait); err == nil && !found && time.Now().Before(wait); {
		select {
		case <-ctx.Done():
			return true
		case <-poll.C:
		}
		events, found, err = s.Log.After(ctx, s.Tenant, session, lastEventID)
	}
	if err != nil && s.Logger != nil {
		s.Logger.Warn("read a call's stream kept for its resumption", "tenant", s.Tenant, "err", err)
	}
	if err != nil || !found {
		return false
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	flush()
	last := lastEventID
	for {
		for _, ev := range events {
			if ev.Last {
				return true
			}
			last = ev.ID
			if ev.Message == nil {
				continue
			}
			if _, err := fmt.Fprintf(w, "id: %s\nevent: message\ndata: %s\n\n", ev.ID, ev.Message); err != nil {
				return true
			}
			flush()
		}
		select {
		case <-ctx.Done():
			return true
		case <-poll.C:
		}
		// A stream the log no longer holds (its bound, its age) ends here; the client
		// may resume it again from its last event.
		if events, found, err = s.Log.After(ctx, s.Tenant, session, last); err != nil || !found {
			return true
		}
	}
}
