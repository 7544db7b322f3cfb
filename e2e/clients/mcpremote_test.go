package clients

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
	"time"
)

// TestMCPRemote connects mcp-remote, as a desktop app's config starts it with only the
// MCP URL, to a live server (e2e/client/mcpremote.mjs): it registers, the person allows
// it on the consent page (over HTTP), and initialize and tools/list work through it.
func TestMCPRemote(t *testing.T) {
	t.Parallel()
	requireNode(t)
	ensureClientPackages(t)
	bin := buildServer(t)
	srv := startServer(t, bin, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(clientDir(t), "mcpremote.mjs"))
	cmd.Dir = clientDir(t)
	cmd.Env = append(os.Environ(), "TENANT_URL="+srv.MCPURL, "ADMIN_LINK="+srv.AdminLink, "CONFIG_DIR="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run mcpremote.mjs: %v\n%s", err, stderr.String())
	}
	var s struct {
		OK       bool     `json:"ok"`
		Failures []string `json:"failures"`
	}
	line := strings.TrimSpace(stdout.String())
	if i := strings.LastIndex(line, "\n"); i >= 0 {
		line = line[i+1:]
	}
	if err := json.Unmarshal([]byte(line), &s); err != nil {
		t.Fatalf("mcpremote.mjs printed no summary (%v): stdout %q stderr %s", err, stdout.String(), stderr.String())
	}
	for _, f := range s.Failures {
		t.Errorf("mcpremote.mjs: %s", f)
	}
	if !s.OK {
		t.Errorf("mcpremote.mjs failed: %s", line)
	}
	t.Logf("mcp-remote: %s", line)
}
