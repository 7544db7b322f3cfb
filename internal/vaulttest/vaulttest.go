// Package vaulttest runs a real HashiCorp Vault for tests, on loopback, with the
// Transit engine enabled. The server is Vault's own code at Version: by default
// tools/vault/transitdev, a small main in the tools/vault module that runs Vault's core
// in memory, unsealed as `vault server -dev` does, with the token store, the policy
// engine, the Transit engine and Vault's HTTP handler, and none of the other engines,
// auth methods and cloud SDKs that make the full binary take ten minutes to build on
// two cores (transitdev takes about a third of that cold). SWITCHBOARD_VAULT_BIN may
// point at a full `vault` binary instead (CI runs the suite against both).
//
// The build runs as a detached process and is cached outside the repository, under the
// Go build cache, keyed by its sources: a test binary killed while waiting for it does
// not stop it, so the next run finds the binary. A test package that uses Start calls
// Main from its TestMain, which waits for the build within the test timeout's budget
// and fails, saying so, if it is not done by then; tests never skip for want of Vault.
//
// Start from [Main] (a TestMain that has the binary built first), [Ensure] and [Server].
package vaulttest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	vault "github.com/hashicorp/vault/api"
	"github.com/switchboard-hub/switchboard/internal/testport"
)

// Version is the Vault release tools/vault builds.
const Version = "v1.21.0"

// EnvBinary names the variable that points at a Vault binary to use instead of the
// cached build: a full `vault` (run as `vault server -dev`) or a transitdev.
const EnvBinary = "SWITCHBOARD_VAULT_BIN"

// Server is a running dev-mode Vault with Transit enabled at "transit".
type Server struct {
	Addr   string // http://127.0.0.1:PORT
	Token  string // the root token
	Client *vault.Client
}

// Start runs a dev-mode Vault on a free loopback port with a random root token,
// enables Transit, and stops the server when the test ends. The package's TestMain
// must call Main first.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin, err := Ensure(context.Background(), io.Discard, time.Time{})
	if err != nil {
		tb.Fatalf("vaulttest: %v (call vaulttest.Main from TestMain)", err)
	}
	var lastErr error
	for range 3 {
		srv, err := start(tb, bin)
		if err == nil {
			return srv
		}
		lastErr = err
	}
	tb.Fatalf("vaulttest: %v", lastErr)
	return nil
}

func start(tb testing.TB, bin string) (*Server, error) {
	tb.Helper()
	port, err := freePortPair()
	if err != nil {
		return nil, err
	}
	token := "root-" + randomHex(12)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	home := tb.TempDir()
	logPath := filepath.Join(home, "vault.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, serverArgs(bin, addr, token)...)
	cmd.Dir = home
	// A home of its own, so the dev server never touches the user's ~/.vault-token, and
	// none of the caller's VAULT_* settings.
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "VAULT_LOG_LEVEL=warn"}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start vault: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}

	cfg := vault.DefaultConfig()
	cfg.Address = "http://" + addr
	cfg.MaxRetries = 0
	client, err := vault.NewClient(cfg)
	if err != nil {
		stop()
		return nil, err
	}
	client.SetToken(token)
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		h, err := client.Sys().HealthWithContext(ctx)
		cancel()
		if err == nil && h.Initialized && !h.Sealed {
			break
		}
		select {
		case <-exited:
			out, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("vault exited before it was healthy:\n%s", tail(out))
		default:
		}
		if time.Now().After(deadline) {
			stop()
			out, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("vault not healthy after 90s (last error %v):\n%s", err, tail(out))
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.Cleanup(stop)
	if err := client.Sys().Mount("transit", &vault.MountInput{Type: "transit"}); err != nil {
		return nil, fmt.Errorf("enable transit: %w", err)
	}
	return &Server{Addr: "http://" + addr, Token: token, Client: client}, nil
}

// NewKey creates an aes256-gcm96 Transit key with a random name and returns the name,
// so every test has a key of its own.
func (s *Server) NewKey(tb testing.TB) string {
	tb.Helper()
	name := "k-" + randomHex(6)
	if _, err := s.Client.Logical().Write("transit/keys/"+name, map[string]any{"type": "aes256-gcm96"}); err != nil {
		tb.Fatalf("vaulttest: create transit key: %v", err)
	}
	return name
}

// NewToken creates a policy of the given HCL text and a token holding only it.
func (s *Server) NewToken(tb testing.TB, policy string) string {
	tb.Helper()
	name := "p-" + randomHex(6)
	if err := s.Client.Sys().PutPolicy(name, policy); err != nil {
		tb.Fatalf("vaulttest: put policy: %v", err)
	}
	sec, err := s.Client.Auth().Token().Create(&vault.TokenCreateRequest{Policies: []string{name}, NoDefaultPolicy: true, TTL: "1h"})
	if err != nil || sec == nil || sec.Auth == nil {
		tb.Fatalf("vaulttest: create token: %v", err)
	}
	return sec.Auth.ClientToken
}

// KeyVersions returns the Transit key's latest version and its min_decryption_version.
func (s *Server) KeyVersions(tb testing.TB, name string) (latest, minDecryption int) {
	tb.Helper()
	sec, err := s.Client.Logical().Read("transit/keys/" + name)
	if err != nil || sec == nil {
		tb.Fatalf("vaulttest: read transit key %s: %v", name, err)
	}
	num := func(k string) int {
		n, err := strconv.Atoi(fmt.Sprint(sec.Data[k]))
		if err != nil {
			tb.Fatalf("vaulttest: %s of %s is %v", k, name, sec.Data[k])
		}
		return n
	}
	return num("latest_version"), num("min_decryption_version")
}

// serverArgs are the arguments that start bin on addr with the root token: a full
// vault binary runs `server -dev`, transitdev takes its own two flags.
func serverArgs(bin, addr, token string) []string {
	if filepath.Base(bin) == "vault" {
		return []string{"server", "-dev", "-dev-listen-address=" + addr, "-dev-root-token-id=" + token, "-dev-no-store-token"}
	}
	return []string{"-listen", addr, "-root-token", token}
}

// freePortPair finds a loopback port P with P+1 free too: dev-mode Vault listens for
// cluster traffic on the port after its API port.
func freePortPair() (int, error) {
	return testport.Free(2)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func tail(b []byte) string {
	const max = 4000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}
