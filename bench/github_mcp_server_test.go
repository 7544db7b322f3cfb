package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testproc"
)

// githubMCPServerVersion is the official GitHub MCP server (Go) the peer comparison
// measures, pinned in testdata/githubmcp/go.mod.
const githubMCPServerVersion = "v1.9.0"

// buildGitHubMCPServer builds github-mcp-server from the module proxy (its pinned
// version, in testdata/githubmcp's module of its own) into a temporary directory.
func buildGitHubMCPServer(b *testing.B) string {
	b.Helper()
	wd, err := os.Getwd()
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(b.TempDir(), "github-mcp-server")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := testproc.Command(ctx, "go", "build", "-o", bin, "github.com/github/github-mcp-server/cmd/github-mcp-server")
	cmd.Dir = filepath.Join(wd, "testdata", "githubmcp")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building github-mcp-server %s (set %s=1 to measure without it): %v\n%s", githubMCPServerVersion, envNoGitHubMCPServer, err, out)
	}
	return bin
}

// envNoGitHubMCPServer set leaves github-mcp-server out of BenchmarkToolsCallPeers, for
// a machine that cannot reach the module proxy.
const envNoGitHubMCPServer = "SWITCHBOARD_BENCH_NO_GITHUB_MCP_SERVER"

// startGitHubMCPServer starts github-mcp-server (stdio) behind supergateway, as a GitHub
// Enterprise Server at a host that does not resolve, every request of it through a proxy
// that is the fake upstream at upstreamURL: the server takes no port in its host, and Go
// sends no request for a loopback address through a proxy. So the fake sees each GitHub
// call under /api/v3, and nothing leaves the machine (HTTPS through the proxy fails).
func startGitHubMCPServer(b *testing.B, dir, bin, upstreamURL string) *peerProcess {
	b.Helper()
	return startGateway(b, dir, bin+" stdio", bin,
		"GITHUB_HOST=http://fakegithub.test", "HTTP_PROXY="+upstreamURL, "HTTPS_PROXY="+upstreamURL, "NO_PROXY=", "no_proxy=")
}
