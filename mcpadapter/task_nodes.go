package mcpadapter

import (
	"context"
	"encoding/json"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/runs"
)

// A 2026-07-28 task's input requests wait on the node that runs it (taskInputs). That
// node records them with the run whenever they change, so tasks/get on any node shows
// them as it does (same keys, methods and params); and a tasks/update that reaches
// another node is relayed to it (RelayTaskInput) once that node checked the caller
// owns the task. The running node answers only its owner's answers, and only the keys
// it waits for.

// recordTimeout bounds one record of a task's input requests.
const recordTimeout = 10 * time.Second

// recordInputs returns what records the open input requests of the principal's run
// id with the run (nil clears them); a failure is logged, as the requests still wait
// here and this node still shows them.
func (x *runsExt) recordInputs(p switchboard.Principal, id string) func(json.RawMessage) {
	return func(reqs json.RawMessage) {
		ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
		defer cancel()
		if err := x.o.Runs.RecordInputRequests(ctx, p, id, reqs); err != nil {
			x.o.Logger.ErrorContext(ctx, "record task input requests", "tenant", p.TenantID, "task", id, "err", err)
		}
	}
}

// recordedInputs are the input requests a working run's node recorded with it, by
// key; nil when none.
func recordedInputs(v runs.View) map[string]json.RawMessage {
	if v.State != runs.StateWorking || len(v.InputRequests) == 0 {
		return nil
	}
	var reqs map[string]json.RawMessage
	if json.Unmarshal(v.InputRequests, &reqs) != nil || len(reqs) == 0 {
		return nil
	}
	return reqs
}

// relayInputs sends the answers to the input requests of the caller's task v, which
// runs on another node, to that node: only those answering a request it recorded (any
// other key is ignored, as on the node itself). Without a relay (one node) there is no
// other node, and nothing is sent.
func (x *runsExt) relayInputs(ctx context.Context, a *Adapter, p switchboard.Principal, v runs.View, responses map[string]json.RawMessage) error {
	open := recordedInputs(v)
	answers := map[string]json.RawMessage{}
	for key, raw := range responses {
		if _, ok := open[key]; ok {
			answers[key] = raw
		}
	}
	if len(answers) == 0 || a.opts.Relay == nil {
		return nil
	}
	body, err := json.Marshal(mcptransport.TaskInputResponses{TaskID: v.ID, InputResponses: answers})
	if err != nil {
		return switchboard.Invalid("inputResponses", "must hold JSON values: "+err.Error())
	}
	m := mcptransport.RelayMessage{Kind: mcptransport.RelayTaskInput, Node: a.node, Tenant: p.TenantID, Principal: p.ID(), Body: body}
	if err := a.opts.Relay.Publish(context.WithoutCancel(ctx), m); err != nil {
		if switchboard.CodeOf(err) == switchboard.CodeInvalid {
			return switchboard.Invalid("inputResponses", "are too large to reach the node running the task; send fewer answers at a time")
		}
		x.o.Logger.ErrorContext(ctx, "relay task input responses", "tenant", p.TenantID, "task", v.ID, "err", err)
		return switchboard.Internal(err)
	}
	return nil
}

// relayedInputs answers, on the node running the task, the input requests another
// node relayed the owner's answers to; a task that does not run here, or is another's,
// is left alone.
func (x *runsExt) relayedInputs(m mcptransport.RelayMessage) {
	var r mcptransport.TaskInputResponses
	if json.Unmarshal(m.Body, &r) != nil || r.TaskID == "" {
		return
	}
	in := x.inputs.get(r.TaskID)
	if in == nil || !in.owns(m.Tenant, m.Principal) {
		return
	}
	in.answer(r.InputResponses)
}
