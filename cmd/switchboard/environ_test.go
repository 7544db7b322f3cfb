package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnknownVars(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		environ []string
		want    [][2]string
	}{
		{name: "known ones", environ: []string{"SWITCHBOARD_ADDR=x", "SWITCHBOARD_OAUTH_NOTION_CLIENT_ID=x", "SWITCHBOARD_AIRTABLE_BASE_URL=x", "SWITCHBOARD_TEST_DATABASE_URL=x", "HOME=/root"}},
		{name: "a typo", environ: []string{"SWITCHBOARD_ADRR=x"}, want: [][2]string{{"SWITCHBOARD_ADRR", "SWITCHBOARD_ADDR"}}},
		{name: "OAuth for a provider without OAuth", environ: []string{"SWITCHBOARD_OAUTH_AIRTABLE_CLIENT_ID=x"}, want: [][2]string{{"SWITCHBOARD_OAUTH_AIRTABLE_CLIENT_ID", ""}}},
		{name: "nothing near", environ: []string{"SWITCHBOARD_FROBNICATE=1", "SWITCHBOARD_FROBNICATE=2"}, want: [][2]string{{"SWITCHBOARD_FROBNICATE", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, unknownVars(tt.environ)); diff != "" {
				t.Errorf("unknownVars (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnknownVarWarned runs a command with a misspelt variable: it still runs, and
// says which variable it ignored and which one was probably meant.
func TestUnknownVarWarned(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"migrate"}, []string{"SWITCHBOARD_DATA_DIR=" + dir, "SWITCHBOARD_PUBLIK_URL=https://hub.example.com"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := `level=WARN msg="unknown configuration variable, ignored; switchboard -h lists them" name=SWITCHBOARD_PUBLIK_URL did_you_mean=SWITCHBOARD_PUBLIC_URL`
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
}

func TestVersionOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{name: "no build information", want: "(devel)"},
		{name: "module version", bi: &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, want: "v1.4.0"},
		{name: "pseudo-version from the commit", bi: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261124004238-30f1c7aca40a+dirty"}}, want: "v0.0.0-20261124004238-30f1c7aca40a+dirty"},
		{name: "commit only", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "30f1c7aca40a6604dca4d3eedc6aadda22000571"}, {Key: "vcs.time", Value: "2026-11-24T00:42:38Z"}, {Key: "vcs.modified", Value: "true"},
		}}, want: "(devel) 30f1c7aca40a+dirty 2026-11-24T00:42:38Z"},
		{name: "nothing stamped", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, want: "(devel)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := versionOf(tt.bi); got != tt.want {
				t.Errorf("versionOf() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLinksUseTheServersURL checks that the commands printing links use the URL the
// server recorded, and say which one they assumed when no server has recorded one.
func TestLinksUseTheServersURL(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	e := []string{"SWITCHBOARD_DATA_DIR=" + dir, "SWITCHBOARD_ADDR=127.0.0.1:9001"}
	var stdout, stderr bytes.Buffer
	args := []string{"tenant", "create", "--slug", "acme", "--name", "Acme", "--owner-email", "ada@acme.test"}
	if code := run(context.Background(), args, e, &stdout, &stderr); code != exitOK {
		t.Fatalf("tenant create: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "link (one use, 24 h): http://127.0.0.1:9001/invite/sbi_") {
		t.Errorf("tenant create printed:\n%s", stdout.String())
	}
	if want := "so the links below assume http://127.0.0.1:9001 (from SWITCHBOARD_ADDR)"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}

	if err := storePublicURL(config{DataDir: dir}, "http://127.0.0.1:41234"); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"user", "password-link", "--tenant", "acme", "--email", "ada@acme.test"}, e, &stdout, &stderr); code != exitOK {
		t.Fatalf("user password-link: exit %d: %s", code, stderr.String())
	}
	if !regexp.MustCompile(`: http://127\.0\.0\.1:41234/invite/sbi_\S+\n$`).MatchString(stdout.String()) || stderr.Len() != 0 {
		t.Errorf("password-link printed %q, stderr %q; want the recorded URL and no note", stdout.String(), stderr.String())
	}
}

// TestConfigurationReference checks that docs/reference/configuration.md is what the
// table of variables (envVars) generates, and that `switchboard -h` lists that table
// with every provider named.
func TestConfigurationReference(t *testing.T) {
	t.Parallel()
	var want bytes.Buffer
	if err := writeConfigDoc(&want); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", configDocPath))
	if err != nil {
		t.Fatalf("read %s: %v; create it with: go generate ./cmd/switchboard", configDocPath, err)
	}
	if diff := cmp.Diff(want.String(), string(got)); diff != "" {
		t.Errorf("%s differs from envVars(); regenerate it with: go generate ./cmd/switchboard (-generated +file):\n%s", configDocPath, diff)
	}

	var stdout bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, nil, &stdout, io.Discard); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var help, table []string
	for _, m := range regexp.MustCompile(`(?m)^  ([A-Z][A-Z0-9_<>]+) \(default (.*)\)$`).FindAllStringSubmatch(stdout.String(), -1) {
		help = append(help, m[1]+" = "+m[2])
	}
	for _, v := range envVars() {
		table = append(table, v.Name+" = "+v.shownDefault())
	}
	if diff := cmp.Diff(table, help); diff != "" {
		t.Errorf("switchboard -h (-envVars +help):\n%s", diff)
	}
	for _, title := range providerTitles() {
		if !strings.Contains(stdout.String(), title) {
			t.Errorf("switchboard -h does not name %s", title)
		}
	}
	if want := "(<PROVIDER>: " + strings.Join(providerNames(true), ", ") + ")"; !strings.Contains(stdout.String(), want) {
		t.Errorf("switchboard -h lacks the OAuth providers %s", want)
	}
}

// TestConfigDocCommand checks that `switchboard config-doc FILE` writes the reference
// the test above compares with.
func TestConfigDocCommand(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "configuration.md")
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"config-doc", path}, nil, io.Discard, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := writeConfigDoc(&want); err != nil {
		t.Fatal(err)
	}
	if got := string(got); got != want.String() || !strings.Contains(got, "| `SWITCHBOARD_ADDR` | `127.0.0.1:8080` |") {
		t.Errorf("config-doc wrote:\n%s", got)
	}
	if code := run(context.Background(), []string{"config-doc", "a", "b"}, nil, io.Discard, io.Discard); code != exitUsage {
		t.Errorf("config-doc with two files: exit %d, want %d", code, exitUsage)
	}
}

// TestDefaultsComeFromTheTable checks that every default the table states is the one
// loadConfig applies: setting a variable to its table default changes nothing, and a
// variable loadConfig reads but the table lacks would have no default at all.
func TestDefaultsComeFromTheTable(t *testing.T) {
	t.Parallel()
	base, err := loadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range envVars() {
		if v.Default == "" {
			if _, derived := derivedDefaults()[v.Name]; !derived && v.shownDefault() != "none" {
				t.Errorf("%s: no default and no description of one", v.Name)
			}
			continue
		}
		n++
		got, err := loadConfig(func(k string) string {
			if k == v.Name {
				return v.Default
			}
			return ""
		})
		if err != nil {
			t.Errorf("%s=%s (its table default): %v", v.Name, v.Default, err)
			continue
		}
		if diff := cmp.Diff(base, got); diff != "" {
			t.Errorf("%s=%s (its table default) changes the configuration (-unset +set):\n%s", v.Name, v.Default, diff)
		}
	}
	if n < 10 {
		t.Errorf("only %d variables have a default in the table", n)
	}
	// The table is where they come from: without it, loadConfig would see none.
	if base.Addr != tableDefault(envVars(), "SWITCHBOARD_ADDR") || base.Overload.DrainLead != defaultDrainLead ||
		base.RunLease.String() != tableDefault(envVars(), "SWITCHBOARD_RUN_LEASE") {
		t.Errorf("loadConfig's defaults %+v are not the table's", base)
	}
	for _, name := range []string{"SWITCHBOARD_GITHUB_BASE_URL", "SWITCHBOARD_OAUTH_SLACK_CLIENT_ID"} {
		if d := tableDefault([]envVar{{"SWITCHBOARD_<PROVIDER>_BASE_URL", "b", ""}, {"SWITCHBOARD_OAUTH_<PROVIDER>_CLIENT_ID", "c", ""}}, name); d == "" {
			t.Errorf("tableDefault(%s) found no <PROVIDER> row", name)
		}
	}
}
