package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testlog"
)

// TestOpenAPIDir: each description in SWITCHBOARD_OPENAPI_DIR becomes a provider of the
// registry, beside the built-in ones, once loaded; one that cannot is logged naming the
// file, and its tools answer that error.
func TestOpenAPIDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	desc := `{"openapi":"3.0.0","info":{"title":"Inventory","version":"1"},"servers":[{"url":"https://inventory.example.test"}],
"paths":{"/items":{"get":{"operationId":"listItems","summary":"List items","responses":{"200":{"description":"ok"}}}}}}`
	if err := os.WriteFile(filepath.Join(dir, "inventory.json"), []byte(desc), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.json"), []byte(`{"openapi":"3.0.0","paths":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config{OpenAPIDir: dir}
	reg, err := newRegistry(cfg)
	if err != nil {
		t.Fatal(err)
	}
	logs := &testlog.Buffer{}
	loadDeferred(reg, slog.New(slog.NewTextHandler(logs, nil)))
	if _, ok := reg.Tool("inventory_list_items"); !ok {
		t.Error("the description's operation is not a tool")
	}
	if _, ok := reg.Provider("github"); !ok {
		t.Error("the built-in providers are gone")
	}
	if !strings.Contains(logs.String(), "broken.json") || !strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("the broken description is not logged as an error naming its file: %s", logs.String())
	}
	err = reg.AwaitTool(context.Background(), "broken_list_items")
	if err == nil || !strings.Contains(err.Error(), "broken.json") {
		t.Errorf("a tool of the broken description: %v, want an error naming broken.json", err)
	}

	// A directory that cannot be read, or two descriptions of one name, stop the start.
	if err := os.WriteFile(filepath.Join(dir, "inventory.yaml"), []byte("openapi: 3.0.0"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = newRegistry(cfg)
	if err == nil || !strings.Contains(err.Error(), "SWITCHBOARD_OPENAPI_DIR") || !strings.Contains(err.Error(), "inventory.yaml") {
		t.Errorf("error = %v, want SWITCHBOARD_OPENAPI_DIR naming inventory.yaml", err)
	}
	_, err = newRegistry(config{OpenAPIDir: filepath.Join(dir, "missing")})
	if err == nil || !strings.Contains(err.Error(), "SWITCHBOARD_OPENAPI_DIR") {
		t.Errorf("error = %v, want SWITCHBOARD_OPENAPI_DIR", err)
	}
}

// TestServeOpenAPIDirInBackground: a node is ready while its OpenAPI directory is still
// loading, and a call of one of the directory's tools made meanwhile waits for the load
// and then reaches the upstream as it should. Not parallel: it holds the load through
// beforeOpenAPILoad.
func TestServeOpenAPIDirInBackground(t *testing.T) {
	var mu sync.Mutex
	var got []string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"id":"it_1","name":"Widget"}]`))
	}))
	defer upstream.Close()
	dir := t.TempDir()
	desc := `{"openapi":"3.0.0","info":{"title":"Inventory","version":"1"},"servers":[{"url":"` + upstream.URL + `"}],
"components":{"securitySchemes":{"bearer":{"type":"http","scheme":"bearer"}}},"security":[{"bearer":[]}],
"paths":{"/items":{"get":{"operationId":"listItems","summary":"List items","responses":{"200":{"description":"ok"}}}}}}`
	if err := os.WriteFile(filepath.Join(dir, "inventory.json"), []byte(desc), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.json"), []byte(`{"openapi":"3.0.0","paths":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := env(map[string]string{"SWITCHBOARD_ADDR": "127.0.0.1:0", "SWITCHBOARD_DATA_DIR": filepath.Join(t.TempDir(), "data"),
		"SWITCHBOARD_OPENAPI_DIR": dir, "SWITCHBOARD_KEY_FILE": filepath.Join(t.TempDir(), "master.key")})
	listening := regexp.MustCompile(`^Switchboard is listening on (http://127\.0\.0\.1:\d+)$`)

	// A first start, loaded at once, makes the admin key and a connection to the API.
	out, stop := startServe(t, e, 5)
	m := listening.FindStringSubmatch(out[0])
	if m == nil {
		t.Fatalf("first line %q", out[0])
	}
	var admin string
	for _, line := range out {
		if k, ok := strings.CutPrefix(line, "Admin API key (shown once, store it now): "); ok {
			admin = k
		}
	}
	if admin == "" {
		t.Fatalf("serve printed no admin key: %q", out)
	}
	var conn struct {
		ID string `json:"id"`
	}
	code, body := (node{base: m[1]}).raw(t, http.MethodPost, "/api/connections", admin, `{"provider":"inventory","token":"inv_secret","label":"stock"}`)
	if err := json.Unmarshal(body, &conn); code != http.StatusCreated || err != nil {
		t.Fatalf("connect: %d %s", code, body)
	}
	if code := stop(); code != exitOK {
		t.Fatalf("first serve exit %d", code)
	}

	// The second start's load is held: the node is ready all the same.
	release, entered := make(chan struct{}), make(chan struct{})
	beforeOpenAPILoad = func() { close(entered); <-release }
	t.Cleanup(func() { beforeOpenAPILoad = func() {} })
	out, stop, logs := startServeLogs(t, e, 1)
	m = listening.FindStringSubmatch(out[0])
	if m == nil {
		t.Fatalf("first line %q", out[0])
	}
	n := node{base: m[1]}
	<-entered
	res, err := http.Get(n.base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/readyz while the OpenAPI directory loads: %d, want 200", res.StatusCode)
	}

	// A call made now waits for the load, then reaches the upstream.
	type answer struct {
		code int
		body callAnswer
	}
	done := make(chan answer, 1)
	go func() {
		var a answer
		a.code = n.api(t, http.MethodPost, "/api/tools/inventory_list_items/call", admin, `{"connection_id":"`+conn.ID+`"}`, &a.body)
		done <- a
	}()
	select {
	case a := <-done:
		t.Fatalf("the call answered %d before the load ended", a.code)
	case <-time.After(200 * time.Millisecond): // not a timing assertion: a wrong answer would come at once
	}
	mu.Lock()
	sent := len(got)
	mu.Unlock()
	if sent != 0 {
		t.Fatalf("the upstream got %d requests before the load ended", sent)
	}
	close(release)
	a := <-done
	if a.code != http.StatusOK {
		t.Fatalf("the call during the load: status %d", a.code)
	}
	mu.Lock()
	if len(got) != 1 || got[0] != "GET /items Bearer inv_secret" {
		t.Errorf("upstream got %q, want one GET /items with the connection's token", got)
	}
	mu.Unlock()

	// The broken description: its tools and its catalog entry answer why, naming the
	// file, and the log says so.
	var failure struct {
		Error struct {
			Code    switchboard.Code `json:"code"`
			Message string           `json:"message"`
		} `json:"error"`
	}
	code, body = n.raw(t, http.MethodPost, "/api/tools/broken_list_items/call", admin, `{}`)
	if err := json.Unmarshal(body, &failure); err != nil || code != http.StatusServiceUnavailable || failure.Error.Code != switchboard.CodeUnavailable || !strings.Contains(failure.Error.Message, "broken.json") {
		t.Errorf("a tool of the broken description: %d %s, want 503 naming broken.json", code, body)
	}
	code, body = n.raw(t, http.MethodGet, "/api/providers/broken/operations", admin, "")
	if code != http.StatusServiceUnavailable || !strings.Contains(string(body), "broken.json") {
		t.Errorf("the broken description's operations: %d %s, want 503 naming broken.json", code, body)
	}
	if code := stop(); code != exitOK {
		t.Fatalf("second serve exit %d", code)
	}
	if !regexp.MustCompile(`level=ERROR .*provider=broken file=\S*broken\.json`).MatchString(logs.String()) {
		t.Errorf("the log does not name the broken description: %s", logs.String())
	}
}

// callAnswer is a REST tool call's answer.
type callAnswer struct {
	Result any `json:"result"`
}

// raw sends a REST request to the node and returns its status and body.
func (n node) raw(t testing.TB, method, path, key, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, n.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}
