package api_test

import (
	"regexp"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestOAuthResultPageLandmarks checks that the page a browser sees at the end of an
// OAuth flow, connected or not, has a main landmark holding an h1 and a way back, so
// screen-reader users can find what happened.
func TestOAuthResultPageLandmarks(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		h := newOAuthHub(t, db, githubApp())
		landmarks := regexp.MustCompile(`(?s)<html lang="en">.*<main[^>]*>\s*<h1>[^<]+</h1>.*<a href="[^"]+/#connections"[^>]*>Back to Switchboard</a>.*</main>`)
		for _, decision := range []string{"allow", "deny"} {
			b := h.browser()
			_, page, _ := h.consent(b, h.authorize(b, h.admin, ""), decision, "octocat")
			if !landmarks.Match(page) {
				t.Errorf("%s: the result page lacks main, h1 or the way back:\n%s", decision, page)
			}
		}
	})
}
