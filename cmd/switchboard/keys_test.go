package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/database"
	"github.com/switchboard-hub/switchboard/internal/vaulttest"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/tenants"
)

// TestMain builds the Vault binary the keyring tests run against, if it is not cached
// yet, before any test's timeout starts.
func TestMain(m *testing.M) { vaulttest.Main(m) }

// seedConnections creates two tenants with connections sealed by the keyring the
// configuration names, and returns their tokens by connection ID.
func seedConnections(t *testing.T, environ []string) map[string]string {
	t.Helper()
	ctx := context.Background()
	cfg, err := loadConfig(lookupEnv(environ))
	if err != nil {
		t.Fatal(err)
	}
	db, err := openDatabase(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	kr, _, err := openKeyring(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := tenants.NewStore(db)
	defer ts.Close()
	store := connections.NewStore(db, kr)
	tokens := map[string]string{}
	for i, slug := range []string{"acme", "beta"} {
		ten, owner, _, _, err := ts.CreateTenantWithOwner(ctx, slug, slug, "owner@"+slug+".test")
		if err != nil {
			t.Fatal(err)
		}
		for j := range i + 2 {
			token := fmt.Sprintf("ghp_%s_%d_%s", slug, j, switchboard.RandomToken(6))
			c := connections.Connection{OwnerUserID: owner.ID, Provider: "github", AuthKind: providers.AuthAPIKey, AccountID: token, AccountLabel: token}
			if err := store.Create(ctx, ten.ID, &c, connections.Credentials{AccessToken: token}); err != nil {
				t.Fatal(err)
			}
			tokens[c.ID] = token
		}
	}
	return tokens
}

// openedTokens opens every connection with a keyring made now from the configuration,
// and returns the key IDs they are under and the kinds of audit events recorded.
func openedTokens(t *testing.T, environ []string) (tokens map[string]string, keyIDs map[string]bool, kinds map[audit.Kind]int) {
	t.Helper()
	ctx := context.Background()
	cfg, err := loadConfig(lookupEnv(environ))
	if err != nil {
		t.Fatal(err)
	}
	db, err := openDatabase(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	kr, _, err := openKeyring(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	store := connections.NewStore(db, kr)
	var rows []connections.Connection
	if err := db.Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	tokens, keyIDs, kinds = map[string]string{}, map[string]bool{}, map[audit.Kind]int{}
	for _, r := range rows {
		_, creds, err := store.Open(ctx, r.TenantID, r.ID)
		if err != nil {
			t.Fatalf("open %s: %v", r.ID, err)
		}
		tokens[r.ID] = creds.AccessToken
		keyIDs[r.KeyID] = true
	}
	var evs []audit.Event
	if err := db.Find(&evs).Error; err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		kinds[e.Kind]++
	}
	return tokens, keyIDs, kinds
}

func TestKeysRotate(t *testing.T) {
	t.Parallel()
	srv := vaulttest.Start(t)
	tests := []struct {
		name      string
		env       func(t *testing.T) map[string]string
		wantKeyID *regexp.Regexp
	}{
		{
			name: "key file",
			env: func(t *testing.T) map[string]string {
				return map[string]string{"SWITCHBOARD_DATA_DIR": filepath.Join(t.TempDir(), "data")}
			},
			wantKeyID: regexp.MustCompile(`^k[0-9a-z]{8}$`),
		},
		{
			name: "vault",
			env: func(t *testing.T) map[string]string {
				return map[string]string{
					"SWITCHBOARD_DATA_DIR": filepath.Join(t.TempDir(), "data"), "SWITCHBOARD_KEYRING": "vault",
					"SWITCHBOARD_VAULT_ADDR": srv.Addr, "VAULT_TOKEN": srv.Token, "SWITCHBOARD_VAULT_TRANSIT_KEY": srv.NewKey(t),
				}
			},
			wantKeyID: regexp.MustCompile(`^vault:transit/k-[0-9a-f]+:v2$`),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := env(tt.env(t))
			want := seedConnections(t, e)
			_, before, _ := openedTokens(t, e)

			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), []string{"keys", "rotate", "--batch-size", "2"}, e, &stdout, &stderr); code != exitOK {
				t.Fatalf("keys rotate: exit %d: %s", code, stderr.String())
			}
			m := regexp.MustCompile(`(?m)^Rotated to key (\S+); 5 records re-sealed in this run\.$`).FindStringSubmatch(stdout.String())
			if m == nil || !tt.wantKeyID.MatchString(m[1]) || before[m[1]] {
				t.Fatalf("output:\n%s", stdout.String())
			}
			keyID := m[1]
			lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			wantLines := []string{
				"connections: 2 of 5 re-sealed, 0 changed meanwhile, 0 failed",
				"connections: 4 of 5 re-sealed, 0 changed meanwhile, 0 failed",
				"connections: 5 of 5 re-sealed, 0 changed meanwhile, 0 failed",
				"Rotated to key " + keyID + "; 5 records re-sealed in this run.",
				"0 access token signing keys retired; new ones sign from now on.",
			}
			if len(lines) != 6 || !regexp.MustCompile(`^Rotation rot_\w+ finished: every record is sealed under key `+regexp.QuoteMeta(keyID)+`\.$`).MatchString(lines[5]) {
				t.Errorf("last line of:\n%s", stdout.String())
			}
			if diff := cmp.Diff(wantLines, lines[:min(5, len(lines))]); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			got, after, kinds := openedTokens(t, e)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("tokens after the rotation (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]bool{keyID: true}, after); diff != "" {
				t.Errorf("key ids after the rotation (-want +got):\n%s", diff)
			}
			if kinds[audit.KindKeysRotated] != 2 {
				t.Errorf("%d keys_rotated events, want one per tenant (2); all: %v", kinds[audit.KindKeysRotated], kinds)
			}
			for _, tok := range append(mapValues(want), srv.Token) {
				if strings.Contains(stdout.String()+stderr.String(), tok) {
					t.Errorf("the output shows a secret %q", tok)
				}
			}
		})
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func TestKeysCommandLine(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantCode   int
		wantStderr string
	}{
		{name: "no sub-command", args: []string{"keys"}, wantCode: exitUsage, wantStderr: "the only sub-command is rotate"},
		{name: "unknown sub-command", args: []string{"keys", "list"}, wantCode: exitUsage, wantStderr: "the only sub-command is rotate"},
		{name: "batch size zero", args: []string{"keys", "rotate", "--batch-size", "0"}, wantCode: exitUsage, wantStderr: "--batch-size must be 1 to 10000"},
		{name: "extra argument", args: []string{"keys", "rotate", "now"}, wantCode: exitUsage, wantStderr: `unexpected arguments "now"`},
		{name: "unknown flag", args: []string{"keys", "rotate", "--force"}, wantCode: exitUsage, wantStderr: "flag provided but not defined: -force"},
		{name: "no key file", args: []string{"keys", "rotate"}, wantCode: exitFailed, wantStderr: "master.key: stat"},
		{name: "vault keyring without a token", args: []string{"keys", "rotate"}, env: map[string]string{"SWITCHBOARD_KEYRING": "vault", "SWITCHBOARD_VAULT_ADDR": "http://127.0.0.1:1", "SWITCHBOARD_VAULT_TRANSIT_KEY": "k"}, wantCode: exitUsage, wantStderr: "SWITCHBOARD_VAULT_TOKEN: is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := map[string]string{"SWITCHBOARD_DATA_DIR": dir}
			for k, v := range tt.env {
				e[k] = v
			}
			var stderr bytes.Buffer
			if code := run(context.Background(), tt.args, env(e), io.Discard, &stderr); code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr %s", code, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr lacks %q: %s", tt.wantStderr, stderr.String())
			}
		})
	}
}

// TestServeWithVaultKeyring starts the server on a Vault keyring, and refuses to start
// with a token Vault rejects, without printing the token.
func TestServeWithVaultKeyring(t *testing.T) {
	t.Parallel()
	srv := vaulttest.Start(t)
	key := srv.NewKey(t)
	e := map[string]string{
		"SWITCHBOARD_ADDR": "127.0.0.1:0", "SWITCHBOARD_DATA_DIR": filepath.Join(t.TempDir(), "data"), "SWITCHBOARD_LOG_LEVEL": "error",
		"SWITCHBOARD_KEYRING": "vault", "SWITCHBOARD_VAULT_ADDR": srv.Addr, "SWITCHBOARD_VAULT_TOKEN": srv.Token, "SWITCHBOARD_VAULT_TRANSIT_KEY": key,
	}
	lines, stop := startServe(t, env(e), 6)
	if !strings.HasPrefix(lines[0], "Switchboard is listening on http://127.0.0.1:") {
		t.Errorf("first line %q", lines[0])
	}
	if want := "; credentials sealed with the Vault transit key transit/keys/" + key + " at " + srv.Addr; !strings.HasSuffix(lines[1], want) {
		t.Errorf("second line %q does not end %q", lines[1], want)
	}
	if code := stop(); code != exitOK {
		t.Fatalf("serve exit %d", code)
	}

	bad := "hvs.wrong-" + switchboard.RandomToken(8)
	e["SWITCHBOARD_VAULT_TOKEN"] = bad
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"serve"}, env(e), &stdout, &stderr); code != exitFailed {
		t.Fatalf("serve with a bad token: exit %d, want %d; stderr %s", code, exitFailed, stderr.String())
	}
	if !strings.Contains(stderr.String(), "403") || strings.Contains(stderr.String()+stdout.String(), bad) {
		t.Errorf("stderr should report Vault's refusal without the token:\n%s", stderr.String())
	}
}
