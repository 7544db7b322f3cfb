package runs

import (
	"context"
	"encoding/json"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
)

// withoutInputRequests adds to a run's updates the clearing of its recorded input
// requests: an attempt that starts, or a run that ends or parks, waits for none.
func withoutInputRequests(updates map[string]any) map[string]any {
	updates["input_requests_sealed"] = nil
	updates["input_requests_key_id"] = ""
	return updates
}

// setInputRequests records (sealed) the input requests of one of the principal's
// working runs that owner executes, or clears them when requests is empty; false
// means the run is not working there (it ended, or another process took it over).
func (s *Store) setInputRequests(ctx context.Context, p switchboard.Principal, id, owner string, requests []byte) (bool, error) {
	updates := withoutInputRequests(map[string]any{})
	if len(requests) > 0 {
		sealed, keyID, err := s.seal(ctx, p.TenantID, id, partInputRequests, requests)
		if err != nil {
			return false, switchboard.Internal(err)
		}
		updates["input_requests_sealed"], updates["input_requests_key_id"] = sealed, keyID
	}
	return s.update(ctx, p.TenantID, id, func(q *gorm.DB) *gorm.DB {
		return q.Where("principal = ? AND state = ? AND lease_owner = ?", p.ID(), StateWorking, owner)
	}, updates)
}

// inputRequests opens the input requests a working run recorded; nil when none.
func (s *Store) inputRequests(ctx context.Context, r *Run) (json.RawMessage, error) {
	if r.State != StateWorking || r.InputRequestsKeyID == "" || len(r.InputRequestsSealed) == 0 {
		return nil, nil
	}
	return s.open(ctx, r, partInputRequests)
}

// RecordInputRequests records the requests one of the principal's working runs,
// executing in this process, waits for its client to answer (an MCP task's input
// requests, as JSON), so that every process sharing the database shows them in the
// run's View.InputRequests; empty requests clear them. They are cleared, too, when an
// attempt starts and when the run ends. A run that is not working here (it ended, or
// another process took it over) is left as it is.
func (e *Executor) RecordInputRequests(ctx context.Context, p switchboard.Principal, id string, requests json.RawMessage) error {
	if len(requests) > 0 && !json.Valid(requests) {
		return switchboard.Invalid("requests", "must be JSON")
	}
	_, err := e.store.setInputRequests(ctx, p, id, e.o.Node, requests)
	return err
}
