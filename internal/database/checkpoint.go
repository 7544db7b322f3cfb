package database

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
)

// A SQLite database's write-ahead log is copied into the database file by a checkpoint,
// which syncs the log and the file (two fsyncs) and copies every page written since the
// last one. By default the connection whose commit takes the log past 1,000 pages runs
// it, inside that commit: the audit writer's group commit, which every answered tool
// call waits for, then waited for the checkpoint too. On the benchmark machine that
// was 5–80 ms every 100–200 ms, the largest part of a tool call's p99 (docs/performance.md,
// "What limits each figure").
//
// So the pool's connections never checkpoint (wal_autocheckpoint(0)), and a
// checkpointer does it beside them, on a connection of its own:
//   - every checkpointEvery, a PASSIVE checkpoint, which neither waits for nor blocks
//     readers and writers: the fsyncs and the copying are its own, not a commit's;
//   - once the log holds restartFrames pages, right after a passive one, a RESTART
//     checkpoint. A passive one copies the log but never restarts it while commits keep
//     coming (a writer restarts the log only if it began when the whole log was
//     copied), so the log would grow without end. RESTART waits for the writer of the
//     moment, holds new writers back while it copies what the passive one left (the
//     pages of a few milliseconds) and syncs, so that the next writer writes the log
//     from its start again: the one pause writers see (3–7 ms in the benchmark),
//     every restartFrames pages instead of every 1,000. The log file keeps its size,
//     about restartFrames pages (32 MiB); TRUNCATE, which empties it, paused writers
//     14–27 ms on the benchmark machine (the file's blocks freed and allocated again). Writers
//     that commit often (the audit writer) hold the database's WriteGate while they
//     write, and the checkpointer holds it alone for the RESTART: they wait for it
//     on the gate, and go on the moment it is done, rather than in SQLite's busy
//     handler, which sleeps 1, 2, 5, 10, 15… ms between tries (40 ms pauses in the
//     benchmark).
const (
	checkpointEvery = 100 * time.Millisecond
	restartFrames   = 8192
)

// checkpointer runs a SQLite database's checkpoints in the background (see above).
type checkpointer struct {
	conn      *sql.DB // its own connection, on the pool's file
	dsn       string
	pool      *sql.DB // the pool it checkpoints for: closed, the checkpointer stops
	every     time.Duration
	restartAt int
	log       io.Writer // where failures are reported
	gate      *sync.RWMutex
	gated     atomic.Int64 // restarts that waited for the gate, for tests
	restarts  atomic.Int64 // restarts done, for tests
	stop      chan struct{}
	done      chan struct{}
	once      sync.Once
}

// checkpointers are the running checkpointers by the pool they serve, for Close.
var checkpointers sync.Map // *sql.DB → *checkpointer

// startCheckpointer opens a connection of its own on dsn and checkpoints pool's
// database from it, every every and restarting the log at restartAt pages, until
// Close closes pool.
func startCheckpointer(pool *sql.DB, dsn string, log io.Writer, every time.Duration, restartAt int) (*checkpointer, error) {
	conn, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open the checkpointer's connection: %w", err)
	}
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	conn.SetConnMaxIdleTime(0)
	conn.SetConnMaxLifetime(0)
	gate := &sync.RWMutex{}
	if old, ok := checkpointers.Load(pool); ok {
		gate = old.(*checkpointer).gate // its writers hold it already (a test's restart)
	}
	c := &checkpointer{conn: conn, dsn: dsn, pool: pool, every: every, restartAt: restartAt, log: log, gate: gate,
		stop: make(chan struct{}), done: make(chan struct{})}
	checkpointers.Store(pool, c)
	go c.run()
	return c, nil
}

func (c *checkpointer) run() {
	defer close(c.done)
	defer c.conn.Close()
	t := time.NewTicker(c.every)
	defer t.Stop()
	failing := false // a failure is reported once, not every tick
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		_, err := c.pass(context.Background())
		if err != nil && !failing {
			fmt.Fprintf(c.log, "database: checkpoint of the SQLite log failed (retrying every %s): %v\n", c.every, err)
		}
		failing = err != nil
	}
}

// pass runs one checkpoint: passive, then a restarting one if the log has grown to
// restartAt pages. It returns the pages in the log.
func (c *checkpointer) pass(ctx context.Context) (frames int, err error) {
	var busy, logged, copied int
	if err := c.conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logged, &copied); err != nil {
		return 0, fmt.Errorf("passive checkpoint: %w", err)
	}
	if logged < c.restartAt {
		return logged, nil
	}
	if !c.gate.TryLock() {
		c.gated.Add(1)
		c.gate.Lock()
	}
	defer c.gate.Unlock()
	if err := c.conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(RESTART)").Scan(&busy, &logged, &copied); err != nil {
		return 0, fmt.Errorf("restarting checkpoint: %w", err)
	}
	if busy == 0 {
		c.restarts.Add(1)
	}
	return logged, nil
}

// close stops the checkpointer and closes its connection.
func (c *checkpointer) close() {
	c.once.Do(func() {
		checkpointers.CompareAndDelete(c.pool, c)
		close(c.stop)
	})
	<-c.done
}

// WriteGate is the gate of the database's frequent writers (see checkpointer): a
// writer holds it shared while it writes, and waits there while the log is
// restarted. Nil for a database without a checkpointer (PostgreSQL): a nil gate's
// holders hold nothing (use Enter and Leave).
func WriteGate(db *gorm.DB) *Gate {
	pool, err := db.DB()
	if err != nil {
		return nil
	}
	if c, ok := checkpointers.Load(pool); ok {
		return &Gate{mu: c.(*checkpointer).gate}
	}
	return nil
}

// Gate is a database's WriteGate.
type Gate struct{ mu *sync.RWMutex }

// Enter waits until the log is not being restarted and holds it so until Leave.
func (g *Gate) Enter() {
	if g != nil {
		g.mu.RLock()
	}
}

// Leave ends Enter.
func (g *Gate) Leave() {
	if g != nil {
		g.mu.RUnlock()
	}
}

// stopCheckpointer stops the checkpointer of pool, if it has one.
func stopCheckpointer(pool *sql.DB) {
	if c, ok := checkpointers.Load(pool); ok {
		c.(*checkpointer).close()
	}
}
