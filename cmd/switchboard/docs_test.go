package main

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// docFiles returns README.md and every Markdown file under docs/, by path from the
// module root, with their text.
func docFiles(t *testing.T) map[string]string {
	t.Helper()
	root := filepath.Join("..", "..")
	files := map[string]string{}
	read := func(rel string) {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.ToSlash(rel)] = string(b)
	}
	read("README.md")
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		read(rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d documentation files", len(files))
	}
	return files
}

// mdLink is a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)

// fencedBlocks matches fenced code blocks, whose text is no link.
var fencedBlocks = regexp.MustCompile("(?s)```.*?```")

// TestDocsLinks checks that every relative link in README.md and docs/ reaches a file or
// directory of the repository, and that a link to a heading (#anchor) names one that
// the target page has.
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	files := docFiles(t)
	root := filepath.Join("..", "..")
	checked := 0
	for name, text := range files {
		for _, m := range mdLink.FindAllStringSubmatch(fencedBlocks.ReplaceAllString(text, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			dest := name
			if path != "" {
				dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(name), path)))
				if strings.HasPrefix(dest, "../") {
					t.Errorf("%s: link %s leaves the repository", name, target)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
					t.Errorf("%s: link %s: no such file %s", name, target, dest)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			page, ok := files[dest]
			if !ok {
				b, err := os.ReadFile(filepath.Join(root, dest))
				if err != nil {
					t.Errorf("%s: link %s: %v", name, target, err)
					continue
				}
				page = string(b)
			}
			if !slices.Contains(headingAnchors(page), anchor) {
				t.Errorf("%s: link %s: %s has no heading #%s (it has %v)", name, target, dest, anchor, headingAnchors(page))
			}
		}
	}
	if checked < 30 {
		t.Errorf("checked only %d relative links", checked)
	}
}

// headingAnchors returns the anchors GitHub gives a page's headings: lower case,
// punctuation dropped, spaces as hyphens, repeats numbered.
func headingAnchors(page string) []string {
	var out []string
	seen := map[string]int{}
	for _, line := range strings.Split(fencedBlocks.ReplaceAllString(page, ""), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out = append(out, a+"-"+strconv.Itoa(n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}

// TestHeadingAnchors pins the anchor rule the link check relies on.
func TestHeadingAnchors(t *testing.T) {
	t.Parallel()
	got := headingAnchors("# Keys: Vault and rotation\n## Lose and regain PostgreSQL\n## Steps\n```\n# not a heading\n```\n## Steps\n")
	want := []string{"keys-vault-and-rotation", "lose-and-regain-postgresql", "steps", "steps-1"}
	if !slices.Equal(got, want) {
		t.Errorf("anchors %v, want %v", got, want)
	}
}

// switchboardCommand matches a use of the binary in a command block or inline code:
// `switchboard keys rotate --batch-size 100`, `go run ./cmd/switchboard serve`.
var switchboardCommand = regexp.MustCompile(`(?m)(?:^|[\s\x60(])(?:go run \./cmd/switchboard|switchboard)((?: +[-a-z/][-a-zA-Z0-9_/=.]*)+)`)

// envName matches a variable of the server's (or of its tests and benchmarks).
var envName = regexp.MustCompile(`\bSWITCHBOARD_[A-Z0-9_<>]*[A-Z0-9>]`)

// TestDocsNameWhatExists checks that the documentation names only what the binary
// has: every switchboard sub-command and flag in README.md's and docs/'s command
// blocks and inline code is one `switchboard -h` lists, and every SWITCHBOARD_
// variable is one the server reads (or, for SWITCHBOARD_BENCH_ and the test
// variables, one the benchmarks or tests read).
func TestDocsNameWhatExists(t *testing.T) {
	t.Parallel()
	var help bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, nil, &help, io.Discard); code != exitOK {
		t.Fatalf("-h: exit %d", code)
	}
	commands, flags := helpCommands(help.String())
	known := knownVars()
	for _, v := range envVars() {
		known[v.Name] = true
	}
	bench := benchVars(t)
	docs := files(t)
	// The reader's own shell variables: those the pages tell them to export.
	for _, text := range docs {
		for _, m := range regexp.MustCompile(`export (SWITCHBOARD_[A-Z0-9_]+)=`).FindAllStringSubmatch(text, -1) {
			bench[m[1]] = true
		}
	}
	var uses int
	for name, text := range docs {
		for _, code := range codeOf(text) {
			for _, m := range switchboardCommand.FindAllStringSubmatch(code, -1) {
				words := strings.Fields(m[1])
				if words[0] == "serve" && len(words) == 1 || strings.HasPrefix(words[0], "-") && words[0] == "-h" {
					uses++
					continue
				}
				if strings.Contains(words[0], "/") || strings.Contains(words[0], ".") {
					continue // a path such as switchboard/data, not a command
				}
				uses++
				cmd := words[0]
				if hasSub(commands, cmd) {
					// keys, tenant, user: the next word must be one of theirs.
					if len(words) > 1 {
						cmd += " " + words[1]
					}
				}
				if !commands[cmd] {
					t.Errorf("%s: `switchboard %s`: no such command (switchboard -h lists %v)", name, strings.Join(words, " "), keys(commands))
					continue
				}
				for _, w := range words {
					if f, _, _ := strings.Cut(w, "="); strings.HasPrefix(f, "--") && !flags[f] {
						t.Errorf("%s: `switchboard %s`: no flag %s", name, strings.Join(words, " "), f)
					}
				}
			}
		}
		for _, v := range envName.FindAllString(text, -1) {
			if !known[v] && !bench[v] {
				t.Errorf("%s names %s, which nothing reads", name, v)
			}
		}
	}
	if uses < 5 {
		t.Errorf("found only %d uses of switchboard's commands", uses)
	}
}

func files(t *testing.T) map[string]string { return docFiles(t) }

// codeOf returns a page's fenced blocks and inline code spans.
func codeOf(page string) []string {
	out := fencedBlocks.FindAllString(page, -1)
	rest := fencedBlocks.ReplaceAllString(page, "")
	for _, m := range regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(rest, -1) {
		out = append(out, m[1])
	}
	return out
}

// helpCommands returns the sub-commands `switchboard -h` lists ("keys rotate") and
// the flags their synopses take.
func helpCommands(help string) (map[string]bool, map[string]bool) {
	commands, flags := map[string]bool{}, map[string]bool{}
	for _, line := range strings.Split(help, "\n") {
		// A synopsis ends where its description starts, two spaces on.
		synopsis := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), 2)[0]
		words := strings.Fields(synopsis)
		if len(words) < 2 || words[0] != "switchboard" {
			continue
		}
		name := strings.Trim(words[1], "[]")
		commands[name] = true
		if len(words) > 2 && regexp.MustCompile(`^[a-z][-a-z]*$`).MatchString(words[2]) {
			commands[name+" "+words[2]] = true
		}
		for _, f := range regexp.MustCompile(`--[a-z][-a-z]*`).FindAllString(line, -1) {
			flags[f] = true
		}
	}
	return commands, flags
}

// benchVars are the SWITCHBOARD_ variables the benchmarks and test rigs read.
func benchVars(t *testing.T) map[string]bool {
	t.Helper()
	vars := map[string]bool{}
	for _, v := range testVars() {
		vars[v] = true
	}
	for _, dir := range []string{"bench", "internal/vaulttest"} {
		paths, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range envName.FindAllString(string(b), -1) {
				vars[v] = true
			}
		}
	}
	return vars
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// hasSub reports whether cmd has sub-commands of its own (keys rotate).
func hasSub(commands map[string]bool, cmd string) bool {
	for c := range commands {
		if strings.HasPrefix(c, cmd+" ") {
			return true
		}
	}
	return false
}

// TestDocsCurlPathsExist checks that every curl command in README.md and docs/ asks for
// a method and /api path that docs/reference/rest.md lists (which the api package's
// tests hold to the routes served).
func TestDocsCurlPathsExist(t *testing.T) {
	t.Parallel()
	docs := files(t)
	rest, ok := docs["docs/reference/rest.md"]
	if !ok {
		t.Fatal("no docs/reference/rest.md")
	}
	type route struct {
		method string
		path   *regexp.Regexp
	}
	var routes []route
	param := regexp.MustCompile(`\\\{[^}]*\}|:[a-z_]+`)
	for _, m := range regexp.MustCompile("(?m)^\\| `(GET|POST|PUT|PATCH|DELETE) (/[^` ?]*)").FindAllStringSubmatch(rest, -1) {
		routes = append(routes, route{m[1], regexp.MustCompile("^" + param.ReplaceAllString(regexp.QuoteMeta(m[2]), "[^/]+") + "$")})
	}
	if len(routes) < 30 {
		t.Fatalf("docs/reference/rest.md lists %d routes", len(routes))
	}
	curl := regexp.MustCompile(`curl((?:\s+-X\s+[A-Z]+)?)[^\n]*?https?://[^/\s]+(/api/[^\s"'?\\]*)`)
	n := 0
	for name, text := range docs {
		for _, block := range fencedBlocks.FindAllString(text, -1) {
			for _, m := range curl.FindAllStringSubmatch(block, -1) {
				n++
				method := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(m[1]), "-X"))
				if method == "" {
					method = "GET"
				}
				if !slices.ContainsFunc(routes, func(r route) bool { return r.method == method && r.path.MatchString(m[2]) }) {
					t.Errorf("%s: curl %s %s: docs/reference/rest.md has no such route", name, method, m[2])
				}
			}
		}
	}
	if n < 4 {
		t.Errorf("found only %d curl commands", n)
	}
}
