package securitytest

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// crossPrincipalSeedEnv replays a run of TestRandomCrossPrincipal: the failing run's
// log names its seed.
const crossPrincipalSeedEnv = "SWITCHBOARD_SECURITY_SEED"

// crossPrincipalRounds is how many requests each id-taking route gets from each kind
// of foreign principal.
const crossPrincipalRounds = 4

// TestRandomCrossPrincipal sends every id-taking route the engine registers, as every
// kind of credential foreign to the victim (another tenant's owner, another user of the
// victim's tenant, another user's agent key, a revoked key, a removed user's key, none),
// with the victim's ids of every kind drawn at random for each of its parameters, and
// bodies that name them (a connection, an agent, a workflow step on the victim's
// private connection). Whatever the route does with an id of the wrong kind, no answer
// is a 5xx or holds what the principal may not see, and afterwards nothing of the
// victim's has changed and nobody called GitHub with its token. The seed is random each
// run and logged; SWITCHBOARD_SECURITY_SEED replays one.
func TestRandomCrossPrincipal(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	if v := os.Getenv(crossPrincipalSeedEnv); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", crossPrincipalSeedEnv, v, err)
		}
		seed = s
	}
	t.Logf("seed %d (replay with %s=%d)", seed, crossPrincipalSeedEnv, seed)
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		randomCrossPrincipal(t, newHub(t, db), rand.New(rand.NewPCG(seed, seed>>1|1)))
	})
}

func randomCrossPrincipal(t *testing.T, h *hub, rnd *rand.Rand) {
	f := h.seed()
	upstreamBefore := h.github.victimRequests()
	ids := []string{f.connID, f.agentID, f.agentKeyID, f.keyID, f.runID, f.wfRunID, f.invitationID, f.grantID,
		f.ownerID, f.memberID, f.ssoChangeID, string(f.victimTenant), f.victimSlug, victimAPI, "victim_flow", "github"}
	bodies := []func(id string) string{
		func(string) string { return "" },
		func(id string) string { return `{"connection_id":"` + id + `","arguments":{}}` },
		func(id string) string { return `{"tool":"github_get_me","connection_id":"` + id + `","arguments":{}}` },
		func(id string) string {
			return `{"name":"probe","tools":[{"tool":"github_get_me","connection_id":"` + id + `"}]}`
		},
		func(id string) string { return `{"agent_id":"` + id + `","role":"owner","name":"probe"}` },
		func(id string) string {
			return workflowBody("name: probe_flow\nsteps:\n  - {name: me, tool: github_get_me, connection: " + id + "}\n")
		},
		func(id string) string { return `{"parameters":{},"connection":"` + id + `"}` },
	}
	var routesWithIDs []string
	for _, r := range h.engine.Routes() {
		if strings.Contains(r.Path, "/:") && !strings.HasPrefix(r.Path, "/mcp/") {
			routesWithIDs = append(routesWithIDs, r.Method+" "+r.Path)
		}
	}
	slices.Sort(routesWithIDs)
	if len(routesWithIDs) < 20 {
		t.Fatalf("only %d id-taking routes found: %v", len(routesWithIDs), routesWithIDs)
	}
	sent := 0
	for _, key := range routesWithIDs {
		method, pattern, _ := strings.Cut(key, " ")
		for _, kind := range principalKinds {
			for range crossPrincipalRounds {
				segs := strings.Split(pattern, "/")
				for i, s := range segs {
					if strings.HasPrefix(s, ":") || strings.HasPrefix(s, "*") {
						segs[i] = ids[rnd.IntN(len(ids))]
					}
				}
				path := strings.Join(segs, "/")
				body := bodies[rnd.IntN(len(bodies))](ids[rnd.IntN(len(ids))])
				if method == http.MethodGet || method == http.MethodHead {
					body = ""
				}
				status, _, b := h.do(f.principals[kind], method, path, body, nil)
				sent++
				where := fmt.Sprintf("%s %s %s as %s", method, path, body, kind)
				if status >= 500 {
					t.Errorf("%s: status %d: %s", where, status, b)
					continue
				}
				if m := f.leaked(kind, b, path+body); m != "" {
					t.Errorf("%s: the answer holds the victim's %q: %s", where, m, b)
				}
				if strings.HasPrefix(path, "/api/") && (kind == anonymous || kind == revoked || kind == removed) && status != http.StatusUnauthorized {
					t.Errorf("%s: status %d, want 401: %s", where, status, b)
				}
			}
		}
	}
	t.Logf("%d requests on %d id-taking routes", sent, len(routesWithIDs))
	h.victimUntouched(t, f, upstreamBefore)
}
