package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// pingSchedule fires every second and reads the fake GitHub's issue once a run.
const pingSchedule = `name: ping
description: Reads the issue every second
steps:
  - name: read
    tool: github_get_issue
    args: {owner: octo-org, repo: hello-world, issue_number: 1347}
triggers:
  - schedule: "@every 1s"
`

// firingLine is the scheduler's log line for a firing it started or found claimed.
var firingLine = regexp.MustCompile(`msg="workflow firing (started|already claimed)".* workflow=ping trigger=0 at=(\S+)`)

// firingsLogged reads a node's log: the firings it started and those it found claimed.
func firingsLogged(s *server) (started, claimed []string) {
	for _, m := range firingLine.FindAllStringSubmatch(s.Stderr.String(), -1) {
		if m[1] == "started" {
			started = append(started, m[2])
		} else {
			claimed = append(claimed, m[2])
		}
	}
	return started, claimed
}

// TestScheduleFiresOncePerFleet: two real `serve` processes on one fresh PostgreSQL
// database both run the scheduler over a workflow that fires every second. Every
// firing is started by exactly one of them: each node logs the firings it started and
// those it found claimed, the two started sets are disjoint and together are exactly
// the rows of workflow_firings, a node found firings the other had started, and
// there are as many runs and as many reads at the fake GitHub as firings.
func TestScheduleFiresOncePerFleet(t *testing.T) {
	t.Parallel()
	base := requireFleetDatabase(t)
	bin := buildServer(t)
	dbURL, db := freshPostgres(t, base)
	gh, ghRec := fakeGitHub(t)
	env := map[string]string{
		"SWITCHBOARD_DATABASE_URL":          dbURL,
		"SWITCHBOARD_KEY_FILE":              filepath.Join(t.TempDir(), "keys", "master.key"),
		"SWITCHBOARD_GITHUB_BASE_URL":       gh.URL,
		"SWITCHBOARD_LOG_LEVEL":             "debug",
		"SWITCHBOARD_SCHEDULE_MIN_INTERVAL": "1s", // the schedule fires every second
	}

	// A first process sets up the tenant, the connection and the workflow, and stops:
	// the schedule has fired by the time the fleet starts, and keeps firing.
	setup := startServer(t, bin, env)
	admin := setup.AdminKey
	api := &apiClient{Base: setup.BaseURL, Key: admin}
	if status, body := api.Do(t, http.MethodPost, "/api/connections", map[string]string{"provider": "github", "token": githubToken}); status != http.StatusCreated {
		t.Fatalf("connect GitHub: %d %s", status, body)
	}
	if status, body := api.Do(t, http.MethodPost, "/api/workflows", map[string]string{"definition": pingSchedule}); status != http.StatusCreated {
		t.Fatalf("save the workflow: %d %s", status, body)
	}
	testwait.Recv(t, setup.Terminate(), "the setup process to stop")

	nodes := []*server{startServer(t, bin, env), startServer(t, bin, env)}
	// At least three firings between them: the first can be the only one, crossed at
	// once, and the checks below want more than one firing to compare.
	testwait.Until(t, "a node to find a firing claimed that the other started, and three firings", func() bool {
		startedA, claimedA := firingsLogged(nodes[0])
		startedB, claimedB := firingsLogged(nodes[1])
		crossed := func(claimed, other []string) bool {
			return slices.ContainsFunc(claimed, func(at string) bool { return slices.Contains(other, at) })
		}
		return (crossed(claimedA, startedB) || crossed(claimedB, startedA)) && len(startedA)+len(startedB) >= 3
	})

	// The schedule is removed, every run ends, and both nodes stop.
	noSchedule := pingSchedule[:len(pingSchedule)-len("triggers:\n  - schedule: \"@every 1s\"\n")]
	b := &apiClient{Base: nodes[1].BaseURL, Key: admin}
	if status, body := b.Do(t, http.MethodPut, "/api/workflows/ping", map[string]string{"definition": noSchedule}); status != http.StatusOK {
		t.Fatalf("remove the schedule: %d %s", status, body)
	}
	// A pass that read the schedule before it was removed may still be claiming firings
	// (in CI one claimed a firing as the node stopped): each node's next pass reads no
	// schedule, and a node's passes run one after the other.
	for _, n := range nodes {
		testwait.Until(t, "a node's pass that finds no schedule", func() bool {
			return strings.Contains(n.Stderr.String(), `msg="workflow schedules read" scheduled=0`)
		})
	}
	testwait.Until(t, "a run for every firing, and every run of ping to end", func() bool {
		var firings, runs, open int64
		return db.Raw(`SELECT count(*) FROM workflow_firings`).Scan(&firings).Error == nil &&
			db.Raw(`SELECT count(*) FROM runs WHERE kind = 'workflow' AND workflow = 'ping'`).Scan(&runs).Error == nil &&
			db.Raw(`SELECT count(*) FROM runs WHERE kind = 'workflow' AND workflow = 'ping' AND state NOT IN ('completed', 'failed', 'canceled')`).Scan(&open).Error == nil &&
			firings == runs && open == 0
	})
	for _, n := range nodes {
		testwait.Recv(t, n.Terminate(), "a node to stop")
	}

	var fired []struct{ FireAt time.Time }
	if err := db.Raw(`SELECT fire_at FROM workflow_firings ORDER BY fire_at`).Scan(&fired).Error; err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range fired {
		want = append(want, f.FireAt.UTC().Format(time.RFC3339))
	}
	startedA, claimedA := firingsLogged(nodes[0])
	startedB, claimedB := firingsLogged(nodes[1])
	startedSetup, _ := firingsLogged(setup) // none, unless its scheduler ticked before it stopped
	got := append(append(slices.Clone(startedA), startedB...), startedSetup...)
	slices.Sort(got)
	if len(want) < 2 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the nodes started %v and %v; workflow_firings holds %v: want each firing started by one node exactly", startedA, startedB, want)
	}
	var runs []struct {
		State string
	}
	if err := db.Raw(`SELECT state FROM runs WHERE kind = 'workflow' AND workflow = 'ping'`).Scan(&runs).Error; err != nil {
		t.Fatal(err)
	}
	reads := 0
	for _, r := range ghRec.All() {
		if r.Method == http.MethodGet && r.Path == fmt.Sprintf("/repos/%s/%s/issues/%d", githubOwner, githubRepo, githubIssueNum) {
			reads++
		}
	}
	states, _ := json.Marshal(runs)
	completed := 0
	for _, r := range runs {
		if r.State == "completed" {
			completed++
		}
	}
	if len(runs) != len(want) || completed != len(runs) || reads != len(want) {
		t.Errorf("%d firings, %d runs (%s), %d reads at GitHub: want one run and one read a firing", len(want), len(runs), states, reads)
	}
	t.Logf("%d firings: node A started %d and found %d claimed, node B started %d and found %d claimed", len(want), len(startedA), len(claimedA), len(startedB), len(claimedB))
}
