package mcpadapter

import (
	"context"
	"encoding/json"

	"github.com/switchboard-hub/switchboard/mcptransport"
)

// relayed acts on a message from another node.
func (a *Adapter) relayed(m mcptransport.RelayMessage) {
	if m.Node == a.node {
		return
	}
	switch m.Kind {
	case mcptransport.RelayGap:
		a.records.StaleAll()
	case mcptransport.RelaySessionEnded:
		a.records.Forget(m.Tenant, m.Session)
	case mcptransport.RelayCancel:
		if mcptransport.ValidID(m.Body) {
			a.modern.Cancel(mcptransport.CallKey(m.Principal, m.AgentID, m.Body))
		}
	case mcptransport.RelayTaskInput:
		if x := a.modernTasks(); x != nil {
			x.relayedInputs(m)
		}
	case mcptransport.RelayKeepStream:
		var last string
		if json.Unmarshal(m.Body, &last) != nil {
			return
		}
		a.mu.Lock()
		s := a.scopes[string(m.Tenant)+"|"+m.Principal+"|"+m.AgentID]
		a.mu.Unlock()
		if s == nil || !s.ep.Events.Issued(last) {
			return
		}
		if cs := s.ep.Events.CallOf(m.Session, last); cs != nil {
			go cs.Keep() // a write to the database, off the feed's goroutine
		}
	case mcptransport.RelayPost:
		// What the message changes (a log level) is read again from the record.
		a.records.Stale(m.Session)
		a.mu.Lock()
		s := a.scopes[string(m.Tenant)+"|"+m.Principal+"|"+m.AgentID]
		if s != nil {
			s.inFlight.Add(1)
		}
		a.mu.Unlock()
		if s == nil {
			return
		}
		defer s.done()
		if !s.ep.Holds(m.Session) {
			return
		}
		if a.answerCall(m.Session, m.Body) {
			return // the answer to a request the hub sent on a call's stream here
		}
		a.cancelSessionCall(m.Session, m.Body) // a relayed cancellation silences the call's answer here
		body, _ := s.ep.IDs.Incoming(m.Body)   // an answer, with the id this node's server gave its request
		s.ep.Inject(context.Background(), m.Session, m.ProtocolVersion, body)
	}
}
