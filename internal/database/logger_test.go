package database

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/libtnb/sqlite"
	"gorm.io/gorm"
)

// TestLoggerQuietOnDuplicates checks that a duplicate key, which the stores answer as a
// conflict naming the field, prints no SQL error, while an unexpected failure still does.
func TestLoggerQuietOnDuplicates(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	db, err := gorm.Open(sqlite.Open(filepath.Join(t.TempDir(), "x.db")), config(&buf))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Close(db) })
	type thing struct {
		Slug string `gorm:"primaryKey"`
	}
	if err := db.AutoMigrate(&thing{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&thing{Slug: "acme"}).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&thing{Slug: "acme"}).Error; !errors.Is(err, gorm.ErrDuplicatedKey) {
		t.Fatalf("second insert: %v, want gorm.ErrDuplicatedKey", err)
	}
	if buf.Len() != 0 {
		t.Errorf("a duplicate key was logged:\n%s", buf.String())
	}
	if err := db.Exec("SELECT * FROM no_such_table WHERE secret = ?", "hunter2").Error; err == nil {
		t.Fatal("a query of a missing table succeeded")
	}
	got := buf.String()
	if !strings.Contains(got, "no such table") || !strings.Contains(got, "logger_test.go:") || !strings.Contains(got, "secret = ?") {
		t.Errorf("an unexpected error was not logged with the caller's place and the statement; log:\n%s", got)
	}
	if strings.Contains(got, "hunter2") {
		t.Errorf("the log shows a statement's value:\n%s", got)
	}
}
