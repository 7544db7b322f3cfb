package mcp_test

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testlog"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
)

// TestRegisterUnreachableSaysOnlyThat: registering a server nothing answers at says
// the server could not be reached, without the dial error or the dialled address
// (which would map the hub's network for whoever registers); the log keeps the detail.
func TestRegisterUnreachableSaysOnlyThat(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	svc := connections.NewService(connections.NewStore(db, kr), providers.NewRegistry(), &providers.Transports{}, nil)
	guard, err := egress.NewGuard(true, nil)
	if err != nil {
		t.Fatal(err)
	}
	logs := &testlog.Buffer{}
	remote, err := remotemcp.New(remotemcp.Options{Connections: svc, Guard: guard, Version: "test", Timeout: 20 * time.Second,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remote.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: the dial is refused

	p := switchboard.Principal{TenantID: "ten_x", TenantSlug: "x", Kind: switchboard.PrincipalUser, UserID: "usr_x", Role: switchboard.RoleOwner}
	for _, transport := range []string{remotemcp.TransportStreamable, remotemcp.TransportSSE} {
		_, err = remote.Register(context.Background(), p, remotemcp.RegisterInput{Name: "down", URL: "http://" + addr + "/mcp?key=secret-in-query", Transport: transport})
		e := switchboard.AsError(err)
		if e == nil || e.Code != switchboard.CodeUpstream || !strings.Contains(e.Message, "could not be reached") {
			t.Fatalf("%s: register an unreachable server = %v, want upstream saying it could not be reached", transport, err)
		}
		_, port, _ := net.SplitHostPort(addr)
		for _, leak := range []string{"refused", "dial", "127.0.0.1", port, "secret-in-query"} {
			if strings.Contains(e.Message, leak) {
				t.Errorf("%s: the answer %q carries %q", transport, e.Message, leak)
			}
		}
	}
	if got := logs.String(); !strings.Contains(got, "connection refused") || strings.Contains(got, "secret-in-query") {
		t.Errorf("the log should keep the dial error without the URL's query: %s", got)
	}
}
