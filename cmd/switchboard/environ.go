package main

import (
	"cmp"
	"slices"
	"strings"

	"github.com/switchboard-hub/switchboard/providers/all"
	"github.com/switchboard-hub/switchboard/providers/catalog"
)

// lookupEnv returns a getenv over environ, a list of KEY=VALUE entries (os.Environ's
// form); a later entry for a key wins, as in the process environment.
func lookupEnv(environ []string) func(string) string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(k string) string { return m[k] }
}

// testVars are SWITCHBOARD_ variables the repository's tests read, not the server; a
// developer may well have them set, so they draw no warning.
func testVars() []string {
	return []string{"SWITCHBOARD_TEST_DATABASE_URL", "SWITCHBOARD_VAULT_BIN"}
}

// knownVars is every variable name the binary reads: envVars with <PROVIDER> expanded
// to each provider it applies to (every provider for base URLs, those that connect
// with OAuth for the OAuth variables).
func knownVars() map[string]bool {
	known := map[string]bool{}
	for _, v := range envVars() {
		if !strings.Contains(v.Name, "<PROVIDER>") {
			known[v.Name] = true
			continue
		}
		for _, name := range providerNames(strings.HasPrefix(v.Name, "SWITCHBOARD_OAUTH_")) {
			known[strings.Replace(v.Name, "<PROVIDER>", name, 1)] = true
		}
	}
	for _, v := range testVars() {
		known[v] = true
	}
	return known
}

// providerNames are the providers' names as variables spell them (GITHUB), all of them
// or only those that connect with OAuth: then the built-in catalog's APIs that do too
// (GMAIL), after the curated providers.
func providerNames(oauthOnly bool) []string {
	var out []string
	for _, s := range all.Specs() {
		if oauthOnly && s.OAuth == nil {
			continue
		}
		out = append(out, strings.ToUpper(s.Name))
	}
	if oauthOnly {
		names, err := catalog.OAuthApps()
		if err != nil {
			panic("the built-in catalog's presets do not read: " + err.Error()) // embedded files a test reads
		}
		for _, n := range names {
			out = append(out, strings.ToUpper(n))
		}
	}
	return out
}

// providerTitles are the providers' display names, for the help text.
func providerTitles() []string {
	var out []string
	for _, s := range all.Specs() {
		out = append(out, cmp.Or(s.Title, s.Name))
	}
	return out
}

// unknownVars returns the SWITCHBOARD_ variables in environ the binary does not read,
// sorted, each with the known name closest to it when one is near (a likely typo).
func unknownVars(environ []string) [][2]string {
	known := knownVars()
	var out [][2]string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "SWITCHBOARD_") || known[k] {
			continue
		}
		out = append(out, [2]string{k, closest(k, known)})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return slices.CompactFunc(out, func(a, b [2]string) bool { return a[0] == b[0] })
}

// closest returns the known name within three edits of name, or "".
func closest(name string, known map[string]bool) string {
	best, bestDist := "", 4
	for k := range known {
		if d := editDistance(name, k); d < bestDist || (d == bestDist && k < best) {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
