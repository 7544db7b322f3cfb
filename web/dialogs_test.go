package web_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestScriptsAskInThePage: no script opens the browser's own dialogs (confirm, alert,
// prompt). They block the page, cannot be styled or labelled, and some browsers offer
// to silence them, after which a destructive action goes ahead unasked; the pages ask
// with app.js's ask, a dialog of their own (focus kept, Escape cancels, axe-checked).
func TestScriptsAskInThePage(t *testing.T) {
	t.Parallel()
	scripts, err := filepath.Glob(filepath.Join("static", "*.js"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts found under static/: %v", err)
	}
	native := regexp.MustCompile(`(^|[^.\w])(window\.)?(confirm|alert|prompt)\s*\(`)
	for _, path := range scripts {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if native.MatchString(line) {
				t.Errorf("%s:%d opens a browser dialog: %s", path, i+1, strings.TrimSpace(line))
			}
		}
	}
}
