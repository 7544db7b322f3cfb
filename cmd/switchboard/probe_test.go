package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestProbe runs `switchboard probe` against servers that answer the probes as a
// node does (ready, not ready) and against nothing, as a container healthcheck would.
func TestProbe(t *testing.T) {
	t.Parallel()
	var asked []string
	ready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.Method+" "+r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	}))
	defer ready.Close()
	notReady := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"status":"unavailable"}`)
	}))
	defer notReady.Close()
	_, readyPort, _ := net.SplitHostPort(ready.Listener.Addr().String())
	closed := freeLoopback(t)

	tests := []struct {
		name     string
		addr     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{name: "ready", addr: ready.Listener.Addr().String(), args: []string{"/readyz"}, wantCode: exitOK, wantOut: `/readyz: {"status":"ok"}`},
		{name: "unspecified host asks loopback", addr: "0.0.0.0:" + readyPort, args: []string{"/healthz"}, wantCode: exitOK, wantOut: `/healthz: {"status":"ok"}`},
		{name: "not ready", addr: notReady.Listener.Addr().String(), args: []string{"/readyz"}, wantCode: exitFailed, wantOut: "503 Service Unavailable"},
		{name: "nothing listening", addr: closed, args: []string{"/readyz"}, wantCode: exitFailed, wantOut: "connect"},
		{name: "not a probe", addr: ready.Listener.Addr().String(), args: []string{"/api/tenant"}, wantCode: exitUsage, wantOut: "/readyz or /healthz"},
		{name: "no path", addr: ready.Listener.Addr().String(), wantCode: exitUsage, wantOut: "/readyz or /healthz"},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		environ := env(map[string]string{"SWITCHBOARD_ADDR": tc.addr, "SWITCHBOARD_DATA_DIR": filepath.Join(t.TempDir(), "data")})
		code := run(context.Background(), append([]string{"probe"}, tc.args...), environ, &stdout, &stderr)
		if code != tc.wantCode || !strings.Contains(stdout.String()+stderr.String(), tc.wantOut) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.name, code, stdout.String(), stderr.String(), tc.wantCode, tc.wantOut)
		}
	}
	if want := []string{"GET /readyz", "GET /healthz"}; strings.Join(asked, ",") != strings.Join(want, ",") {
		t.Errorf("the ready server was asked %v, want %v", asked, want)
	}
}

// freeLoopback is a loopback address nobody listens on.
func freeLoopback(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
