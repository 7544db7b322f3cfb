package database

import (
	"context"
	"log/slog"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	"gorm.io/gorm/utils"
)

// LogTo sends the failed statements gorm reports to log instead of stderr: structured
// (err, sql without values, where), with the request's context (its trace id), and
// through log's handler, which folds the same error repeated (a database outage) into
// one line and a count. Call it once, right after Open.
func LogTo(db *gorm.DB, log *slog.Logger) {
	db.Logger = slogLogger{log: log, level: logger.Error}
}

// slogLogger is gorm's logger.Interface and logger.ParamsFilter on a slog.Logger.
type slogLogger struct {
	log   *slog.Logger
	level logger.LogLevel
}

var (
	_ logger.Interface  = slogLogger{}
	_ gorm.ParamsFilter = slogLogger{}
)

// LogMode returns the logger at another level.
func (l slogLogger) LogMode(level logger.LogLevel) logger.Interface {
	l.level = level
	return l
}

// Info logs msg at the info level.
func (l slogLogger) Info(ctx context.Context, msg string, data ...any) {
	if l.level >= logger.Info {
		l.log.InfoContext(ctx, "database: "+msg, "data", data)
	}
}

// Warn logs msg at the warn level.
func (l slogLogger) Warn(ctx context.Context, msg string, data ...any) {
	if l.level >= logger.Warn {
		l.log.WarnContext(ctx, "database: "+msg, "data", data)
	}
}

// Error logs msg at the error level.
func (l slogLogger) Error(ctx context.Context, msg string, data ...any) {
	if l.level >= logger.Error {
		l.log.ErrorContext(ctx, "database: "+msg, "data", data)
	}
}

// Trace logs a statement that failed with an unexpected error: the error, the
// statement without its values, where it was made and how long it took. The message
// is the same for every statement, so repeats of one error fold together.
func (l slogLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	if l.level < logger.Error || err == nil || expected(err) {
		return
	}
	sql, _ := fc()
	l.log.LogAttrs(ctx, slog.LevelError, "database statement failed",
		slog.String("err", err.Error()), slog.String("sql", sql),
		slog.String("at", utils.FileWithLineNum()), slog.Duration("took", time.Since(begin)))
}

// ParamsFilter keeps values out of the statements gorm renders for the logger.
func (slogLogger) ParamsFilter(_ context.Context, sql string, _ ...any) (string, []any) {
	return sql, nil
}
