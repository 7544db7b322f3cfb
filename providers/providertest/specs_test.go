package providertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindSpec(t *testing.T) {
	t.Parallel()
	// tmp/repo/go.mod, tmp/repo/providers/slack (the working directory),
	// tmp/shared/specs/slack/x.json, and tmp/other holding a spec elsewhere.
	tmp := t.TempDir()
	mkfile := func(path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mkfile(filepath.Join(tmp, "repo", "go.mod"))
	mkfile(filepath.Join(tmp, "shared", "specs", "slack", "x.json"))
	mkfile(filepath.Join(tmp, "other", "slack", "x.json"))
	wd := filepath.Join(tmp, "repo", "providers", "slack")
	if err := os.MkdirAll(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	noRepo := filepath.Join(tmp, "elsewhere")
	if err := os.MkdirAll(noRepo, 0o755); err != nil {
		t.Fatal(err)
	}
	type findCase struct {
		name    string
		env, wd string
		rel     string
		want    string
		wantErr []string // substrings of the error
	}
	tests := []findCase{
		{name: "beside the repo root", wd: wd, rel: "slack/x.json", want: filepath.Join(tmp, "shared", "specs", "slack", "x.json")},
		{name: "from the root itself", wd: filepath.Join(tmp, "repo"), rel: "slack/x.json", want: filepath.Join(tmp, "shared", "specs", "slack", "x.json")},
		{name: "environment wins", env: filepath.Join(tmp, "other"), wd: wd, rel: "slack/x.json", want: filepath.Join(tmp, "other", "slack", "x.json")},
		{
			name: "missing file says where it looked", wd: wd, rel: "github/api.json.gz",
			wantErr: []string{filepath.Join(tmp, "shared", "specs", "github", "api.json.gz"), filepath.Join(tmp, "repo"), SpecsDirEnv},
		},
		{
			name: "missing under the environment's directory", env: filepath.Join(tmp, "other"), wd: wd, rel: "github/api.json.gz",
			wantErr: []string{filepath.Join(tmp, "other", "github", "api.json.gz"), "$" + SpecsDirEnv},
		},
	}
	// Only without a go.mod above the temporary directory can "no repo" be tested.
	if _, _, err := specsDir("", noRepo); err != nil {
		tests = append(tests, findCase{name: "no go.mod anywhere", wd: noRepo, rel: "slack/x.json", wantErr: []string{"no go.mod", noRepo, SpecsDirEnv}})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := findSpec(tt.env, tt.wd, tt.rel)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("findSpec() = %q, want an error", got)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("findSpec() error: %v", err)
			}
			if got != tt.want {
				t.Errorf("findSpec() = %q, want %q", got, tt.want)
			}
		})
	}
}
