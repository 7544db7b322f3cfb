// Package vaulttest runs a real HashiCorp Vault for tests: `vault server -dev` on
// loopback with the Transit engine enabled. The Vault binary is built from the module
// in tools/vault (github.com/hashicorp/vault at Version) and cached outside the
// repository, under the Go build cache, so only the first run on a machine pays for
// the build (about ten minutes on two cores).
//
// A test package that uses Start calls Main from its TestMain, so the build happens
// before m.Run and the test timeout does not cover it. Under CI=true a Vault that is
// missing and cannot be built fails the package; tests never skip for want of it.
package vaulttest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	vault "github.com/hashicorp/vault/api"
)

// Version is the Vault release tools/vault builds.
const Version = "v1.21.0"

// EnvBinary names the variable that points at a Vault binary to use instead of the
// cached build.
const EnvBinary = "SWITCHBOARD_VAULT_BIN"

// Main builds Vault if it is not cached yet, then runs the tests. Call it as the
// body of TestMain: func TestMain(m *testing.M) { vaulttest.Main(m) }.
func Main(m *testing.M) {
	if _, err := Ensure(context.Background(), os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "vaulttest: no Vault binary for the tests: %v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// CachePath is where the built binary is cached: GOCACHE/switchboard-tools/vault-VERSION/vault.
func CachePath(ctx context.Context) (string, error) {
	gocache := os.Getenv("GOCACHE")
	if gocache == "" {
		out, err := exec.CommandContext(ctx, goTool(), "env", "GOCACHE").Output()
		if err != nil {
			return "", fmt.Errorf("go env GOCACHE: %w", err)
		}
		gocache = strings.TrimSpace(string(out))
	}
	if gocache == "" || gocache == "off" {
		return "", errors.New("the Go build cache is off (GOCACHE=off); set SWITCHBOARD_VAULT_BIN to a vault binary")
	}
	return filepath.Join(gocache, "switchboard-tools", "vault-"+Version, "vault"), nil
}

// Ensure returns the path of a Vault binary: $SWITCHBOARD_VAULT_BIN if set, else the
// cached build, building it first if it is missing (progress lines go to progress).
// Concurrent callers (test binaries of several packages) wait for one build.
func Ensure(ctx context.Context, progress io.Writer) (string, error) {
	if bin := os.Getenv(EnvBinary); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvBinary, bin, err)
		}
		return bin, nil
	}
	bin, err := CachePath(ctx)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", filepath.Dir(bin), err)
	}
	unlock, err := lock(filepath.Join(filepath.Dir(bin), "build.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil { // another process built it while we waited
		return bin, nil
	}
	dir, err := toolsDir()
	if err != nil {
		return "", err
	}
	fmt.Fprintf(progress, "vaulttest: building Vault %s into %s (the first time takes about 10 minutes; it is cached afterwards)\n", Version, bin)
	start := time.Now()
	tmp := bin + ".tmp"
	cmd := exec.CommandContext(ctx, goTool(), "build", "-ldflags=-s -w", "-o", tmp, "github.com/hashicorp/vault")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = progress, progress
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "GOWORK=off")
	if err := cmd.Run(); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("build vault in %s: %w", dir, err)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", fmt.Errorf("cache vault binary: %w", err)
	}
	fmt.Fprintf(progress, "vaulttest: built Vault in %s\n", time.Since(start).Round(time.Second))
	return bin, nil
}

// toolsDir finds tools/vault by walking up from the working directory to the
// repository root.
func toolsDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		cand := filepath.Join(dir, "tools", "vault")
		if _, err := os.Stat(filepath.Join(cand, "go.mod")); err == nil {
			return cand, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no tools/vault/go.mod above the working directory; set SWITCHBOARD_VAULT_BIN to a vault binary")
		}
		dir = parent
	}
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

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
	bin, err := Ensure(context.Background(), io.Discard)
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
	cmd := exec.Command(bin, "server", "-dev", "-dev-listen-address="+addr, "-dev-root-token-id="+token, "-dev-no-store-token")
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

// freePortPair finds a loopback port P with P+1 free too: dev-mode Vault listens for
// cluster traffic on the port after its API port.
func freePortPair() (int, error) {
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln2, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+1)))
		_ = ln.Close()
		if err == nil {
			_ = ln2.Close()
			return port, nil
		}
	}
	return 0, errors.New("no two adjacent free loopback ports")
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
