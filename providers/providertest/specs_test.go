package providertest

import (
	"io/fs"
	"path"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
)

// TestDescriptionsNeedNoFiles loads both descriptions from a working directory with
// nothing around it, as a test binary in a plain clone (no shared/ directory beside the
// repository) or in another package's directory does.
func TestDescriptionsNeedNoFiles(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, tt := range []struct {
		name, rel string
		parse     func([]byte) (*openapi3.T, error)
		op        string // an operation the description must have
	}{
		{name: "GitHub", rel: "github/api.github.com.json.gz", parse: parseGitHub, op: "issues/create"},
		{name: "Slack", rel: "slack/slack_web_openapi_v2.json.gz", parse: parseSlack, op: "chat_postMessage"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := loadDescription(tt.name, tt.rel, tt.parse)
			if err != nil {
				t.Fatal(err)
			}
			if d.byID[tt.op] == nil {
				t.Errorf("%s description has no operation %s", tt.name, tt.op)
			}
		})
	}
}

// TestSpecsCarryTheirLicences checks that every embedded description sits beside the
// licence it is distributed under.
func TestSpecsCarryTheirLicences(t *testing.T) {
	t.Parallel()
	var got []string
	err := fs.WalkDir(specs, "testdata/specs", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		got = append(got, path.Base(path.Dir(p))+"/"+d.Name())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"github/LICENSE", "github/api.github.com.json.gz", "slack/LICENSE", "slack/slack_web_openapi_v2.json.gz"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("embedded files (-want +got):\n%s", diff)
	}
}
