package switchboard

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// DatabaseRetry is the wait advised to callers while the database does not answer.
const DatabaseRetry = 5 * time.Second

// DatabaseDown reports whether err says the database could not be reached or is
// too busy to answer (a refused or broken connection, a pool that closed it, SQLite's
// lock held past its busy timeout), rather than that a query was wrong: the same
// request may well succeed in a few seconds.
func DatabaseDown(err error) bool {
	if err == nil {
		return false
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"SQLITE_BUSY", "database is locked", "failed to connect to", "connection refused", "sql: database is closed", "the database system is shutting down", "the database system is starting up"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// Unavailable is the error of a request the database could not serve: coded
// unavailable, with retry advice, and err kept as its (never shown) cause.
func Unavailable(err error) *Error {
	return &Error{Code: CodeUnavailable, RetryAfter: DatabaseRetry, Err: err,
		Message: fmt.Sprintf("the database does not answer; retry in %d s", int(DatabaseRetry/time.Second))}
}
