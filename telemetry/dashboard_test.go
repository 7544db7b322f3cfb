package telemetry_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// dashboard is the part of a Grafana dashboard the test reads.
type dashboard struct {
	Title  string `json:"title"`
	UID    string `json:"uid"`
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// TestDashboardQueriesExistingMetrics parses the Grafana dashboard and checks that every
// metric its queries name is one the hub registers, so a renamed metric cannot leave
// an empty panel behind.
func TestDashboardQueriesExistingMetrics(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../deploy/grafana/switchboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("parse the dashboard: %v", err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard has title %q, uid %q, %d panels", d.Title, d.UID, len(d.Panels))
	}
	_, reg := fullMetrics(t)
	metric := regexp.MustCompile(`\b(?:switchboard|go|process)_[a-z0-9_]+\b`)
	seen := map[string]bool{}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			names := metric.FindAllString(tg.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: query %q names no metric", p.Title, tg.Expr)
			}
			for _, n := range names {
				seen[n] = true
				base := n
				for _, suffix := range []string{"_bucket", "_count", "_sum"} {
					if b, ok := strings.CutSuffix(n, suffix); ok {
						if _, hist := reg.names[b]; hist {
							base = b
						}
					}
				}
				if _, ok := reg.names[base]; !ok {
					t.Errorf("panel %q queries %s, which the hub does not register", p.Title, n)
				}
			}
		}
	}
	// Every metric of the hub's own has a panel.
	for name := range reg.names {
		if !strings.HasPrefix(name, "switchboard_") {
			continue
		}
		found := false
		for n := range seen {
			if n == name || strings.HasPrefix(n, name+"_") {
				found = true
			}
		}
		if !found {
			t.Errorf("no panel shows %s", name)
		}
	}
}
