package web

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// cssVars reads the custom properties (--name: #rrggbb) declared in block.
func cssVars(block string) map[string]string {
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`--([a-z-]+):\s*(#[0-9a-fA-F]{6})`).FindAllStringSubmatch(block, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// luminance is the WCAG 2 relative luminance of #rrggbb.
func luminance(hex string) float64 {
	var c [3]float64
	for i := range c {
		v, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		s := float64(v) / 255
		if s <= 0.03928 {
			c[i] = s / 12.92
		} else {
			c[i] = math.Pow((s+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2]
}

// contrast is the WCAG 2 contrast ratio of two colours.
func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	return (math.Max(la, lb) + 0.05) / (math.Min(la, lb) + 0.05)
}

// TestColourContrast checks that every text colour of the stylesheet reaches WCAG AA
// (4.5:1) on every background it is drawn on, in light and in dark mode: the accent
// (links, secondary buttons) and the status colours on the page, panels and code, and
// the button text on the accent.
func TestColourContrast(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("static/style.css")
	if err != nil {
		t.Fatal(err)
	}
	css := string(b)
	root := css[strings.Index(css, ":root {"):]
	root = root[:strings.Index(root, "}")]
	light := cssVars(root)
	dark := cssVars(root)
	darkAt := strings.Index(css, "prefers-color-scheme: dark")
	if darkAt < 0 {
		t.Fatal("the stylesheet has no dark mode")
	}
	for k, v := range cssVars(css[darkAt : darkAt+strings.Index(css[darkAt:], "}")]) {
		dark[k] = v
	}
	type pair struct{ fg, bg string }
	var pairs []pair
	for _, fg := range []string{"fg", "muted", "accent", "danger", "ok", "warn"} {
		for _, bg := range []string{"bg", "panel", "code-bg"} {
			pairs = append(pairs, pair{fg, bg})
		}
	}
	pairs = append(pairs, pair{"accent-fg", "accent"})
	for mode, vars := range map[string]map[string]string{"light": light, "dark": dark} {
		for _, p := range pairs {
			fg, bg := vars[p.fg], vars[p.bg]
			if fg == "" || bg == "" {
				t.Errorf("%s mode: --%s or --%s is not declared", mode, p.fg, p.bg)
				continue
			}
			if r := contrast(fg, bg); r < 4.5 {
				t.Errorf("%s mode: --%s %s on --%s %s is %.2f:1, want at least 4.5:1", mode, p.fg, fg, p.bg, bg, r)
			}
		}
	}
}
