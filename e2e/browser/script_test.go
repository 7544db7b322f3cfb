package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testproc"
)

// runScript runs the Node.js script in dir, with env added to this process's, and
// decodes the JSON summary it prints as its last line into sum. It returns the
// script's exit error (a failed run still prints its summary) and its standard error;
// a script that cannot start or prints no summary fails the test.
func runScript(ctx context.Context, t *testing.T, dir, script string, env []string, sum any) (exit error, stderr string) {
	t.Helper()
	cmd := testproc.Command(ctx, "node", filepath.Join(dir, script))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &errOut
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("run node %s: %v\nstderr:\n%s", script, err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), sum); err != nil {
		t.Fatalf("%s printed no JSON summary: %v\nstdout:\n%s\nstderr:\n%s", script, err, stdout.String(), errOut.String())
	}
	return err, errOut.String()
}

// mustAPI returns a caller of the REST API that fails the test unless the answer has
// the status wanted, and decodes its body into out when out is not nil.
func mustAPI(t *testing.T, api *apiClient) func(method, path string, in any, want int, out any) {
	return func(method, path string, in any, want int, out any) {
		t.Helper()
		status, body := api.Do(t, method, path, in)
		if status != want {
			t.Fatalf("%s %s: status %d, want %d; body %s", method, path, status, want, redactKey(string(body)))
		}
		if out != nil {
			if err := json.Unmarshal(body, out); err != nil {
				t.Fatalf("%s %s: decode %s: %v", method, path, body, err)
			}
		}
	}
}
