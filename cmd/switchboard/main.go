// Command switchboard runs the Switchboard integration hub: the MCP endpoints, the REST
// API and the web page in one process, configured by SWITCHBOARD_* environment variables.
//
//	switchboard [serve]                                          run the server (the default)
//	switchboard migrate                                          run the database migrations and exit
//	switchboard tenant create --slug S --name N --owner-email E  create a tenant, its owner and an owner key
//	switchboard keys rotate [--batch-size N]                     re-seal every credential under a new key
//	switchboard probe /readyz                                    ask this node's own probe (a container healthcheck)
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

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/telemetry"
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
	code := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: it parses the command line and the configuration in
// environ (KEY=VALUE entries), runs the sub-command, and returns the exit code.
func run(ctx context.Context, args []string, environ []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return exitOK
	case "version", "-version", "--version":
		v := version()
		if v == "(devel)" {
			v += ": built without version information (go run and -buildvcs=false leave it out; go build in a git checkout stamps the commit)"
		}
		fmt.Fprintln(stdout, "switchboard", v)
		return exitOK
	case "config-doc":
		return configDocCommand(args, stdout, stderr)
	case "serve", "migrate", "tenant", "user", "keys", "probe":
	default:
		fmt.Fprintf(stderr, "switchboard: unknown command %q\n\n", cmd)
		usage(stderr)
		return exitUsage
	}

	cfg, err := loadConfig(lookupEnv(environ))
	if err != nil {
		fmt.Fprintf(stderr, "switchboard: invalid configuration: %v\n", err)
		return exitUsage
	}
	if cmd == "serve" {
		// One write per access log line cost about 3% of serve's CPU under load: lines
		// are batched, and written when run returns.
		logs := telemetry.NewLogBuffer(stderr, telemetry.LogBufferSize, telemetry.LogFlushEvery)
		defer logs.Close()
		stderr = logs
	}
	handler, err := telemetry.NewLogHandler(stderr, cfg.LogFormat, cfg.LogLevel)
	if err != nil {
		fmt.Fprintf(stderr, "switchboard: invalid configuration: %v\n", err)
		return exitUsage
	}
	log := slog.New(handler)
	// A misspelt variable would otherwise be ignored without a word.
	for _, u := range unknownVars(environ) {
		attrs := []any{"name", u[0]}
		if u[1] != "" {
			attrs = append(attrs, "did_you_mean", u[1])
		}
		log.Warn("unknown configuration variable, ignored; switchboard -h lists them", attrs...)
	}

	switch cmd {
	case "serve":
		if code, ok := noArgs("serve", args, stderr); !ok {
			return code
		}
		applyGCDefaults(lookupEnv(environ), log)
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
	case "probe":
		return probeCommand(ctx, cfg, args, stdout, stderr)
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
	fmt.Fprintf(w, `Switchboard: an integration hub that serves the operations of your connected SaaS
accounts (%s) and of remote MCP servers
as MCP tools, one MCP URL per tenant.
`, strings.Join(providerTitles(), ", "))
	fmt.Fprint(w, `
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
  switchboard probe /readyz  ask this node's /readyz (or /healthz) at SWITCHBOARD_ADDR and exit 0
                             when it answers 200: a container healthcheck for an image without curl
  switchboard version        print the version
  switchboard config-doc [FILE]
                             write the configuration reference (Markdown) to FILE or stdout
  switchboard -h             print this help

Configuration (environment variables):
`)
	for _, v := range envVars() {
		fmt.Fprintf(w, "  %s (default %s)\n      %s\n", v.Name, v.shownDefault(), v.Help)
	}
	fmt.Fprint(w, `
On first start, serve creates the tenant "default" and prints its MCP URL, an admin
API key and a one-time link to set the admin's password for the UI (admin@localhost). Send the key as "Authorization: Bearer KEY" to /api and /mcp/default.
`)
}

// version is what the binary knows of the source it was built from (versionOf).
func version() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(bi)
}

// versionOf names a build: the module version the go command stamped (a release tag,
// or since Go 1.24 a pseudo-version from the VCS commit, v0.0.0-TIME-COMMIT, with
// +dirty for uncommitted changes), else the VCS commit and its time, else "(devel)" for
// a build that carries neither (go run, or a build outside a repository).
func versionOf(bi *debug.BuildInfo) string {
	if bi == nil {
		return "(devel)"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = " " + s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return "(devel)"
	}
	return "(devel) " + rev[:min(len(rev), 12)] + dirty + at
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
	if err := createTenant(ctx, cfg, *slug, *name, *email, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "switchboard tenant create: %v\n", err)
		if c := switchboard.CodeOf(err); c == switchboard.CodeInvalid || c == switchboard.CodeConflict {
			return exitUsage
		}
		return exitFailed
	}
	return exitOK
}
