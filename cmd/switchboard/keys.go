package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/identity"
	"github.com/switchboard-hub/switchboard/internal/database"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/openapis"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/sessions"
)

// derivedKeys are the secrets derived from the keyring: stable across restarts, and
// the same on every node that shares the key file or the Vault key.
type derivedKeys struct {
	// args keys the audit log's argument hashes.
	args []byte
	// requestState keys the requestState of the confirmations and connect links MCP
	// calls ask for, which the client's answer may bring to another node.
	requestState []byte
}

// openKeyring opens the configured keyring and derives the hub's secrets from it.
func openKeyring(ctx context.Context, cfg config) (keyring.Rotator, derivedKeys, error) {
	if cfg.Keyring != "vault" {
		kr, err := keyring.LoadOrCreateKeyFile(cfg.KeyFile)
		if err != nil {
			return nil, derivedKeys{}, err
		}
		return kr, derivedKeys{args: kr.Derive("audit-args"), requestState: kr.Derive("request-state")}, nil
	}
	kr, err := keyring.NewVaultKeyring(ctx, keyring.VaultOptions{
		Address: cfg.VaultAddr,
		Token:   cfg.VaultToken,
		Mount:   cfg.VaultTransitMount,
		Key:     cfg.VaultTransitKey,
	})
	if err != nil {
		return nil, derivedKeys{}, err
	}
	var keys derivedKeys
	if keys.args, err = kr.Derive(ctx, "audit-args"); err != nil {
		return nil, derivedKeys{}, err
	}
	if keys.requestState, err = kr.Derive(ctx, "request-state"); err != nil {
		return nil, derivedKeys{}, err
	}
	return kr, keys, nil
}

// keysCommand runs `switchboard keys rotate`.
func keysCommand(ctx context.Context, cfg config, log *slog.Logger, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "rotate" {
		fmt.Fprintln(stderr, "switchboard keys: the only sub-command is rotate: switchboard keys rotate [--batch-size N]")
		return exitUsage
	}
	fs := flag.NewFlagSet("switchboard keys rotate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	batch := fs.Int("batch-size", 100, "how many records to re-seal at a time (1 to 10000)")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "switchboard keys rotate: unexpected arguments %q\n", strings.Join(fs.Args(), " "))
		return exitUsage
	}
	if *batch < 1 || *batch > 10000 {
		fmt.Fprintf(stderr, "switchboard keys rotate: --batch-size must be 1 to 10000, got %d\n", *batch)
		return exitUsage
	}
	if err := rotateKeys(ctx, cfg, log, *batch, stdout); err != nil {
		fmt.Fprintf(stderr, "switchboard keys rotate: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// rotateKeys makes a new key current (or resumes an unfinished rotation) and re-seals
// every sealed record under it, printing progress. Servers keep running meanwhile.
func rotateKeys(ctx context.Context, cfg config, log *slog.Logger, batch int, stdout io.Writer) error {
	if cfg.Keyring == "file" {
		// A missing file means the wrong SWITCHBOARD_DATA_DIR or SWITCHBOARD_KEY_FILE:
		// a new key file could open nothing.
		if _, err := os.Stat(cfg.KeyFile); err != nil {
			return fmt.Errorf("key file %s: %w; point SWITCHBOARD_KEY_FILE (or SWITCHBOARD_DATA_DIR) at the key file the servers use", cfg.KeyFile, err)
		}
	}
	db, err := openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer database.Close(db)
	kr, _, err := openKeyring(ctx, cfg)
	if err != nil {
		return err
	}
	writer := audit.NewWriter(db, audit.WriterOptions{Logger: log})
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := writer.Close(closeCtx); err != nil {
			log.Error("flush audit events", "err", err)
		}
	}()
	// Every kind of record sealed with the keyring; a package that seals something new
	// adds its records here.
	records := append(connections.NewStore(db, kr).SealedRecordsAll(), runs.NewStore(db, kr).SealedRecords(), identity.SealedRecords(db, kr), openapis.NewStore(db).SealedRecords(kr),
		sessions.NewStreamLog(db, kr).SealedRecords())
	records = append(records, identity.SSOSealedRecords(db, kr)...)
	res, err := keyring.Rotate(ctx, db, kr, records, keyring.RotateOptions{
		BatchSize: batch,
		Audit:     writer,
		Progress: func(p keyring.RotateProgress) {
			fmt.Fprintf(stdout, "%s: %d of %d re-sealed, %d changed meanwhile, %d failed\n", p.Kind, p.Resealed, p.Total, p.Changed, p.Failed)
		},
	})
	if res.KeyID != "" {
		verb := "Rotated to"
		if res.Resumed {
			verb = "Resumed rotation " + res.RotationID + " under"
		}
		fmt.Fprintf(stdout, "%s key %s; %d records re-sealed in this run.\n", verb, res.KeyID, res.Resealed)
	}
	if err != nil {
		return err
	}
	// Access tokens are signed with new keys from now on; those issued verify until
	// they expire.
	retired, err := identity.RetireSigningKeys(ctx, db, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d access token signing keys retired; new ones sign from now on.\n", retired)
	// The servers drop the records and clients they cached, sealed under the old key.
	feed, closeFeed, err := openFeed(ctx, db, cfg, events.NewNodeID(), log)
	if err != nil {
		log.Warn("tell the servers of the rotation; their caches expire by themselves", "err", err)
	} else {
		events.PublishAfterCommit(ctx, feed, log, events.Event{Kind: events.KeyringRotated, ID: res.KeyID})
		closeFeed()
	}
	fmt.Fprintf(stdout, "Rotation %s finished: every record is sealed under key %s.\n", res.RotationID, res.KeyID)
	return nil
}
