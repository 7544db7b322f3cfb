package api_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
	"github.com/switchboard-hub/switchboard/tenants"
)

// closedAddr returns a loopback address where nothing listens: a port just freed.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// TestUnreachableBaseURLIsNamed connects GitHub on a deployment whose GitHub base URL
// has nothing listening: the log names the address dialled and "connection refused",
// and so does the answer to the deployment's operator, who set that URL; a tenant's
// member gets "could not be reached" without the deployment's address.
func TestUnreachableBaseURLIsNamed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.SQLite(t)
	addr := closedAddr(t)
	reg := providers.NewRegistry()
	if err := all.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := reg.SetBaseURL("github", "http://"+addr); err != nil {
		t.Fatal(err)
	}
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	svc := connections.NewService(connections.NewStore(db, kr), reg, &providers.Transports{}, nil)
	logs := &logBuffer{}
	srv := httptest.NewServer(api.New(api.Options{Registry: reg, Tenants: ts, Connections: svc,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}))
	t.Cleanup(srv.Close)

	def, operatorKey, _, err := ts.Bootstrap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, memberKey, _, err := ts.CreateUserWithKey(ctx, def.ID, "member@a.test", switchboard.RoleMember, "test")
	if err != nil {
		t.Fatal(err)
	}
	do := keyedRequests(t, srv)
	body := `{"provider":"github","token":"` + goodToken + `"}`

	status, answer := do(operatorKey, http.MethodPost, "/api/connections", body)
	if status != http.StatusBadGateway || !strings.Contains(answer, "GitHub could not be reached") ||
		!strings.Contains(answer, addr) || !strings.Contains(answer, "connection refused") {
		t.Errorf("the operator's connect: %d %s; want 502 naming %s and connection refused", status, answer, addr)
	}
	status, answer = do(memberKey, http.MethodPost, "/api/connections", body)
	if status != http.StatusBadGateway || !strings.Contains(answer, "GitHub could not be reached") {
		t.Errorf("a member's connect: %d %s; want 502, GitHub could not be reached", status, answer)
	}
	if strings.Contains(answer, addr) || strings.Contains(answer, "connection refused") || strings.Contains(answer, "127.0.0.1") {
		t.Errorf("a member's connect answers the deployment's address: %s", answer)
	}
	log := logs.String()
	if n := strings.Count(log, "upstream could not be reached"); n != 2 || strings.Count(log, addr+": connect: connection refused") != 2 {
		t.Errorf("log: %d lines saying upstream could not be reached, want 2 naming %s and connection refused:\n%s", n, addr, log)
	}
}
