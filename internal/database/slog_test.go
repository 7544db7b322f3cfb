package database_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/database"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testlog"
)

func TestLogTo(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	var out testlog.Buffer
	database.LogTo(db, slog.New(slog.NewJSONHandler(&out, nil)))
	if err := db.WithContext(context.Background()).Exec(`INSERT INTO missing_table (secret) VALUES (?)`, "s3cret-value").Error; err == nil {
		t.Fatal("insert into a missing table succeeded")
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("logged %d lines, want 1: %s", len(lines), out.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["level"] != "ERROR" || rec["msg"] != "database statement failed" || !strings.Contains(rec["err"].(string), "missing_table") ||
		!strings.Contains(rec["sql"].(string), "INSERT INTO missing_table") {
		t.Errorf("log line %s", lines[0])
	}
	if strings.Contains(lines[0], "s3cret-value") {
		t.Errorf("the log line carries a value: %s", lines[0])
	}
}
