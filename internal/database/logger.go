package database

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	"gorm.io/gorm/utils"
)

// newLogger returns the logger gorm reports failed statements to, on w: errors only,
// never SQL values (they may be sealed blobs or hashes), and not the errors callers
// expect and answer for themselves. A duplicate key is such an error: the stores turn
// it into a conflict that names the field (a taken tenant slug), so printing the SQL
// statement too would put a database error in front of the clean message. A
// statement canceled with its context (a request that went away, a shutdown) is
// another, and a missing row a third.
func newLogger(w io.Writer) logger.Interface {
	return quietLogger{out: log.New(w, "database: ", log.LstdFlags), level: logger.Error}
}

// quietLogger is gorm's logger.Interface and logger.ParamsFilter.
type quietLogger struct {
	out   *log.Logger
	level logger.LogLevel
}

var (
	_ logger.Interface  = quietLogger{}
	_ gorm.ParamsFilter = quietLogger{}
)

// LogMode returns the logger at another level.
func (l quietLogger) LogMode(level logger.LogLevel) logger.Interface {
	l.level = level
	return l
}

// Info logs msg at the info level.
func (l quietLogger) Info(_ context.Context, msg string, data ...any) {
	if l.level >= logger.Info {
		l.out.Printf(msg, data...)
	}
}

// Warn logs msg at the warn level.
func (l quietLogger) Warn(_ context.Context, msg string, data ...any) {
	if l.level >= logger.Warn {
		l.out.Printf(msg, data...)
	}
}

// Error logs msg at the error level.
func (l quietLogger) Error(_ context.Context, msg string, data ...any) {
	if l.level >= logger.Error {
		l.out.Printf(msg, data...)
	}
}

// Trace logs a statement that failed with an unexpected error: where it was made
// (the first caller outside gorm), the error, and the statement without its values.
func (l quietLogger) Trace(_ context.Context, begin time.Time, fc func() (string, int64), err error) {
	if l.level < logger.Error || err == nil || expected(err) {
		return
	}
	sql, rows := fc()
	affected := fmt.Sprint(rows)
	if rows == -1 {
		affected = "-"
	}
	l.out.Printf("%s %v\n[%.3fms] [rows:%s] %s", utils.FileWithLineNum(), err, float64(time.Since(begin).Microseconds())/1000, affected, sql)
}

// ParamsFilter keeps values out of the statements gorm renders for the logger.
func (quietLogger) ParamsFilter(_ context.Context, sql string, _ ...any) (string, []any) {
	return sql, nil
}

// expected reports errors the callers handle themselves.
func expected(err error) bool {
	return errors.Is(err, gorm.ErrDuplicatedKey) || errors.Is(err, gorm.ErrRecordNotFound) || errors.Is(err, context.Canceled)
}
