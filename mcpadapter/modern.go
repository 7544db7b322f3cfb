package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/mcptransport"
)

// modernCallKey names a stateless request of principal p at the scope by its JSON-RPC id.
func modernCallKey(p switchboard.Principal, s *scope, id json.RawMessage) string {
	return mcptransport.CallKey(p.ID(), s.agentID, id)
}

// serveModern serves a request of the stateless 2026-07-28 version. In that version
// _meta is required on requests, not on notifications, and a notification never gets
// a JSON-RPC response body: a notification without _meta takes its protocol version
// from the Mcp-Protocol-Version header, and one mcp-go refuses gets only a status.
func (a *Adapter) serveModern(w http.ResponseWriter, r *http.Request, s *scope, p switchboard.Principal, msg mcptransport.Message, body []byte) {
	if r.Method != http.MethodPost || !msg.IsNotification() {
		if r.Method == http.MethodPost && len(msg.ID) > 0 && msg.Method != "" {
			if a.modernRefusal(w, msg) || a.refuseHeldState(w, s, p, msg) {
				return
			}
			if x := a.modernTasks(); x != nil && x.serveModern(w, r, s, msg) {
				return
			}
			if msg.Method == string(mcp.MethodSubscriptionsListen) {
				// A listen stream waits for notifications as long as its client keeps it
				// open: no work of the hub's, so it gives its place in the admission back
				// at once rather than hold it for the stream's life.
				limits.SlotFrom(r.Context()).Release()
			}
			// On 2026-07-28 the end of a request's stream is its cancellation (there is
			// no session to resume it in): the connection's end cancels it here.
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			defer context.AfterFunc(mcptransport.Connection(r.Context()), cancel)()
			var stream *streamPlan
			if mcptransport.Streams(r, msg) {
				stream = &streamPlan{stateless: true}
			}
			if msg.Method == string(mcp.MethodToolsCall) {
				// A call that fails for a capability its client did not declare is
				// refused for it (refuseUndeclared).
				ctx = withCapabilityRefusal(ctx, &capabilityRefusal{id: msg.ID})
			}
			r = r.WithContext(ctx)
			if msg.Method == string(mcp.MethodResourcesRead) {
				var done func()
				w, r, done = readingResource(w, r, msg)
				defer done()
			}
			a.serveRequest(w, r, s, modernCallKey(p, s, msg.ID), cancel, stream)
			return
		}
		s.ep.HTTP.ServeHTTP(w, r)
		return
	}
	if msg.Method == string(mcp.MethodNotificationCancelled) {
		var params struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(msg.RawParams, &params) != nil || !mcptransport.ValidID(params.RequestID) {
			http.Error(w, "params.requestId must be a string or a number", http.StatusBadRequest)
			return
		}
		// The call may run on another node: every node cancels the caller's request.
		a.modern.Cancel(modernCallKey(p, s, params.RequestID))
		a.records.Publish(mcptransport.RelayMessage{Kind: mcptransport.RelayCancel, Tenant: p.TenantID, Principal: p.ID(), AgentID: s.agentID, Body: params.RequestID})
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if msg.Params.Meta.ProtocolVersion() == "" {
		withMeta, err := addProtocolVersion(body, r.Header.Get(mcp.HeaderProtocolVersion))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(withMeta))
		r.ContentLength = int64(len(withMeta))
	}
	bw := mcptransport.NewBufferWriter()
	s.ep.HTTP.ServeHTTP(bw, r)
	if bw.Status == 0 || bw.Status == http.StatusAccepted || bw.Status == http.StatusOK {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var answer struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	text := http.StatusText(bw.Status)
	if json.Unmarshal(bw.Body.Bytes(), &answer) == nil && answer.Error.Message != "" {
		text = answer.Error.Message
	}
	http.Error(w, text, bw.Status)
}

// addProtocolVersion returns a notification's body with the protocol version in its
// params' _meta, as mcp-go reads the era of a message from there.
func addProtocolVersion(body []byte, version string) ([]byte, error) {
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(body, &msg); err != nil {
		return nil, errors.New("the body must be a JSON object")
	}
	params := map[string]json.RawMessage{}
	if raw, ok := msg["params"]; ok && json.Unmarshal(raw, &params) != nil {
		return nil, errors.New("params must be a JSON object")
	}
	if params == nil {
		params = map[string]json.RawMessage{}
	}
	meta := map[string]any{}
	if raw, ok := params["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		return nil, errors.New("params._meta must be a JSON object")
	}
	if meta == nil {
		meta = map[string]any{}
	}
	meta[mcp.MetaKeyProtocolVersion] = version
	var err error
	if params["_meta"], err = json.Marshal(meta); err != nil {
		return nil, err
	}
	if msg["params"], err = json.Marshal(params); err != nil {
		return nil, err
	}
	return json.Marshal(msg)
}
