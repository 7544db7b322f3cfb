package main

import (
	"context"
	"log/slog"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/fleet"
)

// cutWait bounds how long the calls stopped at the end of a drain take to answer and
// complete their audit rows.
const cutWait = 5 * time.Second

// unfinishedInterval is how often a node looks for calls left in flight by a node that
// stopped: the fleet's heartbeat interval, after which a silent peer is no longer live.
const unfinishedInterval = 10 * time.Second

// unfinishedCalls marks outcome_unknown the audit rows of calls whose node stopped
// after their upstream request left and before their answer (audit.MarkUnfinished): at
// start, the rows this process's predecessor left; then, periodically, those of peers
// no longer live.
type unfinishedCalls struct {
	db      *gorm.DB
	node    string
	members *fleet.Membership
	log     *slog.Logger
}

// live is the nodes whose calls in flight are left alone. SQLite serves one node, so
// every other node there is a predecessor; on PostgreSQL, the peers that beat lately.
func (u unfinishedCalls) live() []string {
	if u.db.Dialector.Name() != "postgres" {
		return []string{u.node}
	}
	return u.members.LiveNodes()
}

func (u unfinishedCalls) mark(ctx context.Context) {
	live := u.live()
	if live == nil {
		return // no recent beat says who is live: nothing is marked on a guess
	}
	n, err := audit.MarkUnfinished(ctx, u.db, live)
	if err != nil {
		if ctx.Err() == nil {
			u.log.Warn("mark the calls of stopped nodes outcome_unknown", "err", err)
		}
		return
	}
	if n > 0 {
		u.log.Warn("calls left in flight by a node that stopped are marked outcome_unknown in the audit log: their requests may have taken effect",
			"calls", n)
	}
}

// run marks periodically, until ctx ends; on SQLite the mark at start is enough.
func (u unfinishedCalls) run(ctx context.Context) {
	if u.db.Dialector.Name() != "postgres" {
		return
	}
	t := time.NewTicker(unfinishedInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			u.mark(ctx)
		}
	}
}
