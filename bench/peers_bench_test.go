package bench

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"slices"
	"testing"
	"time"
)

// peerCall is server-github's get_issue with the arguments of the hub's github_get_issue.
const peerCall = `{"name":"get_issue","arguments":{"owner":"octocat","repo":"Hello-World","issue_number":1347}}`

// callPeerTool calls the peer's get_issue and checks its answer is the fake's issue.
func (s *session) callPeerTool() error {
	res, err := s.rpc("tools/call", peerCall)
	if err != nil {
		return err
	}
	if bytes.Contains(res, []byte(`"isError":true`)) || !bytes.Contains(res, []byte(`Found a bug`)) || !bytes.Contains(res, []byte(`1347`)) {
		return fmt.Errorf("the peer's get_issue failed: %.300s", res)
	}
	return nil
}

// githubMCPServerCall is github-mcp-server's issue_read (get) with the same arguments.
const githubMCPServerCall = `{"name":"issue_read","arguments":{"method":"get","owner":"octocat","repo":"Hello-World","issue_number":1347}}`

// callGitHubMCPServerTool calls github-mcp-server's issue_read and checks its answer is
// the fake's issue.
func (s *session) callGitHubMCPServerTool() error {
	res, err := s.rpc("tools/call", githubMCPServerCall)
	if err != nil {
		return err
	}
	if bytes.Contains(res, []byte(`"isError":true`)) || !bytes.Contains(res, []byte(`Found a bug`)) || !bytes.Contains(res, []byte(`1347`)) {
		return fmt.Errorf("github-mcp-server's issue_read failed: %.300s", res)
	}
	return nil
}

// contender is one side of the comparison: the MCP server the callers call, how one
// call is made, what it asks the fake GitHub, and the CPU time of the processes that
// serve it.
type contender struct {
	name     string
	server   *hub
	call     func(*session) error
	requests []string // the requests upstream of each call, as the recording upstream keys them
	cpu      func(*testing.B) time.Duration
	gateway  func() time.Duration // of cpu, supergateway's own; nil for the hub
	sessions []*session
	warmed   int // callers it was warmed up with
	// Per round: CPU per call; over all rounds: latencies, calls and the wall time of
	// this side's batches.
	cpuPerCall []time.Duration
	gatewayCPU time.Duration // over all rounds
	lat        []time.Duration
	calls      int
	wall       time.Duration
}

// grow opens sessions until there are n, each its own MCP session (on a peer, its own
// server process).
func (c *contender) grow(b *testing.B, n int) {
	b.Helper()
	for len(c.sessions) < n {
		c.sessions = append(c.sessions, c.server.session(b))
	}
}

// BenchmarkToolsCallPeers measures, in one run against the same fake GitHub, the hub (in
// a process of its own, SQLite, every call audited) and what people host today: the
// reference GitHub MCP server (@modelcontextprotocol/server-github, node) and the
// official one (github-mcp-server, Go), each behind supergateway (node), at 1, 16 and
// 64 closed-loop callers, each caller with its own session. Each side makes the same
// call (the hub's github_get_issue, server-github's get_issue, github-mcp-server's
// issue_read get), one GET of the issue upstream with the same token, checked after
// every batch (github-mcp-server, as a GitHub Enterprise Server, under /api/v3, and
// then a GraphQL query of its own, which the fake answers with no nodes). The
// sides take turns in six rounds, each round starting with the next side. Reported
// per side: CPU per call of its processes (the median of the rounds; a round's CPU of
// a side includes what it did while the others ran, such as the hub's audit flush),
// calls/s over its batches, p50 and p99; for a peer, how much of its CPU is
// supergateway's own process (over all rounds); and each peer's ratios to the hub.
//
//	go test -run '^$' -bench ToolsCallPeers -benchtime 6000x -timeout 60m ./bench/
//
// SWITCHBOARD_BENCH_NO_GITHUB_MCP_SERVER=1 leaves github-mcp-server out (it is built
// from the module proxy).
func BenchmarkToolsCallPeers(b *testing.B) {
	dir := requirePeers(b)
	upstream := newRecordingUpstream(b)
	hp := startHubProcessAt(b, upstream.URL)
	reference := startPeer(b, dir, upstream.URL)
	sides := []*contender{
		{name: "hub", server: hp.tenants[""], call: (*session).callTool, requests: []string{issueRequest}, cpu: hp.cpu},
		{name: "server-github", server: reference.hub(), call: (*session).callPeerTool, requests: []string{issueRequest},
			cpu: func(*testing.B) time.Duration { return reference.cpu() }, gateway: reference.gatewayCPU},
	}
	if os.Getenv(envNoGitHubMCPServer) == "" {
		official := startGitHubMCPServer(b, dir, buildGitHubMCPServer(b), upstream.URL)
		sides = append(sides, &contender{name: "github-mcp-server", server: official.hub(), call: (*session).callGitHubMCPServerTool,
			requests: []string{"GET /api/v3/repos/octocat/Hello-World/issues/1347 Bearer " + peerToken, "POST /api/graphql Bearer " + peerToken},
			cpu:      func(*testing.B) time.Duration { return official.cpu() }, gateway: official.gatewayCPU})
	}
	for _, callers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			const rounds = 6
			perRound := max(b.N/rounds, 4*callers, 50)
			for _, s := range sides {
				s.grow(b, callers)
				// Warm up: connections, the hub's scope and pooled client, the peers'
				// processes and node's JIT (server-github's CPU per call falls by half over
				// a process's first hundred calls or so).
				if s.warmed < callers { // once per number of callers: b.Run runs this twice
					run(b, 150*callers, callers, func(w int) error { return s.call(s.sessions[w]) })
					s.warmed = callers
				}
				s.cpuPerCall, s.gatewayCPU, s.lat, s.calls, s.wall = nil, 0, nil, 0, 0
			}
			upstream.take()
			b.ResetTimer()
			for r := range rounds {
				before := make([]time.Duration, len(sides))
				gatewayBefore := make([]time.Duration, len(sides))
				for i, s := range sides {
					before[i] = s.cpu(b)
					if s.gateway != nil {
						gatewayBefore[i] = s.gateway()
					}
				}
				for k := range sides {
					s := sides[(r+k)%len(sides)]
					lat, wall := run(b, perRound, callers, func(w int) error { return s.call(s.sessions[w]) })
					s.lat = append(s.lat, lat...)
					s.calls += perRound
					s.wall += wall
					// Every side must have asked the fake GitHub for the issue, once a call.
					want := map[string]int{}
					for _, req := range s.requests {
						want[req] = perRound
					}
					if got := upstream.take(); !maps.Equal(got, want) {
						b.Fatalf("%s: the fake GitHub received %v, want %v", s.name, got, want)
					}
				}
				for i, s := range sides {
					s.cpuPerCall = append(s.cpuPerCall, (s.cpu(b)-before[i])/time.Duration(perRound))
					if s.gateway != nil {
						s.gatewayCPU += s.gateway() - gatewayBefore[i]
					}
				}
			}
			b.StopTimer()
			median := func(d []time.Duration) time.Duration {
				s := slices.Clone(d)
				slices.Sort(s)
				return s[len(s)/2]
			}
			rate := func(c *contender) float64 { return float64(c.calls) / c.wall.Seconds() }
			hub := sides[0]
			for _, s := range sides {
				b.ReportMetric(micros(median(s.cpuPerCall)), s.name+"-cpu-µs/call")
				b.ReportMetric(rate(s), s.name+"-calls/s")
				b.ReportMetric(micros(pct(s.lat, 0.50)), s.name+"-p50-µs")
				b.ReportMetric(micros(pct(s.lat, 0.99)), s.name+"-p99-µs")
				if s.gateway != nil {
					b.ReportMetric(micros(s.gatewayCPU/time.Duration(s.calls)), s.name+"-gateway-cpu-µs/call")
				}
				if s != hub {
					b.ReportMetric(float64(median(s.cpuPerCall))/float64(max(median(hub.cpuPerCall), 1)), s.name+"/hub-cpu")
					b.ReportMetric(rate(hub)/rate(s), "hub/"+s.name+"-calls/s")
					b.ReportMetric(float64(pct(s.lat, 0.50))/float64(pct(hub.lat, 0.50)), s.name+"/hub-p50")
				}
				b.Logf("%s: CPU per call in each round %v", s.name, s.cpuPerCall)
			}
		})
	}
}
