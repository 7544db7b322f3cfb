package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/web"
)

func newServer(t *testing.T, o web.Options) *httptest.Server {
	t.Helper()
	h, err := web.Handler(o)
	if err != nil {
		t.Fatalf("Handler: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, method, url string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

func TestIndex(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    web.Options
		want    []string
		notWant []string
	}{
		{
			name: "default tenant",
			opts: web.Options{PublicURL: "http://127.0.0.1:8080/", DefaultTenant: "default", Version: "v1.2.3"},
			want: []string{
				"<title>Switchboard</title>",
				"integration hub",
				"<code>http://127.0.0.1:8080/mcp/{tenant}</code>",
				`<code id="default-mcp-url">http://127.0.0.1:8080/mcp/default</code>`,
				`<code id="api-url">http://127.0.0.1:8080/api</code>`,
				"curl -X POST http://127.0.0.1:8080/api/connections",
				`{"provider": "github", "token": `,
				"--cli http://127.0.0.1:8080/mcp/default",
				"Switchboard v1.2.3",
			},
			notWant: []string{"http://127.0.0.1:8080//"},
		},
		{
			name:    "no default tenant",
			opts:    web.Options{PublicURL: "https://hub.example.com", Version: "dev"},
			want:    []string{"<code>https://hub.example.com/mcp/{tenant}</code>", "--cli https://hub.example.com/mcp/{tenant}"},
			notWant: []string{"default-mcp-url"},
		},
		{
			name:    "public URL is escaped",
			opts:    web.Options{PublicURL: `https://hub.example.com/"><script>x</script>`, DefaultTenant: "default"},
			want:    []string{"&lt;script&gt;"},
			notWant: []string{"<script>"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, tc.opts)
			res, body := get(t, http.MethodGet, srv.URL+"/")
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200; body %s", res.StatusCode, body)
			}
			if diff := cmp.Diff("text/html; charset=utf-8", res.Header.Get("Content-Type")); diff != "" {
				t.Errorf("content type (-want +got):\n%s", diff)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, nw := range tc.notWant {
				if strings.Contains(body, nw) {
					t.Errorf("page holds %q", nw)
				}
			}
		})
	}
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	srv := newServer(t, web.Options{PublicURL: "http://127.0.0.1:8080", DefaultTenant: "default"})
	tests := []struct {
		name        string
		method      string
		path        string
		wantStatus  int
		wantType    string
		wantContain string
	}{
		{name: "stylesheet", method: http.MethodGet, path: "/static/style.css", wantStatus: http.StatusOK, wantType: "text/css; charset=utf-8", wantContain: "--accent"},
		{name: "head of index", method: http.MethodHead, path: "/", wantStatus: http.StatusOK, wantType: "text/html; charset=utf-8"},
		{name: "unknown page", method: http.MethodGet, path: "/nope", wantStatus: http.StatusNotFound},
		{name: "unknown static file", method: http.MethodGet, path: "/static/nope.js", wantStatus: http.StatusNotFound},
		{name: "templates are not served", method: http.MethodGet, path: "/static/../templates/index.html", wantStatus: http.StatusNotFound},
		{name: "post to index", method: http.MethodPost, path: "/", wantStatus: http.StatusMethodNotAllowed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, body := get(t, tc.method, srv.URL+tc.path)
			if res.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.wantStatus)
			}
			if tc.wantType != "" {
				if diff := cmp.Diff(tc.wantType, res.Header.Get("Content-Type")); diff != "" {
					t.Errorf("content type (-want +got):\n%s", diff)
				}
			}
			if !strings.Contains(body, tc.wantContain) {
				t.Errorf("body lacks %q", tc.wantContain)
			}
		})
	}
}

// TestConnectionsAnchor checks the target of the link the MCP adapter sends with a
// "reconnect" tool error (PublicURL + "/#connections"): exactly one element of the page
// has id="connections", and it is the section telling how to connect an account with a
// token and how to reconnect one whose token stopped working.
func TestConnectionsAnchor(t *testing.T) {
	t.Parallel()
	srv := newServer(t, web.Options{PublicURL: "https://hub.example.com", DefaultTenant: "default"})
	res, body := get(t, http.MethodGet, srv.URL+"/")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", res.StatusCode)
	}
	if n := strings.Count(body, `id="connections"`); n != 1 {
		t.Fatalf("the page has %d elements with id=\"connections\", want 1", n)
	}
	start := strings.Index(body, `<section id="connections">`)
	if start < 0 {
		t.Fatal(`id="connections" is not on a <section>`)
	}
	section := body[start:]
	section = section[:strings.Index(section, "</section>")]
	for _, want := range []string{
		"curl -X POST https://hub.example.com/api/connections",
		"Reconnect",
		"needs_reconnect",
		"curl -X DELETE",
		"https://hub.example.com/api/connections/$OLD_CONNECTION_ID",
	} {
		if !strings.Contains(section, want) {
			t.Errorf("the connections section lacks %q", want)
		}
	}
}
