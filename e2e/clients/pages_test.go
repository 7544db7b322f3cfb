package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testproc"
)

// TestTypeScriptClientPages: with a page size of 10 (SWITCHBOARD_MCP_LIST_PAGE_SIZE),
// the official TypeScript client lists a tenant with GitHub connected page by page,
// following nextCursor, and gets every tool exactly once; the same tenant without a
// page size to speak of lists the same tools in one answer.
func TestTypeScriptClientPages(t *testing.T) {
	t.Parallel()
	requireNode(t)
	ensureClientPackages(t)
	bin := buildServer(t)
	gh, _ := fakeGitHub(t)
	list := func(t *testing.T, pageSize string) [][]string {
		srv := startServer(t, bin, map[string]string{"SWITCHBOARD_GITHUB_BASE_URL": gh.URL, "SWITCHBOARD_MCP_LIST_PAGE_SIZE": pageSize})
		api := &apiClient{Base: srv.BaseURL, Key: srv.AdminKey}
		if status, body := api.Do(t, http.MethodPost, "/api/connections", map[string]string{"provider": "github", "token": githubToken}); status != http.StatusCreated {
			t.Fatalf("connect github: status %d, body %s", status, body)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		cmd := testproc.Command(ctx, "node", filepath.Join(clientDir(t), "pages.mjs"))
		cmd.Dir = clientDir(t)
		cmd.Env = append(os.Environ(), "MCP_URL="+srv.MCPURL, "KEY="+srv.AdminKey)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("run pages.mjs: %v\nstderr:\n%s", err, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		var sum struct {
			Pages [][]string `json:"pages"`
			Error string     `json:"error"`
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil || sum.Error != "" {
			t.Fatalf("pages.mjs: %v %s\nstdout:\n%s\nstderr:\n%s", err, sum.Error, stdout.String(), stderr.String())
		}
		return sum.Pages
	}
	whole := list(t, "10000")
	if len(whole) != 1 || len(whole[0]) < 51 {
		t.Fatalf("with a page size of 10,000: %d pages, the first of %d tools; want one page with GitHub's 51 and the hub's", len(whole), len(whole[0]))
	}
	pages := list(t, "10")
	var got []string
	for i, p := range pages {
		if len(p) > 10 || (i < len(pages)-1 && len(p) != 10) {
			t.Errorf("page %d holds %d tools; want 10 on every page but the last", i, len(p))
		}
		got = append(got, p...)
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(whole[0]))
	if !slices.Equal(got, want) {
		t.Errorf("%d pages gave %d tools %v\nwant the %d of one answer %v", len(pages), len(got), got, len(want), want)
	}
	t.Logf("%d tools in %d pages", len(got), len(pages))
}
