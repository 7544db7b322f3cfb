// Package securitytest holds the hub's standing security suite: its tests build the
// hub in process as `switchboard serve` wires it (the REST API and the MCP URLs on one
// gin engine), seed a victim tenant, and run every REST route the engine registers and
// every MCP method with every kind of foreign principal (another tenant's owner,
// another user, an agent's key, a revoked key, a removed user's key, no key) and the
// victim's ids, expecting a refusal, never a 5xx and never the victim's data. The key
// of the victim's own agent is run on every route too: it gets its tools, runs and
// selected workflows, and a 403 everywhere else, never its creator's powers. A route
// added to the engine without an entry in the suite's tables fails it.
package securitytest
