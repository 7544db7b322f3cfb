package mcpadapter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFileMapNamesEveryFile keeps doc.go's file map whole: every file of the package
// (tests aside) is named there, and every file named there exists.
func TestFileMapNamesEveryFile(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "doc.go" {
			continue
		}
		have[f] = true
		if !strings.Contains(string(doc), f) {
			t.Errorf("doc.go's file map does not name %s", f)
		}
	}
	for _, word := range strings.Fields(strings.NewReplacer(",", " ", ":", " ").Replace(string(doc))) {
		if strings.HasSuffix(word, ".go") && word != "doc.go" && !have[word] {
			t.Errorf("doc.go's file map names %s, which is not a file of the package", word)
		}
	}
}
