package mcpadapter

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
)

// TestTaskLinksDropStalePending: task ids the hook hands over for calls whose handler
// never links them (a call refused before it starts a run) are dropped once stale, so
// byCall stays bounded, and a stale id is never handed to a later call under the same
// key; a fresh one still reaches its handler.
func TestTaskLinksDropStalePending(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 17, 0, 0, 0, time.UTC)
	l := newTaskLinks(func(switchboard.Principal, string) {})
	l.now = func() time.Time { return now }
	hook := func(key uintptr, task string) {
		select {
		case l.slot(key) <- task:
		default:
		}
	}
	for key := uintptr(1); key <= 100; key++ {
		hook(key, "task-refused")
	}
	now = now.Add(staleLink + time.Second)
	hook(7, "task-fresh") // the same key as a stale one, as a reused Header address would be
	l.mu.Lock()
	pending := len(l.byCall)
	l.mu.Unlock()
	if pending != 1 {
		t.Fatalf("%d pending links after the stale ones aged, want 1", pending)
	}
	p := switchboard.Principal{TenantID: "ten_a", Kind: switchboard.PrincipalUser, UserID: "usr_a"}
	forget := l.link(7, p, "run_1")
	l.mu.Lock()
	got := l.runs
	l.mu.Unlock()
	if diff := cmp.Diff(map[string]taskRun{"task-fresh": {principal: p, runID: "run_1"}}, got, cmp.AllowUnexported(taskRun{})); diff != "" {
		t.Errorf("linked runs (-want +got):\n%s", diff)
	}
	forget()
	l.mu.Lock()
	left := len(l.runs) + len(l.byCall)
	l.mu.Unlock()
	if left != 0 {
		t.Errorf("%d links left after forget, want none", left)
	}
}

// TestTaskLinksCancelBeforeLink: a tasks/cancel that arrives before the task's
// handler has linked it to its run (the client has the task id as soon as tools/call
// answers) cancels the run once it is linked, and only for the task's own caller.
func TestTaskLinksCancelBeforeLink(t *testing.T) {
	t.Parallel()
	owner := switchboard.Principal{TenantID: "ten_a", Kind: switchboard.PrincipalUser, UserID: "usr_a"}
	other := switchboard.Principal{TenantID: "ten_a", Kind: switchboard.PrincipalUser, UserID: "usr_b"}
	var canceled []string
	l := newTaskLinks(func(p switchboard.Principal, runID string) { canceled = append(canceled, p.ID()+" "+runID) })
	hook := func(key uintptr, task string) { l.slot(key) <- task }

	l.mu.Lock()
	l.holdCancel("task-1", owner) // tasks/cancel, before the handler linked task-1
	l.holdCancel("task-2", other) // someone else's cancel of task-2
	l.holdCancel("task-4", owner) // the owner's cancel of task-4, then someone else's
	l.holdCancel("task-4", other)
	l.mu.Unlock()
	hook(1, "task-1")
	hook(2, "task-2")
	hook(3, "task-3")
	hook(4, "task-4")
	defer l.link(1, owner, "run_1")()
	defer l.link(2, owner, "run_2")()
	defer l.link(3, owner, "run_3")()
	defer l.link(4, owner, "run_4")()
	if diff := cmp.Diff([]string{"user:usr_a run_1", "user:usr_a run_4"}, canceled); diff != "" {
		t.Errorf("runs canceled (-want +got):\n%s", diff)
	}
	l.mu.Lock()
	held := len(l.early)
	l.mu.Unlock()
	if held != 0 {
		t.Errorf("%d cancels still held after their tasks were linked, want none", held)
	}
}
