package providers

import "time"

// The deadlines of an operation's upstream work when its provider sets none.
const (
	DefaultReadDeadline  = 30 * time.Second
	DefaultWriteDeadline = 60 * time.Second
)

// Deadlines bound how long an operation's upstream work may take, rate-limit waits,
// retries and token refreshes included: Read for read-only operations, Write for the
// others. Zero takes the default.
type Deadlines struct {
	Read  time.Duration
	Write time.Duration
}

// For returns the deadline of an operation with these hints: the override's where
// set (the deployment's SWITCHBOARD_UPSTREAM_*_TIMEOUT), else d's (the provider's),
// else the default.
func (d Deadlines) For(h Hints, override Deadlines) time.Duration {
	if h.ReadOnly {
		return first(override.Read, d.Read, DefaultReadDeadline)
	}
	return first(override.Write, d.Write, DefaultWriteDeadline)
}

func first(ds ...time.Duration) time.Duration {
	for _, d := range ds {
		if d > 0 {
			return d
		}
	}
	return 0
}
