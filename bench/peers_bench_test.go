package bench

import (
	"bytes"
	"fmt"
	"maps"
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

// contender is one side of the comparison: the MCP server the callers call, how one
// call is made, and the CPU time of the processes that serve it.
type contender struct {
	name     string
	server   *hub
	call     func(*session) error
	cpu      func(*testing.B) time.Duration
	sessions []*session
	// Per round: CPU per call; over all rounds: latencies, calls and the wall time of
	// this side's batches.
	cpuPerCall []time.Duration
	lat        []time.Duration
	calls      int
	wall       time.Duration
}

// grow opens sessions until there are n, each its own MCP session (on the peer, its
// own server-github process).
func (c *contender) grow(b *testing.B, n int) {
	b.Helper()
	for len(c.sessions) < n {
		c.sessions = append(c.sessions, c.server.session(b))
	}
}

// BenchmarkToolsCallPeers measures, in one run against the same fake GitHub, the hub (in
// a process of its own, SQLite, every call audited) and what people host today, the
// reference GitHub MCP server behind supergateway (node processes), at 1, 16 and 64
// closed-loop callers, each with its own session. Each side makes the same call (the
// hub's github_get_issue, the peer's get_issue, both GET /repos/octocat/Hello-World/
// issues/1347 upstream with the same token, checked after every batch). The sides take
// turns in six rounds, the order alternating. Reported per side: CPU per call of its
// processes (the median of the rounds; a round's CPU of a side includes whatever it did
// while the other side ran, such as the hub's audit flush), calls/s over its batches,
// p50 and p99; and the ratios peer/hub (CPU, p50) and hub/peer (calls/s).
//
//	go test -run '^$' -bench ToolsCallPeers -benchtime 6000x -timeout 30m ./bench/
func BenchmarkToolsCallPeers(b *testing.B) {
	dir := requirePeers(b)
	upstream := newRecordingUpstream(b)
	hp := startHubProcessAt(b, upstream.URL)
	peer := startPeer(b, dir, upstream.URL)
	sides := []*contender{
		{name: "hub", server: hp.tenants[""], call: (*session).callTool, cpu: hp.cpu},
		{name: "peer", server: peer.hub(), call: (*session).callPeerTool, cpu: func(*testing.B) time.Duration { return peer.cpu() }},
	}
	for _, callers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			const rounds = 6
			perRound := max(b.N/rounds, 4*callers, 50)
			for _, s := range sides {
				s.grow(b, callers)
				// Warm up: connections, the hub's scope and pooled client, the peer's processes.
				run(b, 4*callers, callers, func(w int) error { return s.call(s.sessions[w]) })
				s.cpuPerCall, s.lat, s.calls, s.wall = nil, nil, 0, 0
			}
			upstream.take()
			b.ResetTimer()
			for r := range rounds {
				order := sides
				if r%2 == 1 {
					order = []*contender{sides[1], sides[0]}
				}
				before := make([]time.Duration, len(sides))
				for i, s := range sides {
					before[i] = s.cpu(b)
				}
				for _, s := range order {
					lat, wall := run(b, perRound, callers, func(w int) error { return s.call(s.sessions[w]) })
					s.lat = append(s.lat, lat...)
					s.calls += perRound
					s.wall += wall
					// Both sides must have asked the fake GitHub the same thing, once a call.
					if got, want := upstream.take(), map[string]int{issueRequest: perRound}; !maps.Equal(got, want) {
						b.Fatalf("%s: the fake GitHub received %v, want %v", s.name, got, want)
					}
				}
				for i, s := range sides {
					s.cpuPerCall = append(s.cpuPerCall, (s.cpu(b)-before[i])/time.Duration(perRound))
				}
			}
			b.StopTimer()
			hub, peer := sides[0], sides[1]
			median := func(d []time.Duration) time.Duration {
				s := slices.Clone(d)
				slices.Sort(s)
				return s[len(s)/2]
			}
			hubCPU, peerCPU := median(hub.cpuPerCall), median(peer.cpuPerCall)
			rate := func(c *contender) float64 { return float64(c.calls) / c.wall.Seconds() }
			for _, s := range sides {
				b.ReportMetric(micros(median(s.cpuPerCall)), s.name+"-cpu-µs/call")
				b.ReportMetric(rate(s), s.name+"-calls/s")
				b.ReportMetric(micros(pct(s.lat, 0.50)), s.name+"-p50-µs")
				b.ReportMetric(micros(pct(s.lat, 0.99)), s.name+"-p99-µs")
			}
			b.ReportMetric(float64(peerCPU)/float64(max(hubCPU, 1)), "peer/hub-cpu")
			b.ReportMetric(rate(hub)/rate(peer), "hub/peer-calls/s")
			b.ReportMetric(float64(pct(peer.lat, 0.50))/float64(pct(hub.lat, 0.50)), "peer/hub-p50")
			b.Logf("CPU per call in each round, hub: %v; peer: %v", hub.cpuPerCall, peer.cpuPerCall)
		})
	}
}
