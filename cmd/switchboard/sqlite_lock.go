package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// errLocked is what tryLock answers when another process holds the lock.
var errLocked = errors.New("locked")

// lockSQLite keeps a second `serve` out of the data directory a running one serves
// from with SQLite: SQLite's change feed, caches and checkpointer live in one process,
// so two servers started in one checkout (both on ./data) would each miss the other's
// changes. It takes an exclusive lock on DATA_DIR/serve.pid and writes this process's
// pid into it; a server that finds the lock held refuses to start, naming the holder's
// pid. The lock goes with the process, however it ends. PostgreSQL needs no lock: any
// number of nodes share it. The returned function releases the lock.
func lockSQLite(cfg config) (func(), error) {
	if strings.Contains(cfg.DatabaseURL, "://") {
		return func() {}, nil
	}
	db, _, _ := strings.Cut(strings.TrimPrefix(cfg.DatabaseURL, "sqlite:"), "?")
	dir := absPath(cfg.DataDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, "serve.pid")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := tryLock(f); err != nil {
		b, _ := os.ReadFile(path)
		_ = f.Close()
		if !errors.Is(err, errLocked) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		holder := "another process"
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
			holder = "another switchboard serve (pid " + strconv.Itoa(pid) + ")"
		}
		return nil, fmt.Errorf("%s is serving from the data directory %s (SQLite database %s): stop it first, or give this server a data directory of its own (SWITCHBOARD_DATA_DIR); several nodes share PostgreSQL, not SQLite", holder, dir, absPath(db))
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		_ = f.Truncate(0)
		_ = unlock(f)
		_ = f.Close()
	}, nil
}
