package securitytest

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestSlowBodiesBlockNobody: eighteen connections without a valid key, each declaring a
// 4 MiB body and sending one byte of it, to the REST API, a workflow's webhook URL and the MCP URL,
// hold no part of the body budget and no wait: each is answered (401, or the webhook's
// 404) at once, without the server reading its body first, and while they stay open
// the owner's tool call is answered.
func TestSlowBodiesBlockNobody(t *testing.T) {
	t.Parallel()
	h := newHub(t, testdb.SQLite(t))
	f := h.seed()
	addr := strings.TrimPrefix(h.srv.URL, "http://")
	targets := []string{
		"/api/tools/github_get_me/call",
		"/hooks/workflows/" + f.victimSlug + "/victim_flow/github",
		"/mcp/" + f.victimSlug,
	}
	for i := range 18 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		path := targets[i%len(targets)]
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer sb_forged%d\r\nContent-Type: application/json\r\n"+
			"X-Hub-Signature-256: sha256=%064x\r\nX-GitHub-Event: issues\r\nContent-Length: 4194304\r\n\r\n{", path, addr, i, i)
		// The body's read deadline is 10 s: an answer within 5 s came before the body.
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s with its body held: %v, want an answer before the body", path, err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized && res.StatusCode != http.StatusNotFound {
			t.Errorf("%s with its body held: %d, want 401 or 404", path, res.StatusCode)
		}
	}
	if status, _, b := h.do(f.owner, http.MethodPost, "/api/tools/github_get_me/call", `{"connection_id":"`+f.connID+`","arguments":{}}`, nil); status != http.StatusOK {
		t.Fatalf("the owner's tool call beside the held bodies: %d %s", status, b)
	}
}
