package workflows

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchboard-hub/switchboard"
)

// loadPrior reads what an earlier execution of the run recorded (the process running
// it died, and this one resumes it). A step or item that had started a call that is
// not read-only or idempotent, and did not record its end, fails the run: calling it
// again could repeat its effect, and whether it took effect is unknown.
func (x *execution) loadPrior(ctx context.Context) error {
	recs, err := x.e.store.Steps(ctx, x.run.Principal.TenantID, x.run.ID)
	if err != nil {
		return err
	}
	x.prior = map[string]map[int]*StepRecord{}
	for i := range recs {
		r := &recs[i]
		if x.prior[r.Step] == nil {
			x.prior[r.Step] = map[int]*StepRecord{}
		}
		x.prior[r.Step][r.Item] = r
	}
	for _, s := range x.prog.Steps {
		bd := x.bound[s.Name]
		if bd.Tool.Info.Hints.Retryable() {
			continue
		}
		for item, r := range x.prior[s.Name] {
			if s.each != nil && item == wholeStep {
				continue // the items say which calls were sent
			}
			if r.State == StepCompleted || r.State == StepSkipped || (r.State == StepFailed && item == wholeStep) {
				continue
			}
			msg := fmt.Sprintf("Switchboard stopped while step %s (%s) was running, and %s is neither read-only nor idempotent, so it was not run again: check whether it took effect before running the workflow again", s.Name, s.Tool, s.Tool)
			r.State, r.ErrorCode, r.ErrorMessage = StepFailed, "interrupted", msg
			if err := x.e.store.finishStep(ctx, r, nil); err != nil {
				return err
			}
			if s.each != nil {
				whole := x.prior[s.Name][wholeStep]
				if whole != nil {
					whole.State, whole.ErrorCode, whole.ErrorMessage = StepFailed, "interrupted", msg
					if err := x.e.store.finishStep(ctx, whole, nil); err != nil {
						return err
					}
				}
			}
			return &switchboard.Error{Code: switchboard.CodeOutcomeUnknown, Message: msg}
		}
	}
	return nil
}

// resumed returns how a step ended in an earlier execution, or nil when it must
// (still) run.
func (x *execution) resumed(s *StepProgram) *stepOutcome {
	r := x.prior[s.Name][wholeStep]
	if r == nil {
		return nil
	}
	switch r.State {
	case StepCompleted:
		return &stepOutcome{state: StepCompleted, output: x.priorOutput(context.Background(), r), start: r.StartedAt, end: r.FinishedAt}
	case StepSkipped:
		return &stepOutcome{state: StepSkipped, start: r.StartedAt, end: r.FinishedAt}
	case StepFailed:
		if s.OnError == OnErrorContinue {
			return &stepOutcome{state: StepFailed, code: r.ErrorCode, errMsg: r.ErrorMessage, start: r.StartedAt, end: r.FinishedAt}
		}
	}
	return nil
}

// priorOutput opens a recorded output (nil when it cannot be read: the step's
// expressions then see null, and the failure is logged).
func (x *execution) priorOutput(ctx context.Context, r *StepRecord) any {
	raw, err := x.e.store.Output(ctx, r)
	if err != nil || raw == nil {
		if err != nil {
			x.e.log.Error("open a recorded step output", "run", r.RunID, "step", r.Step, "err", err)
		}
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil
	}
	return ints(v)
}
