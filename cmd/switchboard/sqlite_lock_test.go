package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestSecondServeOnOneSQLiteDatabase checks that a second serve on the data directory
// a running serve uses with SQLite refuses to start, naming the first one's pid, the
// directory and the database, and that once the first has stopped a new one starts.
func TestSecondServeOnOneSQLiteDatabase(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	e := env(map[string]string{"SWITCHBOARD_ADDR": "127.0.0.1:0", "SWITCHBOARD_DATA_DIR": dir, "SWITCHBOARD_LOG_LEVEL": "error"})
	_, stop := startServe(t, e, 6)

	// A second serve that started would run until canceled: it runs under a context
	// the test cancels if it has not returned.
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"serve"}, e, &stdout, &stderr) }()
	if code := testwait.Recv(t, done, "the second serve's refusal"); code != exitFailed {
		t.Fatalf("second serve: exit %d, want %d; stderr %s", code, exitFailed, stderr.String())
	}
	db := filepath.Join(dir, "switchboard.db")
	for _, want := range []string{"another switchboard serve (pid " + strconv.Itoa(os.Getpid()) + ")", "data directory " + dir, db, "SWITCHBOARD_DATA_DIR"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("second serve's stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("second serve printed %q", stdout.String())
	}
	// The commands that run beside a server (migrate, keys rotate) are not refused.
	if code := run(context.Background(), []string{"migrate"}, e, &stdout, &stderr); code != exitOK {
		t.Errorf("migrate beside serve: exit %d: %s", code, stderr.String())
	}

	if code := stop(); code != exitOK {
		t.Fatalf("first serve exit %d", code)
	}
	_, stop = startServe(t, e, 5)
	if code := stop(); code != exitOK {
		t.Fatalf("serve after the first stopped: exit %d", code)
	}
}
