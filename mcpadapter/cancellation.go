package mcpadapter

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/providers"
)

// serveRequest hands a posted JSON-RPC request (its context detached from its
// connection by ServeHTTP) to the scope's server, and silences its answer once key is
// canceled (see cancelSessionCall). cancel, when set, is also called then (the modern
// era, whose cancellations the hub makes itself; mcp-go makes a session's). stream,
// when set, is a call answered on a stream the hub keeps (mcptransport.CallStream): primed first
// when primed.
func (a *Adapter) serveRequest(w http.ResponseWriter, r *http.Request, s *scope, key string, cancel context.CancelFunc, stream *streamPlan) {
	sw := mcptransport.NewSilencer(w)
	defer sw.Finish()
	var out http.ResponseWriter = s.ep.IDs.Writer(sw)
	var cs *mcptransport.CallStream
	if stream != nil {
		if stream.stateless {
			cs = mcptransport.OpenStatelessCall(sw)
		} else {
			cs = s.ep.Events.OpenCall(stream.session, sw, stream.primed)
			cs.KeepWhenGone(mcptransport.Connection(r.Context()))
			if stream.primed {
				// The call may let its client poll (providers.ReleaseStream): its POST
				// stream ends, the call runs on, and the client resumes the stream.
				ctx := r.Context()
				r = r.WithContext(providers.WithStreamRelease(ctx, func() bool {
					return mcptransport.Outlives(ctx) && cs.Release() && mcptransport.EndExchange(ctx)
				}))
			}
		}
		cw := mcptransport.NewCallWriter(stream.stateless)
		out = cw
		r = r.WithContext(mcptransport.WithCallStream(r.Context(), cs))
		defer cs.End(cw)
	}
	defer a.modern.Add(key, func() {
		sw.Silence()
		if cs != nil {
			cs.Cancel() // nor is its answer recorded for a resumption
		}
		if cancel != nil {
			cancel()
		}
	})()
	if stream != nil && stream.plain != nil {
		s.answerPlain(out, r, stream.plain)
		return
	}
	refusal := capabilityRefusalFrom(r.Context())
	if refusal == nil {
		s.ep.HTTP.ServeHTTP(out, r)
		return
	}
	// A 2026-07-28 call whose answer may be a refusal for an undeclared capability:
	// the answer is kept until the call ends (a stream's, by its CallWriter).
	if cw, ok := out.(*mcptransport.CallWriter); ok {
		s.ep.HTTP.ServeHTTP(cw, r)
		if b, refused := refusal.refusal(cw.Answer()); refused {
			cw.Replace(b)
		}
		return
	}
	bw := mcptransport.NewBufferWriter()
	s.ep.HTTP.ServeHTTP(bw, r)
	if b, refused := refusal.refusal(bw.Body.Bytes()); refused {
		bw = b
	}
	bw.CopyTo(out)
}

// streamPlan says how a call is streamed (see serveRequest): a call of a session, or
// a stateless one (2026-07-28), whose stream is not recorded; and whether the adapter
// answers it itself (plain, see plain_calls.go).
type streamPlan struct {
	session   string
	primed    bool
	stateless bool
	plain     *plainCall
}

// cancelSessionCall silences the answer of the session's request that a
// notifications/cancelled body names, before mcp-go cancels it.
func (a *Adapter) cancelSessionCall(session string, body []byte) {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != string(mcp.MethodNotificationCancelled) || !mcptransport.ValidID(msg.Params.RequestID) {
		return
	}
	a.modern.Cancel(mcptransport.RequestKey(session, msg.Params.RequestID))
}
