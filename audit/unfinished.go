package audit

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// MarkUnfinished marks outcome_unknown the tool calls' rows still in flight whose node
// is not among live: that node stopped (killed, or cut off) after their upstream
// requests left and before it learnt their outcome. It returns how many it marked. It
// spans every tenant: it is the fleet's recovery, run by each node at start and
// periodically (a live node's own rows are never touched, so nodes may run it at once).
func MarkUnfinished(ctx context.Context, db *gorm.DB, live []string) (int64, error) {
	if len(live) == 0 {
		return 0, fmt.Errorf("mark unfinished audit rows: no live node named (this node is live)")
	}
	res := db.WithContext(ctx).Model(&Event{}).
		Where("outcome = ? AND node NOT IN ?", OutcomeInFlight, live).
		Update("outcome", OutcomeUnknown)
	if res.Error != nil {
		return 0, fmt.Errorf("mark unfinished audit rows: %w", res.Error)
	}
	return res.RowsAffected, nil
}
