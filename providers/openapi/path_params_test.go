package openapi

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// TestPathParameters: a path parameter is sent as one segment of the path, escaped (a
// "/" in it stays in it), and "." or ".." (or their percent-encoding) is an invalid
// error naming the parameter, with nothing sent: a value may not lead the request out
// of the operation's path.
func TestPathParameters(t *testing.T) {
	t.Parallel()
	const doc = `{"openapi":"3.0.3","info":{"title":"Files","version":"1"},"servers":[{"url":"https://files.example.com"}],
"paths":{"/files/{name}/meta":{"get":{"operationId":"getMeta","parameters":[{"name":"name","in":"path","required":true,"schema":{"type":"string"}}],
"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"object"}}}}}}}}}`
	var mu sync.Mutex
	var got []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.RequestURI)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"size":1}`))
	}))
	t.Cleanup(func() { testwait.CloseServer(t, up) })
	spec, err := New(t.Context(), []byte(doc), Options{Name: "files", BaseURL: up.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	tool := providertest.Tools(t, spec)["files_get_meta"]
	tests := []struct {
		name, value string
		sent        string // the request line's target; "" for a refusal
	}{
		{name: "plain", value: "notes.txt", sent: "/v1/files/notes.txt/meta"},
		{name: "slash", value: "a/b", sent: "/v1/files/a%2Fb/meta"},
		{name: "up with a slash", value: "../../admin", sent: "/v1/files/..%2F..%2Fadmin/meta"},
		{name: "space and question mark", value: "a b?c", sent: "/v1/files/a%20b%3Fc/meta"},
		{name: "three dots", value: "...", sent: "/v1/files/.../meta"},
		{name: "dot dot", value: ".."},
		{name: "dot", value: "."},
		{name: "encoded dot dot", value: "%2e%2e"},
		{name: "encoded in capitals", value: "%2E."},
		{name: "encoded twice", value: "%252e%252e"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			_, err := providertest.Invoke(t, tool, providertest.NewCall(t, &spec, spec.BaseURL, "k"), `{"name":`+strconv.Quote(tt.value)+`}`)
			mu.Lock()
			sent := strings.Join(got, "; ")
			mu.Unlock()
			if tt.sent != "" {
				if err != nil || sent != "GET "+tt.sent {
					t.Errorf("%q: %v, the upstream got %q, want GET %s", tt.value, err, sent, tt.sent)
				}
				return
			}
			if e := switchboard.AsError(err); e.Code != switchboard.CodeInvalid || e.Field != "name" || sent != "" {
				t.Errorf("%q: %v, the upstream got %q, want an invalid name error and nothing sent", tt.value, err, sent)
			}
		})
	}
}
