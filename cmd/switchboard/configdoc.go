package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

//go:generate go run . config-doc ../../docs/reference/configuration.md

// configDocPath is where the configuration reference lives, from the module root.
const configDocPath = "docs/reference/configuration.md"

// writeConfigDoc writes the configuration reference, docs/reference/configuration.md,
// from envVars: the one table of variables, which also gives loadConfig its defaults
// and `switchboard -h` its list. TestConfigurationReference fails when the file and the
// table differ.
func writeConfigDoc(w io.Writer) error {
	var b strings.Builder
	b.WriteString(`# Configuration

<!-- Generated from envVars() in cmd/switchboard by ` + "`go generate ./cmd/switchboard`" + `; do not edit. -->

Switchboard reads its configuration from environment variables; ` + "`switchboard -h`" + ` prints the same
list. An invalid value stops the process with exit status 2 and an error naming the variable; a
` + "`SWITCHBOARD_`" + ` variable the binary does not know (a typo) is ignored with a warning that names the
closest known one. A name with ` + "`<PROVIDER>`" + ` stands for one variable per provider it applies to
(` + "`SWITCHBOARD_GITHUB_BASE_URL`" + `).

| Variable | Default | Meaning |
|---|---|---|
`)
	for _, v := range envVars() {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", v.Name, mdCode(v.shownDefault()), mdEscape(v.Help))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCode shows a default as code, unless it is words ("none", "the provider's").
func mdCode(s string) string {
	if s == "none" || s == "off" || strings.Contains(s, " ") {
		return mdEscape(s)
	}
	return "`" + s + "`"
}

// mdEscape keeps a table cell one cell: a | in it would end it.
func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// configDocCommand is `switchboard config-doc [FILE]`: the configuration reference,
// written to FILE, or to stdout without one.
func configDocCommand(args []string, stdout, stderr io.Writer) int {
	switch len(args) {
	case 0:
		if err := writeConfigDoc(stdout); err != nil {
			fmt.Fprintf(stderr, "switchboard config-doc: %v\n", err)
			return exitFailed
		}
		return exitOK
	case 1:
		var b strings.Builder
		if err := writeConfigDoc(&b); err != nil {
			fmt.Fprintf(stderr, "switchboard config-doc: %v\n", err)
			return exitFailed
		}
		if err := os.WriteFile(args[0], []byte(b.String()), 0o644); err != nil {
			fmt.Fprintf(stderr, "switchboard config-doc: %v\n", err)
			return exitFailed
		}
		return exitOK
	}
	fmt.Fprintln(stderr, "switchboard config-doc: takes at most one argument, the file to write")
	return exitUsage
}
