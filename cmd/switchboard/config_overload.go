package main

import (
	"strconv"
	"strings"
	"time"
)

// overloadConfig bounds the work a node takes on and how long it waits: admission
// control, upstream deadlines and the shutdown drain.
type overloadConfig struct {
	// MaxInFlight is how many tool calls the node works on at once (0: four per CPU).
	MaxInFlight int
	// MaxAdmitted bounds the tool calls under way at once, counting those waiting for
	// their upstream's answer (for up to a second) or their audit commit (0: limits'
	// default, 32 × MaxInFlight).
	MaxAdmitted int
	// UpstreamAdmitted bounds the tool calls waiting for one upstream's answer at once
	// (0: limits' default, MaxAdmitted).
	UpstreamAdmitted int
	// TenantAdmitted is a tenant's part of those calls while other tenants are active
	// and calls wait for places (0: limits' default, 4 × MaxInFlight).
	TenantAdmitted int
	// AdmissionWait is the longest a call waits for a place before it is refused
	// (0: limits' default, 2 s).
	AdmissionWait time.Duration
	// UpstreamSlow is how long a call waits for its upstream's answer before it
	// counts as waiting for a slow upstream (0: limits' default, 1 s or half
	// AdmissionWait).
	UpstreamSlow time.Duration
	// UpstreamReadTimeout and UpstreamWriteTimeout, when set, override every
	// provider's deadline for read-only and for other operations.
	UpstreamReadTimeout  time.Duration
	UpstreamWriteTimeout time.Duration
	// DrainTimeout is how long shutdown lets in-flight calls finish (0: the default).
	DrainTimeout time.Duration
	// DrainLead is how long, from SIGTERM, /readyz answers 503 while calls are still
	// accepted, so a balancer stops sending the node requests before it refuses any (0:
	// the default); NoDrainLead skips it (SWITCHBOARD_DRAIN_LEAD=0s).
	DrainLead   time.Duration
	NoDrainLead bool
}

// lead is how long, from SIGTERM, /readyz answers 503 while calls are still accepted.
func (c overloadConfig) lead() time.Duration {
	switch {
	case c.NoDrainLead:
		return 0
	case c.DrainLead > 0:
		return c.DrainLead
	}
	return defaultDrainLead
}

// defaultDrainLead is the default DrainLead: longer than the shipped HAProxy takes to
// see a node leave (deploy/haproxy/haproxy.cfg checks every 2 s and needs 2 failures: at
// most 4 s and the checks' own time).
const defaultDrainLead = 6 * time.Second

// defaultDrainTimeout is how long shutdown lets in-flight calls finish by default.
const defaultDrainTimeout = 30 * time.Second

// drain is how long shutdown lets in-flight calls finish.
func (c overloadConfig) drain() time.Duration {
	if c.DrainTimeout > 0 {
		return c.DrainTimeout
	}
	return defaultDrainTimeout
}

// overloadVars documents the variables overloadConfig reads.
func overloadVars() []envVar {
	return []envVar{
		{"SWITCHBOARD_MAX_INFLIGHT", "", "tool calls this node works on at once (a call waiting for its upstream does not count); more wait their turn, tenants served in turn, and are refused with Retry-After when the wait grows too long"},
		{"SWITCHBOARD_MAX_ADMITTED", "", "tool calls under way at once, counting those waiting for their upstream's answer or their audit commit; more wait their turn at the door. A call that has waited longer than SWITCHBOARD_UPSTREAM_SLOW for its upstream no longer counts (SWITCHBOARD_UPSTREAM_MAX_ADMITTED bounds those), so a slow upstream keeps the door that long at most. A node serves at most this many calls per upstream round trip while its upstreams answer within a second"},
		{"SWITCHBOARD_UPSTREAM_MAX_ADMITTED", "", "tool calls waiting for one upstream's answer at once (an upstream is a host: api.github.com, slack.com, a remote MCP server's); one more waits up to SWITCHBOARD_ADMISSION_WAIT for one of them to come back, and is refused before it sends anything (unavailable, Retry-After) when it would wait longer, when as many wait already, or at once while the upstream has left a call unanswered for longer than SWITCHBOARD_UPSTREAM_SLOW. So a slow upstream holds this many calls and no more, and calls to other upstreams go on. Each such call holds an upstream connection (the providers keep 256 idle per host)"},
		{"SWITCHBOARD_UPSTREAM_SLOW", "", "how long a tool call waits for its upstream's answer before the upstream counts as slow: the call then leaves SWITCHBOARD_MAX_ADMITTED, so the calls waiting at the door come in, and while the upstream has such a call, one beyond SWITCHBOARD_UPSTREAM_MAX_ADMITTED is refused at once. Raise it for upstreams whose calls routinely take longer (a remote MCP server's long tools), lower it to let the door open sooner when an upstream degrades"},
		{"SWITCHBOARD_TENANT_MAX_ADMITTED", "", "a tenant's part of the tool calls in the node (under way, except those waiting for an upstream's answer for less than SWITCHBOARD_UPSTREAM_SLOW, which cost the node nothing until they come back) while other tenants are active (called within the last second) and calls wait for places: a new call of a tenant over its part, with more calls in the node than every other active tenant, is refused at once (rate_limited, Retry-After) so that one tenant's flood does not slow the others'. Alone, or beside tenants as busy, a tenant may use all of SWITCHBOARD_MAX_ADMITTED; set it as high or higher to turn the part off"},
		{"SWITCHBOARD_ADMISSION_WAIT", "", "the longest a tool call waits for a place before it is refused (unavailable, Retry-After)"},
		{"SWITCHBOARD_UPSTREAM_READ_TIMEOUT", "", "deadline of a read-only tool call's upstream work, for every provider"},
		{"SWITCHBOARD_UPSTREAM_WRITE_TIMEOUT", "", "deadline of any other tool call's upstream work, for every provider"},
		{"SWITCHBOARD_DRAIN_LEAD", defaultDrainLead.String(), "on SIGTERM, how long /readyz answers 503 while calls are still accepted, before the node refuses new calls and drains: longer than the load balancer takes to stop sending it requests (the shipped HAProxy's checks: 2 s × 2 failures). 0s skips it"},
		{"SWITCHBOARD_DRAIN_TIMEOUT", defaultDrainTimeout.String(), "on SIGTERM, after SWITCHBOARD_DRAIN_LEAD, how long in-flight calls may finish while new ones are refused with Retry-After"},
	}
}

// loadOverloadConfig reads overloadConfig; an error names the variable at fault.
func loadOverloadConfig(get func(name string) string) (overloadConfig, error) {
	var c overloadConfig
	counts := []struct {
		name, example string
		into          *int
	}{
		{"SWITCHBOARD_MAX_INFLIGHT", "64", &c.MaxInFlight},
		{"SWITCHBOARD_MAX_ADMITTED", "1024", &c.MaxAdmitted},
		{"SWITCHBOARD_UPSTREAM_MAX_ADMITTED", "1024", &c.UpstreamAdmitted},
		{"SWITCHBOARD_TENANT_MAX_ADMITTED", "32", &c.TenantAdmitted},
	}
	for _, n := range counts {
		v := get(n.name)
		if v == "" {
			continue
		}
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || i < 1 || i > 1_000_000 {
			return c, &configError{n.name, "must be a whole number from 1 to 1000000, such as " + n.example}
		}
		*n.into = i
	}
	durations := []struct {
		name string
		min  time.Duration
		into *time.Duration
	}{
		{"SWITCHBOARD_ADMISSION_WAIT", time.Millisecond, &c.AdmissionWait},
		{"SWITCHBOARD_UPSTREAM_SLOW", time.Millisecond, &c.UpstreamSlow},
		{"SWITCHBOARD_UPSTREAM_READ_TIMEOUT", time.Millisecond, &c.UpstreamReadTimeout},
		{"SWITCHBOARD_UPSTREAM_WRITE_TIMEOUT", time.Millisecond, &c.UpstreamWriteTimeout},
		{"SWITCHBOARD_DRAIN_TIMEOUT", time.Millisecond, &c.DrainTimeout},
		{"SWITCHBOARD_DRAIN_LEAD", 0, &c.DrainLead},
	}
	for _, d := range durations {
		v := get(d.name)
		if v == "" {
			continue
		}
		t, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || t < d.min {
			return c, &configError{d.name, "must be a duration such as 500ms, 30s or 2m"}
		}
		*d.into = t
	}
	c.NoDrainLead = get("SWITCHBOARD_DRAIN_LEAD") != "" && c.DrainLead == 0
	return c, nil
}
