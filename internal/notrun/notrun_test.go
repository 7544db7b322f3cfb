package notrun

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestSummaryNamesEveryReasonAndTest(t *testing.T) {
	r := &record{tests: map[string][]string{}}
	if got := r.summary("e2e"); got != "" {
		t.Errorf("nothing skipped: summary %q, want none", got)
	}
	r.add("TestBrowser", "Chromium is missing")
	r.add("TestFleet", "SWITCHBOARD_TEST_DATABASE_URL is not set")
	r.add("TestFleetBench", "SWITCHBOARD_TEST_DATABASE_URL is not set")
	r.add("TestFleet", "SWITCHBOARD_TEST_DATABASE_URL is not set")
	want := "e2e: 3 suites did not run: Chromium is missing (TestBrowser); SWITCHBOARD_TEST_DATABASE_URL is not set (TestFleet, TestFleetBench)"
	if got := r.summary("e2e"); got != want {
		t.Errorf("summary:\n got %s\nwant %s", got, want)
	}
	for i := range 7 {
		r.add("TestMany"+string(rune('A'+i)), "many")
	}
	if got := r.summary("e2e"); !strings.Contains(got, "many (TestManyA, TestManyB, TestManyC, TestManyD, TestManyE, 2 more)") || !strings.HasPrefix(got, "e2e: 10 suites did not run") {
		t.Errorf("summary of many: %s", got)
	}
}

func TestSkipRecordsAndSkips(t *testing.T) {
	t.Setenv(EnvCI, "")
	before := len(seen.tests["needs a thing"])
	t.Run("inner", func(t *testing.T) {
		Skip(t, "needs a thing")
		t.Error("Skip returned")
	})
	if got := seen.tests["needs a thing"]; len(got) != before+1 || got[len(got)-1] != "TestSkipRecordsAndSkips/inner" {
		t.Errorf("recorded %v", got)
	}
	delete(seen.tests, "needs a thing")
	seen.reasons = nil
}

// TestSummaryReachesGoTestOutput runs a package whose tests skip and note through this
// one, as go test ./... and an IDE run it (package list mode, -json), and finds the
// skip's reason in the test's own output and the package's summary line in the output
// go test hands on, not only on a terminal.
func TestSummaryReachesGoTestOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a test binary; -short leaves it out")
	}
	cmd := exec.CommandContext(t.Context(), "go", "test", "-count=1", "-json", "./testdata/skips")
	cmd.Env = append(os.Environ(), EnvCI+"=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test ./testdata/skips: %v\n%s", err, out)
	}
	var output strings.Builder
	for line := range strings.SplitSeq(string(out), "\n") {
		var ev struct{ Action, Test, Output string }
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Action == "output" {
			output.WriteString(ev.Output)
		}
	}
	for _, want := range []string{
		"needs a thing that is missing",
		"did not run: half of it (no database)",
		"skips: 2 suites did not run: needs a thing that is missing (TestNeedsAThing); half of it (no database) (TestPartly)\n",
	} {
		if !strings.Contains(output.String(), want) {
			t.Errorf("go test -json output lacks %q:\n%s", want, output.String())
		}
	}
}
