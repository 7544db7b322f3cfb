package main

import (
	"regexp"
	"strings"
	"testing"
)

// firstStart reads what serve printed on its first start: its URL, the admin's API key
// and the link that sets the admin's password.
func firstStart(t *testing.T, lines []string) (base, key, link string) {
	t.Helper()
	base = regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(lines[0])
	for _, l := range lines {
		if k, ok := strings.CutPrefix(l, "Admin API key (shown once, store it now): "); ok {
			key = k
		}
		if k, ok := strings.CutPrefix(l, "Set the admin's UI password (admin@localhost, one use, 24 h): "); ok {
			link = k
		}
	}
	if base == "" || key == "" || link == "" {
		t.Fatalf("serve printed %q: no URL, admin key or password link", lines)
	}
	return base, key, link
}
