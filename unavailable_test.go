package switchboard_test

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/switchboard-hub/switchboard"
)

func TestDatabaseDown(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "nil", err: nil, want: false},
		{name: "dial refused, wrapped", err: fmt.Errorf("open connection con_1: %w", refused), want: true},
		{name: "bad connection", err: fmt.Errorf("query: %w", driver.ErrBadConn), want: true},
		{name: "sqlite busy", err: errors.New("database is locked (5) (SQLITE_BUSY)"), want: true},
		{name: "pool closed", err: errors.New("sql: database is closed"), want: true},
		{name: "postgres restarting", err: errors.New("FATAL: the database system is starting up (SQLSTATE 57P03)"), want: true},
		{name: "a wrong query", err: errors.New(`ERROR: column "nope" does not exist (SQLSTATE 42703)`), want: false},
		{name: "not found", err: switchboard.NotFound("connection"), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := switchboard.DatabaseDown(tt.err); got != tt.want {
				t.Errorf("DatabaseDown(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
	e := switchboard.Unavailable(refused)
	if e.Code != switchboard.CodeUnavailable || e.RetryAfter != switchboard.DatabaseRetry || e.Message != "the database does not answer; retry in 5 s" {
		t.Errorf("Unavailable = %+v", e)
	}
}
