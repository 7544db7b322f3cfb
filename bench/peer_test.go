package bench

import (
	"maps"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPeerAsksTheFakeGitHub checks the peer of BenchmarkToolsCallPeers: the pinned
// server-github behind supergateway, installed by npm ci, answers get_issue with the
// fake GitHub's issue, and the fake received the very request the hub makes for
// github_get_issue (same path, same token), and nothing else.
func TestPeerAsksTheFakeGitHub(t *testing.T) {
	dir := requirePeers(t)
	upstream := newRecordingUpstream(t)
	peer := startPeer(t, dir, upstream.URL)
	s, err := peer.hub().newSession()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.callPeerTool(); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := upstream.take(), map[string]int{issueRequest: 2}; !maps.Equal(got, want) {
		t.Fatalf("the fake GitHub received %v, want %v", got, want)
	}
}

// TestPeerRedirectRefusesOtherHosts checks the preload that points server-github at the
// fake GitHub refuses any other URL, so nothing the peer does leaves the machine (the
// host it is given here does not resolve either way).
func TestPeerRedirectRefusesOtherHosts(t *testing.T) {
	dir := requirePeers(t)
	script := `fetch("https://example.invalid/x").then(() => console.log("fetched"), (e) => console.log(e.message))`
	cmd := exec.CommandContext(t.Context(), "node", "--import", filepath.Join(dir, "redirect.mjs"), "-e", script)
	cmd.Env = append(cmd.Environ(), "SWITCHBOARD_BENCH_GITHUB_URL=http://127.0.0.1:9")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	if want := "redirect.mjs: refused a request to https://example.invalid/x"; !strings.Contains(string(out), want) {
		t.Fatalf("node printed %q, want it to say %q", out, want)
	}
}
