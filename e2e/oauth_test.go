package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/oauthtest"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestOAuthTwoProcesses runs two real `switchboard serve` processes on one database
// (a shared SQLite file, and a PostgreSQL database when SWITCHBOARD_TEST_DATABASE_URL is
// set) behind one public URL, against a real authorization server shaped like GitHub.
// A browser connects GitHub through process A; the token is due for refresh at once
// (it lives 4 minutes, inside the 5-minute window); 100 tool calls on each process at
// the same time refresh it exactly once between them; the callback cannot be replayed;
// process B disconnects and revokes the grant; and no token, code, state or client
// secret appears in either process's logs or in any answer.
func TestOAuthTwoProcesses(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	eachDatabase(t, "shared.db", func(t *testing.T, dbURL string) {
		runOAuthTwoProcesses(t, bin, map[string]string{"SWITCHBOARD_DATABASE_URL": dbURL})
	})
}

const (
	e2eClientID     = "Iv1.e2e-switchboard"
	e2eClientSecret = "e2e-client-secret-0123456789abcdef"
)

func runOAuthTwoProcesses(t *testing.T, bin string, env map[string]string) {
	addrA, addrB := freeAddr(t), freeAddr(t)
	public := "http://" + addrA
	as := oauthtest.New(t, oauthtest.Options{
		Style: oauthtest.GitHub, ClientID: e2eClientID, ClientSecret: e2eClientSecret, RedirectURI: public + "/oauth/callback",
		CodeTokenTTL: 4 * time.Minute, RefreshedTokenTTL: 8 * time.Hour,
	})
	env["SWITCHBOARD_PUBLIC_URL"] = public
	env["SWITCHBOARD_KEY_FILE"] = filepath.Join(t.TempDir(), "shared.key")
	env["SWITCHBOARD_GITHUB_BASE_URL"] = as.APIBase()
	env["SWITCHBOARD_OAUTH_GITHUB_CLIENT_ID"] = e2eClientID
	env["SWITCHBOARD_OAUTH_GITHUB_CLIENT_SECRET"] = e2eClientSecret
	env["SWITCHBOARD_OAUTH_GITHUB_AUTH_URL"] = as.AuthURL()
	env["SWITCHBOARD_OAUTH_GITHUB_TOKEN_URL"] = as.TokenURL()
	env["SWITCHBOARD_REFRESH_INTERVAL"] = "1h" // the calls, not the background pass, refresh here
	env["SWITCHBOARD_LOG_LEVEL"] = "debug"
	withAddr := func(addr string) map[string]string {
		m := map[string]string{"SWITCHBOARD_ADDR": addr}
		for k, v := range env {
			m[k] = v
		}
		return m
	}
	a := startServer(t, bin, withAddr(addrA))
	b := startServer(t, bin, withAddr(addrB))
	key := a.AdminKey

	var bodies []string
	var bodiesMu sync.Mutex
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	send := func(c *http.Client, method, u, body string, auth bool) (int, string, *url.URL) {
		t.Helper()
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, u, r)
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
			if strings.Contains(body, "decision=") {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
		}
		if auth {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, u, err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if !strings.HasPrefix(u, as.URL) && !strings.Contains(string(data), "authorization_url") {
			bodiesMu.Lock()
			bodies = append(bodies, string(data))
			bodiesMu.Unlock()
		}
		return resp.StatusCode, string(data), resp.Request.URL
	}

	// Connect through process A in the browser.
	status, body, _ := send(browser, http.MethodPost, a.BaseURL+"/api/connections/github/authorize", "", true)
	if status != http.StatusOK {
		t.Fatalf("authorize: %d %s", status, body)
	}
	var auth struct {
		URL string `json:"authorization_url"`
	}
	if err := json.Unmarshal([]byte(body), &auth); err != nil {
		t.Fatal(err)
	}
	status, page, _ := send(browser, http.MethodGet, auth.URL, "", false)
	m := regexp.MustCompile(`name="request" value="([^"]*)"`).FindStringSubmatch(page)
	if status != http.StatusOK || m == nil {
		t.Fatalf("consent page: %d %s", status, page)
	}
	request := strings.NewReplacer("&amp;", "&", "&#43;", "+").Replace(m[1])
	form := url.Values{"request": {request}, "decision": {"allow"}, "user": {"octocat"}}
	status, page, callback := send(browser, http.MethodPost, as.URL+"/consent", form.Encode(), false)
	if status != http.StatusOK || !strings.Contains(page, "octocat is connected") {
		t.Fatalf("callback: %d %s", status, page)
	}
	// Replaying the callback creates nothing.
	if status, page, _ := send(browser, http.MethodGet, callback.String(), "", false); status != http.StatusBadRequest || !strings.Contains(page, "was used already") {
		t.Errorf("replayed callback: %d %s", status, page)
	}
	var list struct {
		Connections []struct {
			ID string `json:"id"`
		} `json:"connections"`
	}
	_, body, _ = send(http.DefaultClient, http.MethodGet, b.BaseURL+"/api/connections", "", true)
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list.Connections) != 1 {
		t.Fatalf("connections seen by process B: %s", body)
	}
	id := list.Connections[0].ID

	// 100 calls on each process at once: one refresh between them.
	var wg sync.WaitGroup
	errs := make([]string, 200)
	call := fmt.Sprintf(`{"connection_id":%q,"arguments":{"owner":"o","repo":"r","issue_number":1}}`, id)
	for i := range errs {
		base := a.BaseURL
		if i%2 == 1 {
			base = b.BaseURL
		}
		wg.Go(func() {
			status, body, _ := send(http.DefaultClient, http.MethodPost, base+"/api/tools/github_get_issue/call", call, true)
			if status != http.StatusOK || !strings.Contains(body, "Refresh once") {
				errs[i] = fmt.Sprintf("%d %s", status, body)
			}
		})
	}
	testwait.Wait(t, "the concurrent calls to be answered", wg.Wait)
	for i, e := range errs {
		if e != "" {
			t.Fatalf("call %d: %s", i, e)
		}
	}
	if got := as.Refreshes(); got != 1 {
		t.Errorf("refreshes = %d across two processes, want 1", got)
	}

	// Process B disconnects: the grant is revoked upstream.
	if status, body, _ := send(http.DefaultClient, http.MethodDelete, b.BaseURL+"/api/connections/"+id, "", true); status != http.StatusNoContent {
		t.Errorf("disconnect: %d %s", status, body)
	}
	if as.Revocations() != 1 {
		t.Errorf("revocations = %d, want 1", as.Revocations())
	}

	// No secret in the logs of either process, nor in any answer.
	var secrets []string
	for _, r := range as.Requests() {
		for _, k := range []string{"code", "refresh_token", "code_verifier", "client_secret", "state"} {
			if v := r.Form.Get(k); len(v) >= 8 {
				secrets = append(secrets, v)
			}
		}
		if tok, ok := strings.CutPrefix(r.Auth, "Bearer "); ok {
			secrets = append(secrets, tok)
		}
	}
	if len(secrets) < 6 {
		t.Fatalf("only %d secrets collected; the search would prove little", len(secrets))
	}
	time.Sleep(200 * time.Millisecond) // let the last log lines arrive
	logs := a.Stdout.String() + a.Stderr.String() + b.Stdout.String() + b.Stderr.String()
	bodiesMu.Lock()
	defer bodiesMu.Unlock()
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			t.Errorf("a log line carries a secret (%.6s…)", s)
		}
		for _, body := range bodies {
			if strings.Contains(body, s) {
				t.Errorf("an answer carries a secret (%.6s…): %s", s, body)
			}
		}
	}
	if !strings.Contains(logs, "/oauth/callback") || !strings.Contains(logs, "/api/tools/:tool/call") {
		t.Errorf("the logs do not show the requests; the search proves nothing:\n%s", logs)
	}
}
