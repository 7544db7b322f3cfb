package openapis

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testlog"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestFetchSaysLittle: a description that cannot be fetched by its URL is an invalid
// "url" error saying so, with the HTTP status when there was one, but never why the
// connection failed, the address the host resolved to, or what the URL answered: a
// tenant could map the hub's network with it. The server's log has the detail.
func TestFetchSaysLittle(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	const secret = "redis_version:7.2.4 role:master"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.Header.Get("Authorization") != "" {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		switch r.URL.Path {
		case "/error":
			http.Error(w, secret, http.StatusInternalServerError)
		default: // a service that is no web server answers its own protocol
			_, _ = io.WriteString(w, "-ERR unknown command 'GET', "+secret+"\r\n")
		}
	}))
	t.Cleanup(func() { testwait.CloseServer(t, up) })
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	port := up.URL[strings.LastIndex(up.URL, ":")+1:]
	tests := []struct {
		name   string
		url    string
		cidrs  []string
		says   string
		logged string // in the server's log
	}{
		{name: "closed port", url: "http://" + closedAddr + "/openapi.json", cidrs: []string{"127.0.0.1/32"}, says: "could not be fetched", logged: "refused"},
		{name: "error answer", url: up.URL + "/error", cidrs: []string{"127.0.0.1/32"}, says: "HTTP 500", logged: "HTTP 500"},
		{name: "another protocol", url: up.URL + "/", cidrs: []string{"127.0.0.1/32"}, says: "not an OpenAPI or Swagger description", logged: "is not a JSON object"},
		{name: "private address", url: "http://localhost:" + port + "/openapi.json", says: "private, loopback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db, tt.cidrs)
			var log testlog.Buffer
			r.svc.log = slog.New(slog.NewTextHandler(&log, nil))
			_, err := r.svc.Add(t.Context(), r.admin, AddInput{Name: "items", URL: tt.url})
			e := switchboard.AsError(err)
			if e.Code != switchboard.CodeInvalid || e.Field != "url" || !strings.Contains(e.Message, tt.says) {
				t.Fatalf("Add: %v, want an invalid url error saying %q", err, tt.says)
			}
			for _, leak := range []string{secret, "ERR", "dial", "connection refused", "127.0.0.1", closedAddr} {
				if strings.Contains(e.Message, leak) {
					t.Errorf("the error says %q: %s", leak, e.Message)
				}
			}
			if !strings.Contains(log.String(), tt.logged) {
				t.Errorf("the log lacks %q: %s", tt.logged, log.String())
			}
			if apis, err := r.svc.List(t.Context(), r.admin); err != nil || len(apis) != 0 {
				t.Errorf("after a failed fetch: %v, %v, want nothing stored", apis, err)
			}
		})
	}
}
