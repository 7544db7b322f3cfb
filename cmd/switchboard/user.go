package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/internal/database"
	"github.com/switchboard-hub/switchboard/tenants"
)

// userCommand runs `switchboard user password-link`: a one-time link to set a user's
// password, for the first sign-in or a forgotten password.
func userCommand(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "password-link" {
		fmt.Fprintln(stderr, "switchboard user: the only sub-command is password-link: switchboard user password-link --tenant SLUG --email EMAIL")
		return exitUsage
	}
	fs := flag.NewFlagSet("switchboard user password-link", flag.ContinueOnError)
	fs.SetOutput(stderr)
	slug := fs.String("tenant", tenants.DefaultTenantSlug, "the tenant's slug")
	email := fs.String("email", "", "the user's email")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "switchboard user password-link: unexpected arguments %q\n", strings.Join(fs.Args(), " "))
		return exitUsage
	}
	if strings.TrimSpace(*email) == "" {
		fmt.Fprintln(stderr, "switchboard user password-link: --email is required")
		return exitUsage
	}
	if err := passwordLink(ctx, cfg, *slug, *email, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "switchboard user password-link: %v\n", err)
		if c := switchboard.CodeOf(err); c == switchboard.CodeInvalid || c == switchboard.CodeNotFound {
			return exitUsage
		}
		return exitFailed
	}
	return exitOK
}

func passwordLink(ctx context.Context, cfg config, slug, email string, stdout, stderr io.Writer) error {
	db, err := openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer database.Close(db)
	ts := tenants.NewStore(db)
	defer ts.Close()
	token, inv, err := ts.PasswordLinkByEmail(ctx, slug, email, "operator")
	if err != nil {
		return err
	}
	base, err := linkBase(cfg, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Password link for %s in tenant %s (one use, until %s): %s%s%s\n",
		inv.Email, slug, inv.ExpiresAt.Format("2006-01-02 15:04 MST"), base, api.InvitePath, token)
	return nil
}
