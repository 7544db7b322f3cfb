package mcpadapter

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// revocableKeys is keys whose entries a test can revoke.
type revocableKeys struct {
	mu   sync.Mutex
	keys map[string]switchboard.Principal
}

func (k *revocableKeys) Authenticate(_ context.Context, key string) (switchboard.Principal, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	p, ok := k.keys[key]
	if !ok {
		return switchboard.Principal{}, &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "invalid or revoked API key"}
	}
	return p, nil
}

func (k *revocableKeys) revoke(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.keys, key)
}

// openStream initializes a session with key at /mcp/slug and opens its GET stream; it
// returns the stream's body.
func openStream(t *testing.T, base, slug, key string) io.ReadCloser {
	t.Helper()
	post := func(session, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp/"+slug, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	init := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	session := init.Header.Get("Mcp-Session-Id")
	if init.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d, session %q", init.StatusCode, session)
	}
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	req, _ := http.NewRequest(http.MethodGet, base+"/mcp/"+slug, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("GET stream: %d", resp.StatusCode)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp.Body
}

// waitEnd fails the test unless the stream ends (the server closes it).
func waitEnd(t *testing.T, body io.Reader) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, body)
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the stream of a revoked key is still open")
	}
}

// TestRevokedKeyEndsItsStreams: revoking a key ends its open GET streams, at once for
// a revocation in this process (KeysRevoked) and at the next recheck for one elsewhere;
// another key's stream stays open.
func TestRevokedKeyEndsItsStreams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		revoke func(a *Adapter, k *revocableKeys)
	}{
		{name: "revoked in this process", revoke: func(a *Adapter, k *revocableKeys) {
			k.revoke("key-alice")
			a.KeysRevoked(alice.TenantID, []string{alice.KeyID})
		}},
		{name: "revoked in another process", revoke: func(a *Adapter, k *revocableKeys) {
			k.revoke("key-alice")
			a.recheckKeys(context.Background())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			k := &revocableKeys{keys: map[string]switchboard.Principal{"key-alice": alice, "key-bob": bob}}
			e.adapter.opts.Auth = k
			stream := openStream(t, e.srv.URL, "acme", "key-alice")
			openStream(t, e.srv.URL, "beta", "key-bob")
			tt.revoke(e.adapter, k)
			waitEnd(t, stream)
			// Alice's request is gone from the open set; Bob's stays.
			testwait.Until(t, "Alice's request to leave the open set", func() bool {
				return len(e.adapter.openWhere(func(o *openRequest) bool { return o.principal.KeyID == alice.KeyID })) == 0
			})
			if n := len(e.adapter.openWhere(func(o *openRequest) bool { return o.principal.KeyID == bob.KeyID })); n != 1 {
				t.Errorf("Bob's open requests = %d, want his stream", n)
			}
		})
	}
}
