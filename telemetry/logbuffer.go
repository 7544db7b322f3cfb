package telemetry

import (
	"io"
	"sync"
	"time"
)

// LogBufferSize and LogFlushEvery are what serve's log buffer holds and how often it
// writes: at most 64 KiB of lines, and none older than 100 ms.
const (
	LogBufferSize = 64 << 10
	LogFlushEvery = 100 * time.Millisecond
)

// LogBuffer batches the lines written to it into few writes to the underlying writer,
// so that a busy hub does not make one write system call per access log line. Lines
// keep their order and are never split. A line waits at most the flush interval; a
// full buffer is written at once; Close writes what is left. Lines still buffered
// when the process dies without Close (a crash, SIGKILL) are lost: at most one
// interval's worth.
type LogBuffer struct {
	mu   sync.Mutex
	out  io.Writer
	buf  []byte
	size int
	err  error // the underlying writer's last error, returned by the next Write

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// NewLogBuffer returns a LogBuffer writing to out when it holds size bytes and every
// interval (never on a timer when interval is 0: only when full and on Flush/Close).
func NewLogBuffer(out io.Writer, size int, interval time.Duration) *LogBuffer {
	b := &LogBuffer{out: out, buf: make([]byte, 0, size), size: size, stop: make(chan struct{}), done: make(chan struct{})}
	if interval <= 0 {
		close(b.done)
		return b
	}
	go func() {
		defer close(b.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-b.stop:
				return
			case <-t.C:
				b.Flush()
			}
		}
	}()
	return b
}

// Write buffers p (slog handlers write one whole line per call). A line larger than
// the buffer is written through after what is buffered.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.err; err != nil {
		b.err = nil
		return 0, err
	}
	if len(b.buf)+len(p) > b.size {
		b.flushLocked()
	}
	if len(p) > b.size {
		_, err := b.out.Write(p)
		return len(p), err
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// Flush writes what is buffered.
func (b *LogBuffer) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

func (b *LogBuffer) flushLocked() {
	if len(b.buf) == 0 {
		return
	}
	if _, err := b.out.Write(b.buf); err != nil {
		b.err = err
	}
	b.buf = b.buf[:0]
}

// Close stops the timer and writes what is buffered; writes after Close go through
// the buffer and need another Flush.
func (b *LogBuffer) Close() error {
	b.once.Do(func() { close(b.stop) })
	<-b.done
	b.Flush()
	return nil
}
