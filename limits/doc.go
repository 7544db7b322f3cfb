// Package limits holds the throttles and bounds of the hub.
//
// Those that protect the hub itself live in each process's memory: how many bytes of
// request bodies it holds at once, per client address and per kind of route that reads
// them before any credential is checked (BodyBudget), how long such a body may take to
// arrive (BodyDeadline), sign-in attempts per account and per
// client address (SignIns), API keys that are not found (KeyMisses), and the client
// address those are keyed on (Sources). With several nodes an attacker's budget is
// multiplied by their number (each node throttles on its own); the bounds stay finite,
// and nothing is shared state that another node needs to be correct.
//
// Those that protect an upstream, or share it fairly, must hold for the whole fleet:
// each connection's token bucket and the windows its upstream announced (Upstream), and
// each tenant's bound on executing runs (Slots). Local keeps them in one process, for a
// deployment of one node; Redis shares them between every node through atomic scripts,
// and falls back to each node's share of a limit while Redis cannot be reached.
//
// Start from [Admission] (bounds per node, tenant and upstream), [Local] and [Redis]
// (rates kept in process or shared), [BodyBudget] and [KeyMisses].
package limits
