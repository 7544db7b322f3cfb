package securitytest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var fuzzFunc = regexp.MustCompile(`(?m)^func (Fuzz\w+)\(f \*testing\.F\)`)

// TestCIRunsEveryFuzzTarget: .ci/run fuzzes every fuzz target of the repository, and
// each has a checked-in corpus, so a new decoder's target cannot be left out of CI.
func TestCIRunsEveryFuzzTarget(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		for _, m := range fuzzFunc.FindAllSubmatch(src, -1) {
			found++
			name := string(m[1])
			if want := `"` + name + ` ./` + filepath.ToSlash(dir) + `/"`; !strings.Contains(string(ci), want) {
				t.Errorf("%s (in %s) is not fuzzed by .ci/run: add %s to its fuzz step", name, dir, want)
			}
			if entries, err := os.ReadDir(filepath.Join(filepath.Dir(path), "testdata", "fuzz", name)); err != nil || len(entries) == 0 {
				t.Errorf("%s (in %s) has no checked-in corpus under testdata/fuzz/%s", name, dir, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Error("found no fuzz target in the repository")
	}
}
