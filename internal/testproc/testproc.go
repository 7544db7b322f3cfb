// Package testproc makes a test's subprocess end with the test. A process started
// with exec.CommandContext is killed when its context ends, but only it: a child it
// started (npm's node, node's chromium, a shell's server) lives on, keeps the output
// pipe open, and cmd.Wait (so CombinedOutput, Output, Run) waits for that pipe, past
// the context's deadline and the test's, until go test's -timeout kills the package.
//
// Start from [Command] and [Kill].
package testproc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// WaitDelay is how long Wait waits for a killed process's output pipes to close
// before it closes them itself.
const WaitDelay = 10 * time.Second

// Command is exec.CommandContext(ctx, name, args...) run in a process group of its
// own: when ctx ends the whole group is killed, and Wait returns at most WaitDelay
// after the process exits even if something still holds its output.
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return Kill(cmd) }
	cmd.WaitDelay = WaitDelay
	return cmd
}

// Kill kills cmd's process group (see Command), or cmd alone if it has none.
func Kill(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return errors.New("testproc: process not started")
	}
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid {
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err == nil || !errors.Is(err, syscall.ESRCH) {
			return err
		}
		return os.ErrProcessDone
	}
	return cmd.Process.Kill()
}
