package testproc_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testproc"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestGroupEndsWithItsContext: a shell whose child sleeps on with the shell's output
// pipe is killed, child and all, when its context ends, and Output returns then; with
// exec.CommandContext alone Output would return only when the child's sleep ended,
// and the sleep would outlive the test.
func TestGroupEndsWithItsContext(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "sleep.pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The shell starts sleep in the background, holding stdout, and waits on it.
	cmd := testproc.Command(ctx, "/bin/sh", "-c", `sleep 300 & echo $! > "$1"; wait`, "sh", pidFile)
	done := make(chan error, 1)
	go func() { _, err := cmd.Output(); done <- err }()
	var sleepPID int
	testwait.Until(t, "the shell to start sleep", func() bool {
		raw, err := os.ReadFile(pidFile)
		if err != nil || !strings.HasSuffix(string(raw), "\n") {
			return false
		}
		sleepPID, err = strconv.Atoi(strings.TrimSpace(string(raw)))
		return err == nil
	})
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Output succeeded; want the kill's error")
		}
	case <-time.After(testproc.WaitDelay + testwait.Timeout):
		t.Fatal("Output had not returned long after the context ended")
	}
	// The sleep is gone once killed and reaped (by init: its shell died first).
	testwait.Until(t, "the background sleep to end with its group", func() bool {
		return errors.Is(syscall.Kill(sleepPID, 0), syscall.ESRCH)
	})
}
