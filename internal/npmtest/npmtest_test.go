package npmtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStale: node_modules matches package-lock.json only when every package it pins is
// there at its version; a missing optional package (another platform's) is fine.
func TestStale(t *testing.T) {
	t.Parallel()
	const lock = `{"lockfileVersion":3,"packages":{"":{"name":"x"},
		"node_modules/a":{"version":"1.2.3"},
		"node_modules/b/node_modules/c":{"version":"0.1.0"},
		"node_modules/win":{"version":"9.9.9","optional":true}}}`
	write := func(t *testing.T, dir, path, body string) {
		t.Helper()
		full := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		modules map[string]string // path → version
		want    string            // a part of the reason; "" for up to date
	}{
		{name: "no node_modules", want: "node_modules is missing"},
		{name: "all pinned", modules: map[string]string{"node_modules/a": "1.2.3", "node_modules/b/node_modules/c": "0.1.0"}},
		{name: "a package missing", modules: map[string]string{"node_modules/a": "1.2.3"}, want: "node_modules/b/node_modules/c is missing"},
		{name: "another version", modules: map[string]string{"node_modules/a": "1.2.4", "node_modules/b/node_modules/c": "0.1.0"}, want: `node_modules/a is "1.2.4", package-lock.json pins "1.2.3"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			write(t, dir, "package-lock.json", lock)
			for path, version := range tt.modules {
				write(t, dir, path+"/package.json", `{"version":"`+version+`"}`)
			}
			got, err := Stale(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Fatalf("Stale = %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("no lock file", func(t *testing.T) {
		t.Parallel()
		if _, err := Stale(t.TempDir()); err == nil {
			t.Fatal("Stale without package-lock.json: no error")
		}
	})
}
