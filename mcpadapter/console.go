package mcpadapter

import (
	"net/http"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/mcptransport"
)

// ServeConsole serves one MCP request of the stateless 2026-07-28 version at an agent's
// URL for a caller authenticated elsewhere: the builder UI's agent console, where a
// person who may manage the agent (the REST API checked it) uses the agent as its
// clients do. p is the agent's principal as its API key gives it (kind agent, the
// agent's id, its creator). The request reaches the agent's scope as one at the agent
// URL does after its key was checked: admission, the same tool list (the deployment's
// schema profile), arguments checked against the full schemas, the confirm policy
// asking in the form the client declared (inputRequests on this version), the router
// and its audit rows. The caller has already read nothing of the body but reserved it.
// Session-based requests are refused: a session is bound to a credential, which the
// console does not hold.
func (a *Adapter) ServeConsole(w http.ResponseWriter, r *http.Request, p switchboard.Principal) {
	if p.Kind != switchboard.PrincipalAgent || p.AgentID == "" {
		writeError(w, switchboard.Errorf(switchboard.CodeForbidden, "the console serves an agent's URL only"))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeError(w, &switchboard.Error{Code: switchboard.CodeInvalid, Message: "method " + r.Method + " is not allowed on the console; use POST"}, http.StatusMethodNotAllowed)
		return
	}
	slot, err := a.admit(r.Context(), p)
	if err != nil {
		a.refuse(w, r, err)
		return
	}
	defer slot.Release()
	s, scopeErr := a.scope(r.Context(), p, p.AgentID)
	if scopeErr != nil {
		e := outage(scopeErr)
		if e.Code == switchboard.CodeUnavailable && e.RetryAfter > 0 {
			answerUnavailable(w, r, e)
			return
		}
		writeError(w, e)
		return
	}
	defer s.done()
	s.lastUsed.Store(time.Now().UnixNano())
	in, ok := mcptransport.ReadIncoming(w, r, a.opts.MaxBodyBytes)
	if !ok {
		return
	}
	if !in.Modern {
		writeError(w, switchboard.Invalid("_meta", "the console speaks MCP 2026-07-28 only: send io.modelcontextprotocol/protocolVersion \"2026-07-28\" in each request's _meta"))
		return
	}
	r = r.WithContext(limits.WithSlot(switchboard.WithPrincipal(r.Context(), p), slot))
	a.serveModern(w, r, s, p, in.Msg, in.Body)
}
