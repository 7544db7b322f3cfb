package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/robfig/cron/v3"
)

// DefaultMinScheduleInterval is the shortest time a schedule may leave between two
// firings unless the deployment sets another (from 1 s up to it). A cron expression
// (minute hour day month weekday) fires at most once a minute by its form; an @every
// schedule must not be shorter than the minimum.
const DefaultMinScheduleInterval = time.Minute

// tooFrequent reports whether a schedule may fire more often than once per min (zero:
// DefaultMinScheduleInterval), and how often it does.
func tooFrequent(sched cron.Schedule, min time.Duration) (time.Duration, bool) {
	if min <= 0 {
		min = DefaultMinScheduleInterval
	}
	every, ok := sched.(cron.ConstantDelaySchedule)
	return every.Delay, ok && every.Delay < min
}

// checkSchedules refuses, naming the field, a schedule that fires more often than once
// per min (see tooFrequent).
func checkSchedules(def *Definition, min time.Duration) error {
	if min <= 0 {
		min = DefaultMinScheduleInterval
	}
	var problems Problems
	for i, tr := range def.Triggers {
		sched, err := cron.ParseStandard(tr.Schedule)
		if tr.Schedule == "" || err != nil {
			continue // no schedule, or one Compile refused
		}
		if every, ok := tooFrequent(sched, min); ok {
			problems = append(problems, Problem{Field: fmt.Sprintf("triggers[%d].schedule", i),
				Message: fmt.Sprintf("fires every %s: a schedule may fire at most once every %s (@every %s or longer)", every, min, min)})
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return problems.AsError()
}

// Scheduler starts the runs of workflows' schedules. Every node runs one; a firing is
// claimed in the database first (workflow_firings' unique key), so each firing starts
// one run in the whole fleet.
type Scheduler struct {
	Store *Store
	// Start starts a run of the workflow as the person who saved it (Service.StartAs).
	Start  func(ctx context.Context, w Workflow, params json.RawMessage) error
	Logger *slog.Logger
	// Lookback is how far back a pass looks for firings not claimed yet (default 2
	// minutes): a node that was busy or a fleet restarted within it misses none;
	// older ones are skipped, not caught up.
	Lookback time.Duration
	// MinInterval is the shortest time a schedule may leave between two firings
	// (default DefaultMinScheduleInterval); a schedule saved before that rule that fires
	// more often does not fire.
	MinInterval time.Duration
}

// Run ticks every interval (default 20 s) until ctx ends.
func (s *Scheduler) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = 20 * time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := s.Tick(ctx, time.Now()); err != nil {
			s.logger().Error("workflow schedules", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *Scheduler) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

// Tick starts the runs of the firings due by now that no node has claimed, and says
// how many this call started.
func (s *Scheduler) Tick(ctx context.Context, now time.Time) (int, error) {
	ws, err := s.Store.scheduledWorkflows(ctx)
	if err != nil {
		return 0, err
	}
	lookback := s.Lookback
	if lookback <= 0 {
		lookback = 2 * time.Minute
	}
	now = now.UTC()
	s.logger().DebugContext(ctx, "workflow schedules read", "scheduled", len(ws))
	started := 0
	for i := range ws {
		w := &ws[i]
		def, err := Parse([]byte(w.Definition))
		if err != nil {
			continue
		}
		prog, err := Compile(def)
		if err != nil {
			continue
		}
		for idx, tr := range prog.Schedules() {
			sched, err := cron.ParseStandard(tr.Schedule)
			if err != nil {
				continue
			}
			if every, ok := tooFrequent(sched, s.MinInterval); ok {
				s.logger().WarnContext(ctx, "workflow schedule fires too often; not fired", "tenant", w.TenantID, "workflow", w.Name, "trigger", idx, "every", every)
				continue
			}
			from := now.Add(-lookback)
			if w.UpdatedAt.After(from) {
				from = w.UpdatedAt.UTC() // nothing fires for a time before the schedule was saved
			}
			for at := sched.Next(from); !at.After(now); at = sched.Next(at) {
				if ctx.Err() != nil {
					return started, nil // shutting down: the firings left are another node's, or a later pass's
				}
				ok, err := s.fire(ctx, w, idx, tr.Params, at)
				if err != nil {
					return started, err
				}
				if ok {
					started++
				}
			}
		}
	}
	return started, nil
}

// fireTimeout bounds claiming one firing and starting its run.
const fireTimeout = 30 * time.Second

// fire claims one firing and, if this node claimed it, starts its run. The two are one
// step that shutdown does not cut: a firing claimed is a firing whose run is started,
// for no other node will claim it again. It says whether this node started the run.
func (s *Scheduler) fire(ctx context.Context, w *Workflow, idx int, p map[string]any, at time.Time) (bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fireTimeout)
	defer cancel()
	ok, err := s.Store.claim(ctx, w, "schedule:"+strconv.Itoa(idx), at)
	if err != nil {
		return false, err
	}
	if !ok {
		// Another node (or an earlier pass) started it.
		s.logger().DebugContext(ctx, "workflow firing already claimed", "tenant", w.TenantID, "workflow", w.Name, "trigger", idx, "at", at.Format(time.RFC3339))
		return false, nil
	}
	params, _ := json.Marshal(p)
	if len(p) == 0 {
		params = []byte("{}")
	}
	if err := s.Start(ctx, *w, params); err != nil {
		s.logger().WarnContext(ctx, "scheduled workflow run not started", "tenant", w.TenantID, "workflow", w.Name, "at", at, "err", err)
		return false, nil
	}
	s.logger().InfoContext(ctx, "workflow firing started", "tenant", w.TenantID, "workflow", w.Name, "trigger", idx, "at", at.Format(time.RFC3339))
	return true, nil
}
