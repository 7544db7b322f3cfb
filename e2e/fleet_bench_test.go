package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard/internal/redistest"
)

// BenchmarkFleetNodes measures the MCP throughput of one node and of three, each time
// real `switchboard serve` processes on a fresh PostgreSQL database and a redis-server
// behind the round-robin proxy of TestFleet: 16 sessions (SetParallelism 8 on 2
// cores), each opened through the proxy, send tools/list (a tenant with a GitHub
// connection, 10 tools) as fast as they are answered. ns/op is the fleet's time per
// request over all sessions; a tools/call would mostly measure the connection's rate
// limit (10 a second at GitHub's), so the request measured is the hub's own path:
// authentication, the session's record, the principal's tool list. Run with
//
//	SWITCHBOARD_TEST_DATABASE_URL=postgres://… go test -run '^$' -bench BenchmarkFleetNodes -benchtime 5s ./e2e/
func BenchmarkFleetNodes(b *testing.B) {
	base := os.Getenv(envPostgresURL)
	if base == "" {
		b.Skip("BenchmarkFleetNodes needs PostgreSQL (SWITCHBOARD_TEST_DATABASE_URL)")
	}
	redistest.Binary(b)
	bin := buildServer(b)
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			dbURL, _ := freshPostgres(b, base)
			rds := redistest.Start(b)
			gh, _ := fakeGitHub(b)
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			proxyURL := "http://" + l.Addr().String()
			env := map[string]string{
				"SWITCHBOARD_DATABASE_URL": dbURL, "SWITCHBOARD_REDIS_URL": rds.URL,
				"SWITCHBOARD_KEY_FILE": filepath.Join(b.TempDir(), "master.key"), "SWITCHBOARD_GITHUB_BASE_URL": gh.URL,
				"SWITCHBOARD_PUBLIC_URL": proxyURL, "SWITCHBOARD_LOG_LEVEL": "error",
			}
			nodes := []*server{startServer(b, bin, env)}
			for len(nodes) < n {
				nodes = append(nodes, startServer(b, bin, env))
			}
			var backends []string
			for _, s := range nodes {
				backends = append(backends, s.BaseURL)
			}
			newRRProxy(b, l, backends)
			admin := nodes[0].AdminKey
			if status, body := (&apiClient{Base: proxyURL, Key: admin}).Do(b, http.MethodPost, "/api/connections", map[string]string{"provider": "github", "token": githubToken}); status != http.StatusCreated {
				b.Fatalf("connect github: status %d, body %s", status, body)
			}
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				c, err := client.NewStreamableHttpClient(proxyURL+"/mcp/default", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + admin}))
				if err != nil {
					b.Error(err)
					return
				}
				defer c.Close()
				if err := c.Start(ctx); err != nil {
					b.Error(err)
					return
				}
				init := mcp.InitializeRequest{}
				init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
				init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
				if _, err := c.Initialize(ctx, init); err != nil {
					b.Error(err)
					return
				}
				for pb.Next() {
					res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
					if err != nil || len(res.Tools) == 0 {
						b.Errorf("tools/list: %v (%d tools)", err, len(res.Tools))
						return
					}
				}
			})
		})
	}
}
