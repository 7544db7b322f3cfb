package rig

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/database"
	"gorm.io/gorm"
)

// EnvPostgresURL names the variable that makes the flows run on PostgreSQL too.
const EnvPostgresURL = "SWITCHBOARD_TEST_DATABASE_URL"

// APIClient calls the REST API with a bearer key.
type APIClient struct {
	Base, Key string
}

// Do sends in (JSON, if not nil) and returns the answer's status and body.
func (c *APIClient) Do(t testing.TB, method, path string, in any) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("encode %s %s: %v", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, body)
	if err != nil {
		t.Fatalf("build %s %s: %v", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Key)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read answer: %v", method, path, err)
	}
	return resp.StatusCode, out
}

// EachDatabase runs run as a parallel subtest on a SQLite file of its own and, when
// SWITCHBOARD_TEST_DATABASE_URL is set, on a fresh PostgreSQL database, handing it the
// SWITCHBOARD_DATABASE_URL that the servers it starts should share.
func EachDatabase(t *testing.T, file string, run func(t *testing.T, dbURL string)) {
	t.Helper()
	stores := []struct {
		name string
		url  func(t *testing.T) string
	}{{name: "sqlite", url: func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), file) }}}
	if base := os.Getenv(EnvPostgresURL); base != "" {
		stores = append(stores, struct {
			name string
			url  func(t *testing.T) string
		}{name: "postgres", url: func(t *testing.T) string { u, _ := FreshPostgres(t, base); return u }})
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			run(t, st.url(t))
		})
	}
}

// FreshPostgres creates a database of its own on the server base names, and drops it
// (with the server's connections) when the test ends. It returns the new database's URL
// and a connection to it.
func FreshPostgres(t testing.TB, base string) (string, *gorm.DB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	admin, err := database.Open(ctx, base)
	if err != nil {
		t.Fatalf("open %s: %v", EnvPostgresURL, err)
	}
	name := "sb_e2e_" + strings.ToLower(switchboard.RandomToken(10))
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, name)
	if err := admin.WithContext(ctx).Exec("CREATE DATABASE " + name).Error; err != nil {
		_ = database.Close(admin)
		t.Fatalf("create database %s: %v", name, err)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", EnvPostgresURL, err)
	}
	u.Path = "/" + name
	db, err := database.Open(ctx, u.String())
	if err != nil {
		t.Fatalf("open database %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = database.Close(db)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := admin.WithContext(ctx).Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)").Error; err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
		_ = database.Close(admin)
	})
	return u.String(), db
}
