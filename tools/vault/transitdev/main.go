// Command transitdev is a minimal HashiCorp Vault server for tests: Vault's own core,
// in memory and unsealed as `vault server -dev` does it, with the Transit secrets
// engine mounted at transit/ and the token store, served by Vault's own HTTP handler.
// It links only the engines Switchboard's tests use, so it builds in a fraction of
// the time the full vault binary takes.
//
// Usage: transitdev -listen 127.0.0.1:8200 -root-token root
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	log "github.com/hashicorp/go-hclog"
	"github.com/hashicorp/vault/audit"
	"github.com/hashicorp/vault/builtin/logical/transit"
	"github.com/hashicorp/vault/helper/namespace"
	vaulthttp "github.com/hashicorp/vault/http"
	"github.com/hashicorp/vault/internalshared/configutil"
	"github.com/hashicorp/vault/sdk/helper/consts"
	"github.com/hashicorp/vault/sdk/logical"
	"github.com/hashicorp/vault/sdk/physical/inmem"
	"github.com/hashicorp/vault/vault"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8200", "address to listen on")
	rootToken := flag.String("root-token", "root", "the root token's ID")
	flag.Parse()
	if err := run(*listen, *rootToken); err != nil {
		fmt.Fprintln(os.Stderr, "transitdev:", err)
		os.Exit(1)
	}
}

func run(listen, rootToken string) error {
	logger := log.New(&log.LoggerOptions{Name: "transitdev", Level: log.Warn, Output: os.Stderr})
	phys, err := inmem.NewInmem(nil, logger)
	if err != nil {
		return fmt.Errorf("in-memory storage: %w", err)
	}
	core, err := vault.NewCore(&vault.CoreConfig{
		Physical:           phys,
		Logger:             logger,
		DisableMlock:       true,
		LogicalBackends:    map[string]logical.Factory{"transit": transit.Factory},
		CredentialBackends: map[string]logical.Factory{},
		AuditBackends:      map[string]audit.Factory{},
		BuiltinRegistry:    builtins{},
	})
	if err != nil {
		return fmt.Errorf("new core: %w", err)
	}
	ctx := namespace.ContextWithNamespace(context.Background(), namespace.RootNamespace)
	init, err := core.Initialize(ctx, &vault.InitParams{
		BarrierConfig: &vault.SealConfig{SecretShares: 1, SecretThreshold: 1, Name: "shamir"},
	})
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if ok, err := core.Unseal(init.SecretShares[0]); err != nil || !ok {
		return fmt.Errorf("unseal: %v", err)
	}
	for i := 0; ; i++ {
		if isLeader, _, _, err := core.Leader(); errors.Is(err, vault.ErrHANotEnabled) || (err == nil && isLeader) {
			break
		}
		if i > 100 {
			return errors.New("core never became active")
		}
		time.Sleep(50 * time.Millisecond)
	}
	resp, err := core.HandleRequest(ctx, &logical.Request{
		Operation:   logical.UpdateOperation,
		ClientToken: init.RootToken,
		Path:        "auth/token/create",
		Data:        map[string]any{"id": rootToken, "policies": []string{"root"}, "no_parent": true, "no_default_policy": true},
	})
	if err != nil || resp == nil || resp.Auth == nil {
		return fmt.Errorf("create root token: %v", err)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	handler := vaulthttp.Handler.Handler(&vault.HandlerProperties{Core: core, ListenerConfig: &configutil.Listener{Type: "tcp", Address: listen}})
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() { <-sig; _ = srv.Close() }()
	fmt.Fprintf(os.Stderr, "transitdev: listening on http://%s\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return core.Shutdown()
}

// builtins is an empty plugin registry: the core needs one, and this server has no
// plugins besides the engines wired into CoreConfig.
type builtins struct{}

func (builtins) Contains(string, consts.PluginType) bool { return false }
func (builtins) Get(string, consts.PluginType) (func() (any, error), bool) {
	return nil, false
}
func (builtins) Keys(consts.PluginType) []string { return nil }
func (builtins) DeprecationStatus(string, consts.PluginType) (consts.DeprecationStatus, bool) {
	return consts.Unknown, false
}
func (builtins) IsBuiltinEntPlugin(string, consts.PluginType) bool { return false }
