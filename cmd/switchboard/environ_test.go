package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
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

// TestConfigurationTable checks that README.md's configuration table lists exactly the
// variables `switchboard -h` prints, with the same defaults.
func TestConfigurationTable(t *testing.T) {
	t.Parallel()
	var stdout bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, nil, &stdout, io.Discard); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var help []string
	for _, m := range regexp.MustCompile(`(?m)^  ([A-Z][A-Z0-9_<>]+) \(default (.*)\)$`).FindAllStringSubmatch(stdout.String(), -1) {
		help = append(help, m[1]+" = "+m[2])
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatalf("read README.md: %v", err)
	}
	var table []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Z][A-Z0-9_<>]+)` \\| ([^|]+) \\|").FindAllStringSubmatch(string(readme), -1) {
		table = append(table, m[1]+" = "+strings.ReplaceAll(strings.TrimSpace(m[2]), "`", ""))
	}
	// The help names every provider, and every one that connects with OAuth among the
	// OAuth variables.
	for _, title := range providerTitles() {
		if !strings.Contains(stdout.String(), title) {
			t.Errorf("switchboard -h does not name %s", title)
		}
	}
	if want := "(<PROVIDER>: " + strings.Join(providerNames(true), ", ") + ")"; !strings.Contains(stdout.String(), want) {
		t.Errorf("switchboard -h lacks the OAuth providers %s", want)
	}
	if len(help) != len(envVars()) {
		t.Fatalf("-h lists %d variables, envVars %d:\n%s", len(help), len(envVars()), stdout.String())
	}
	slices.Sort(help)
	slices.Sort(table)
	if diff := cmp.Diff(help, table); diff != "" {
		t.Errorf("README.md's configuration table (-switchboard -h +README):\n%s", diff)
	}
}
