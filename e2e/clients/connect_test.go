package clients

import (
	"bufio"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/gmailtest"
	"github.com/switchboard-hub/switchboard/internal/oauthtest"
	"github.com/switchboard-hub/switchboard/internal/testproc"
)

// TestTypeScriptClientConnect: the official TypeScript client, on 2025-11-25 with
// URL-mode elicitation, calls gmail_send_message of a tenant that offers its whole
// catalog with no Gmail account connected. The hub asks the person to connect with a
// URL-mode elicitation; the person, signed in, opens the link and allows access at the
// provider; the hub sends notifications/elicitation/complete and the same call runs
// against Gmail on the new connection.
func TestTypeScriptClientConnect(t *testing.T) {
	t.Parallel()
	requireNode(t)
	ensureClientPackages(t)
	bin := buildServer(t)
	addr := freeAddr(t)
	public := "http://" + addr
	oa := oauthtest.New(t, oauthtest.Options{Style: oauthtest.GitHub, ClientID: "gmail-client", ClientSecret: "gmail-secret", RedirectURI: public + "/oauth/callback"})
	gmail := &gmailtest.Gmail{OAuth: oa, Revoked: map[string]bool{}}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/gmail/") {
			gmail.ServeHTTP(w, r)
			return
		}
		oa.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gmail.json"), []byte(gmailtest.Description(up.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, bin, map[string]string{"SWITCHBOARD_ADDR": addr, "SWITCHBOARD_PUBLIC_URL": public, "SWITCHBOARD_OPENAPI_DIR": dir})
	api := &apiClient{Base: srv.BaseURL, Key: srv.AdminKey}
	if status, body := api.Do(t, http.MethodPut, "/api/oauth-apps/gmail", map[string]string{"client_id": "gmail-client", "client_secret": "gmail-secret"}); status != http.StatusOK {
		t.Fatalf("put the OAuth app: %d %s", status, body)
	}
	if status, body := api.Do(t, http.MethodPut, "/api/mcp-settings", map[string]string{"confirm": "never", "tool_mode": "all", "catalog": "all"}); status != http.StatusOK {
		t.Fatalf("put the MCP settings: %d %s", status, body)
	}
	signed := signedInPerson(t, srv.AdminLink)
	browser := &http.Client{Jar: signed.Client.Jar} // follows redirects, as a browser does

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := testproc.Command(ctx, "node", filepath.Join(clientDir(t), "connect.mjs"))
	cmd.Dir = clientDir(t)
	cmd.Env = append(os.Environ(), "MCP_URL="+srv.MCPURL, "KEY="+srv.AdminKey)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var last string
	var scopes []string
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	for sc.Scan() {
		last = sc.Text()
		var ask struct {
			URL string `json:"url"`
		}
		if json.Unmarshal([]byte(last), &ask) != nil || ask.URL == "" {
			continue
		}
		// The person opens the link: the hub sends the browser to Gmail's consent page,
		// where they allow access, and Gmail sends it back to the hub.
		res, err := browser.Get(ask.URL)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		m := regexp.MustCompile(`name="request" value="([^"]+)"`).FindStringSubmatch(string(page))
		if res.StatusCode != http.StatusOK || m == nil {
			t.Fatalf("the connect link led to %s: %d %s", res.Request.URL, res.StatusCode, page)
		}
		request := html.UnescapeString(m[1])
		q, _ := url.ParseQuery(request)
		scopes = append(scopes, q.Get("scope"))
		consent := res.Request.URL.Scheme + "://" + res.Request.URL.Host + "/consent"
		res, err = browser.PostForm(consent, url.Values{"request": {request}, "user": {"admin@example.test"}, "decision": {"allow"}})
		if err != nil {
			t.Fatal(err)
		}
		back, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(back), "connected") {
			t.Fatalf("the provider's redirect back: %d %s", res.StatusCode, back)
		}
		if _, err := io.WriteString(stdin, "connected\n"); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("connect.mjs: %v\nstderr:\n%s", err, stderr.String())
	}
	var sum struct {
		Asked []struct {
			Mode          string `json:"mode"`
			ElicitationID string `json:"elicitationId"`
			URL           string `json:"url"`
			Message       string `json:"message"`
		} `json:"asked"`
		Completed []string `json:"completed"`
		Result    *struct {
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
		} `json:"result"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(last), &sum); err != nil || sum.Error != "" {
		t.Fatalf("connect.mjs: %v %s\nlast line %s\nstderr:\n%s", err, sum.Error, last, stderr.String())
	}
	if len(sum.Asked) != 1 || sum.Asked[0].Mode != "url" || sum.Asked[0].ElicitationID == "" || !strings.HasPrefix(sum.Asked[0].URL, public+"/connect/") ||
		!strings.Contains(sum.Asked[0].Message, "Gmail") {
		t.Fatalf("the elicitations shown: %+v", sum.Asked)
	}
	if len(scopes) != 1 || scopes[0] != gmailtest.ScopeSend {
		t.Errorf("Gmail was asked for the scopes %q, want %q once", scopes, gmailtest.ScopeSend)
	}
	if len(sum.Completed) != 1 || sum.Completed[0] != sum.Asked[0].ElicitationID {
		t.Errorf("notifications/elicitation/complete named %q, want %q", sum.Completed, sum.Asked[0].ElicitationID)
	}
	if sum.Result == nil || sum.Result.IsError || !strings.Contains(sum.Result.Text, `"labelIds":["SENT"]`) {
		t.Fatalf("the call: %+v", sum.Result)
	}
	gmail.Mu.Lock()
	defer gmail.Mu.Unlock()
	if len(gmail.Sent) != 1 || gmail.Sent[0] != "SGVsbG8gZnJvbSBUeXBlU2NyaXB0" {
		t.Errorf("Gmail received %q", gmail.Sent)
	}
}
