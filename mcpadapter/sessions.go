package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/sessions"
)

// serveSession hands a request to the scope's server under the hub's session rules: the
// hub issues and records every session at initialize; any other request of a
// session-based protocol version must carry a recorded, live session of the same
// credential at the same URL (400 without one, 404 for an unknown, ended or foreign
// one, so the client initializes again). Requests of the stateless 2026-07-28 version
// carry no session and pass as they are.
func (a *Adapter) serveSession(w http.ResponseWriter, r *http.Request, s *scope, p switchboard.Principal) {
	in, ok := mcptransport.ReadIncoming(w, r, a.opts.MaxBodyBytes)
	if !ok {
		return
	}
	body, msg, modern := in.Body, in.Msg, in.Modern
	if modern {
		a.serveModern(w, r, s, p, msg, body)
		return
	}
	if r.Method == http.MethodPost && msg.Method == string(mcp.MethodInitialize) {
		a.initialize(w, r, s, p, msg)
		return
	}
	open, ok := a.records.Open(w, r, msg, s.ep, p, s.agentID, a.opts.Now, sessionsUnavailable)
	if !ok {
		return
	}
	defer open.Close()
	id, rec := open.ID, open.Record
	if a.held.Load() > int64(a.opts.MaxHeldSessions) {
		a.trimHeld() // this session is in use, so it stays
	}
	r = r.WithContext(mcptransport.WithSessionCall(r.Context(), &mcptransport.SessionCall{ID: id, Validated: true}))
	if s.serveCachedList(w, r, id, msg) {
		return
	}
	switch {
	case msg.IsAnswer():
		// The answer to a server-to-client request (an elicitation) pending on this node
		// is taken here; otherwise the node where it is pending takes it.
		if a.answerCall(id, body) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		// mcp-go sees the id it gave its request (request_ids.go); the other nodes get
		// the answer as the client sent it.
		local, _ := s.ep.IDs.Incoming(body)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(local)), int64(len(local))
		bw := mcptransport.NewBufferWriter()
		s.ep.HTTP.ServeHTTP(bw, r)
		if bw.Status == http.StatusAccepted || a.opts.Relay == nil {
			bw.CopyTo(w)
			return
		}
		a.records.Publish(mcptransport.RelayMessage{Kind: mcptransport.RelayPost, Tenant: p.TenantID, Session: id, Principal: p.ID(), AgentID: s.agentID,
			ProtocolVersion: rec.ProtocolVersion, Body: body})
		w.WriteHeader(http.StatusAccepted)
	case msg.Method == string(mcp.MethodNotificationCancelled):
		// The call may run on another node: every node holding the session cancels it.
		// Its answer is silenced first, so none follows the cancellation.
		a.cancelSessionCall(id, body)
		s.ep.HTTP.ServeHTTP(w, r)
		a.records.Publish(mcptransport.RelayMessage{Kind: mcptransport.RelayPost, Tenant: p.TenantID, Session: id, Principal: p.ID(), AgentID: s.agentID,
			ProtocolVersion: rec.ProtocolVersion, Body: body})
	case r.Method == http.MethodPost && len(msg.ID) > 0 && msg.Method != "":
		if s.refuseSubscription(r.Context(), w, msg) {
			return
		}
		var stream *streamPlan
		if mcptransport.Streams(r, msg) {
			stream = &streamPlan{session: id, primed: mcptransport.Primes(r, msg, rec.ProtocolVersion)}
			if call, ok := s.plainCallOf(r, id, msg, body); ok {
				// The adapter runs the call (plain_calls.go), so it cancels it itself on
				// notifications/cancelled, as mcp-go would have.
				ctx, cancel := context.WithCancel(r.Context())
				defer cancel()
				stream.plain = call
				a.serveRequest(w, r.WithContext(ctx), s, mcptransport.RequestKey(id, msg.ID), cancel, stream)
				return
			}
		}
		if msg.Method == string(mcp.MethodResourcesRead) {
			var done func()
			w, r, done = readingResource(w, r, msg)
			defer done()
		}
		a.serveRequest(w, r, s, mcptransport.RequestKey(id, msg.ID), nil, stream)
	case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "":
		last := r.Header.Get("Last-Event-ID")
		if cs := s.ep.Events.CallOf(id, last); cs != nil {
			cs.Resume(w, r, last) // a call's stream, which the hub keeps
			return
		}
		if s.ep.Events.Log != nil && !s.ep.Events.Issued(last) && mcptransport.EventID(last) {
			// Another node's event: if it runs the call and has not seen the client
			// leave, it keeps the call's stream where this node reads it.
			a.records.Publish(mcptransport.RelayMessage{Kind: mcptransport.RelayKeepStream, Tenant: p.TenantID, Session: id, Principal: p.ID(), AgentID: s.agentID,
				Body: jsonString(last)})
		}
		if s.ep.Events.ResumeLogged(w, r, id, last) {
			return // a call's stream another node kept
		}
		s.ep.HTTP.ServeHTTP(s.ep.IDs.Writer(w), r)
	default:
		s.ep.HTTP.ServeHTTP(s.ep.IDs.Writer(w), r)
		if r.Method == http.MethodPost {
			s.ep.MarkIfStreamed(id, w)
		}
	}
}

// initialize serves an initialize with an id the hub issues, and records the session
// only when the initialize succeeded: a refused one (a bad jsonrpc version, bad
// params) leaves no session and no Mcp-Session-Id.
func (a *Adapter) initialize(w http.ResponseWriter, r *http.Request, s *scope, p switchboard.Principal, msg mcptransport.Message) {
	call := &mcptransport.SessionCall{Initialize: true}
	bw := mcptransport.NewBufferWriter()
	s.ep.HTTP.ServeHTTP(bw, r.WithContext(mcptransport.WithSessionCall(r.Context(), call)))
	id := bw.Header().Get(server.HeaderKeySessionID)
	var answer struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	ok := id != "" && id == call.ID && bw.Status == http.StatusOK &&
		json.Unmarshal(bw.Body.Bytes(), &answer) == nil && answer.Result.ProtocolVersion != ""
	if !ok {
		if call.ID != "" {
			s.ep.DropLocal(call.ID)
		}
		bw.Header().Del(server.HeaderKeySessionID)
		bw.CopyTo(w)
		return
	}
	now := a.opts.Now()
	rec := sessions.Record{
		ID: id, TenantID: p.TenantID, PrincipalID: p.ID(), KeyID: p.KeyID, AgentID: s.agentID,
		ProtocolVersion: answer.Result.ProtocolVersion, ClientInfo: msg.Params.ClientInfo, Capabilities: msg.Params.Capabilities,
		CreatedAt: now,
	}
	if err := a.records.Create(r.Context(), rec); err != nil {
		s.ep.DropLocal(id)
		a.opts.Logger.ErrorContext(r.Context(), "record MCP session", "tenant", p.TenantID, "err", err)
		sessionsUnavailable(w, msg.ID, err)
		return
	}
	// The session's state leaves this node's server at once: an initialize never
	// followed by a request holds no memory, only its record, and the first request
	// restores the session on whichever node it reaches.
	s.ep.DropLocal(id)
	bw.CopyTo(w)
}

// dropHeld drops this node's state of an ended session: the scopes of its tenant that
// hold it let it go.
func (a *Adapter) dropHeld(tenant switchboard.TenantID, id string) {
	a.mu.Lock()
	var holding []*scope
	for _, s := range a.scopes {
		if s.principal.TenantID == tenant {
			holding = append(holding, s)
		}
	}
	a.mu.Unlock()
	for _, s := range holding {
		if s.ep.Holds(id) {
			s.ep.DropLocal(id)
		}
	}
}

// sweepSessions ends the expired records (every node may; the deletes are idempotent),
// drops this node's state of sessions it has not served for the unused TTL (their
// records stay), and records the use of sessions with a request open here.
func (a *Adapter) sweepSessions(ctx context.Context, now time.Time) {
	a.records.Expire(ctx, now)
	a.mu.Lock()
	all := make([]*scope, 0, len(a.scopes))
	for _, s := range a.scopes {
		all = append(all, s)
	}
	a.mu.Unlock()
	for _, s := range all {
		for _, id := range s.ep.StaleSessions(now, a.opts.SessionLimits.Unused) {
			s.ep.DropIdle(id)
		}
		for _, id := range s.ep.Streaming() {
			a.records.Touch(ctx, s.principal.TenantID, id, now)
		}
	}
	a.records.Prune(now)
	if a.opts.StreamLog != nil {
		if err := a.opts.StreamLog.Prune(ctx, now); err != nil {
			a.opts.Logger.WarnContext(ctx, "prune kept call streams", "err", err)
		}
	}
}

// trimHeld drops this node's state of its least recently used idle sessions when it
// holds more than MaxHeldSessions (each costs mcp-go about 10 KiB), down to 90% of the
// bound; their records stay, and their next request restores them.
func (a *Adapter) trimHeld() {
	if !a.trimming.CompareAndSwap(false, true) {
		return
	}
	defer a.trimming.Store(false)
	max := a.opts.MaxHeldSessions
	if a.held.Load() <= int64(max) {
		return
	}
	type idle struct {
		s    *scope
		id   string
		seen time.Time
	}
	a.mu.Lock()
	all := make([]*scope, 0, len(a.scopes))
	for _, s := range a.scopes {
		all = append(all, s)
	}
	a.mu.Unlock()
	var candidates []idle
	for _, s := range all {
		for _, ls := range s.ep.Idle() {
			candidates = append(candidates, idle{s: s, id: ls.ID, seen: ls.Seen})
		}
	}
	slices.SortFunc(candidates, func(x, y idle) int { return x.seen.Compare(y.seen) })
	for _, c := range candidates {
		if a.held.Load() <= int64(max)*9/10 {
			break
		}
		c.s.ep.DropIdle(c.id)
	}
}

// jsonString is s as a JSON string.
func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
