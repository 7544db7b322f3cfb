// Command switchboard runs the Switchboard integration hub: the MCP endpoints, the REST
// API and the web page in one process, configured by SWITCHBOARD_* environment variables.
//
//	switchboard [serve]                                          run the server (the default)
//	switchboard migrate                                          run the database migrations and exit
//	switchboard tenant create --slug S --name N --owner-email E  create a tenant, its owner and an owner key
//	switchboard keys rotate [--batch-size N]                     re-seal every credential under a new key
//	switchboard version                                          print the version
//
// Run `switchboard -h` for the configuration variables.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
)

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2 // bad command line or configuration
)

func main() {
	gin.SetMode(gin.ReleaseMode)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: it parses the command line and configuration, runs
// the sub-command, and returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return exitOK
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, "switchboard", version())
		return exitOK
	case "serve", "migrate", "tenant", "user", "keys":
	default:
		fmt.Fprintf(stderr, "switchboard: unknown command %q\n\n", cmd)
		usage(stderr)
		return exitUsage
	}

	cfg, err := loadConfig(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "switchboard: invalid configuration: %v\n", err)
		return exitUsage
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))

	switch cmd {
	case "serve":
		if code, ok := noArgs("serve", args, stderr); !ok {
			return code
		}
		err = serve(ctx, cfg, log, stdout)
	case "migrate":
		if code, ok := noArgs("migrate", args, stderr); !ok {
			return code
		}
		err = migrate(ctx, cfg, stdout)
	case "tenant":
		return tenantCommand(ctx, cfg, args, stdout, stderr)
	case "user":
		return userCommand(ctx, cfg, args, stdout, stderr)
	case "keys":
		return keysCommand(ctx, cfg, log, args, stdout, stderr)
	}
	if err != nil {
		log.Error(cmd+" failed", "err", err)
		fmt.Fprintf(stderr, "switchboard %s: %v\n", cmd, err)
		return exitFailed
	}
	return exitOK
}

func noArgs(cmd string, args []string, stderr io.Writer) (int, bool) {
	if len(args) == 0 {
		return 0, true
	}
	if args[0] == "-h" || args[0] == "--help" {
		usage(stderr)
		return exitOK, false
	}
	fmt.Fprintf(stderr, "switchboard %s: takes no arguments, got %q; configure it with SWITCHBOARD_* variables (switchboard -h)\n", cmd, strings.Join(args, " "))
	return exitUsage, false
}

// usage prints the commands and every configuration variable.
func usage(w io.Writer) {
	fmt.Fprint(w, `Switchboard: an integration hub that serves the operations of your connected SaaS
accounts (GitHub, Slack) as MCP tools, one MCP URL per tenant.

Usage:
  switchboard [serve]        run the server (the default command)
  switchboard migrate        run the database migrations and exit
  switchboard tenant create --slug SLUG --name NAME --owner-email EMAIL
                             create a tenant, its owner user and an owner API key
  switchboard user password-link [--tenant SLUG] --email EMAIL
                             print a one-time link that sets the user's UI password
  switchboard keys rotate [--batch-size N]
                             make a new key current and re-seal every credential under it,
                             in batches, while servers keep running; rerun to resume
  switchboard version        print the version
  switchboard -h             print this help

Configuration (environment variables):
`)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, v := range envVars() {
		fmt.Fprintf(tw, "  %s\t%s\t(default %s)\n", v.Name, v.Help, v.Default)
	}
	_ = tw.Flush()
	fmt.Fprint(w, `
On first start, serve creates the tenant "default" and prints its MCP URL, an admin
API key and a one-time link to set the admin's password for the UI (admin@localhost). Send the key as "Authorization: Bearer KEY" to /api and /mcp/default.
`)
}

// version is the module version the binary was built from, or "dev".
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Version == "" || bi.Main.Version == "(devel)" {
		return "dev"
	}
	return bi.Main.Version
}

// tenantCommand runs `switchboard tenant create`.
func tenantCommand(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "create" {
		fmt.Fprintln(stderr, "switchboard tenant: the only sub-command is create: switchboard tenant create --slug SLUG --name NAME --owner-email EMAIL")
		return exitUsage
	}
	fs := flag.NewFlagSet("switchboard tenant create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	slug := fs.String("slug", "", "the tenant's slug, its name in MCP URLs (3 to 40 of a-z, 0-9 and -)")
	name := fs.String("name", "", "the tenant's display name")
	email := fs.String("owner-email", "", "the email of the tenant's owner")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "switchboard tenant create: unexpected arguments %q\n", strings.Join(fs.Args(), " "))
		return exitUsage
	}
	for _, f := range []struct{ flag, val string }{{"--slug", *slug}, {"--name", *name}, {"--owner-email", *email}} {
		if strings.TrimSpace(f.val) == "" {
			fmt.Fprintf(stderr, "switchboard tenant create: %s is required\n", f.flag)
			return exitUsage
		}
	}
	if err := createTenant(ctx, cfg, *slug, *name, *email, stdout); err != nil {
		fmt.Fprintf(stderr, "switchboard tenant create: %v\n", err)
		if c := switchboard.CodeOf(err); c == switchboard.CodeInvalid || c == switchboard.CodeConflict {
			return exitUsage
		}
		return exitFailed
	}
	return exitOK
}
