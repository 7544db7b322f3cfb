// Package mcpadapter is the MCP tool surface: it serves every tool the router gives a
// principal (curated providers' operations, OpenAPI operations, remote MCP servers'
// tools, saved workflows and the hub's own) as MCP tools over Streamable HTTP. One URL
// per tenant (/mcp/{tenant}) lists exactly the tools the caller may use, and one per
// agent (/mcp/{tenant}/agents/{agent}) exactly the agent's; each is authenticated by a
// bearer API key or an OAuth access token. Every call runs through router.Execute. The
// transport beneath (request reading, session rules and rows, streams, resumption,
// the relay between nodes) is mcptransport's.
//
// Start from [New] and [Adapter.ServeHTTP]; a scope (scope.go) is one principal's
// server at one URL.
//
// Files, by what they hold:
//
//   - adapter.go: Options, New, ServeHTTP (auth, origin, admission), scopes' lifetime
//   - console.go: ServeConsole, an agent's URL served statelessly to a caller the REST
//     API authenticated (the builder UI's agent console)
//   - origin.go, cors.go, refusal.go: the door (DNS rebinding, browsers' CORS, refusals
//     read cheaply)
//   - sessions.go, modern.go, modern_refusals.go, relay.go: dispatch of a request by
//     protocol era, after mcptransport's session rules (what 2026-07-28 removed, the
//     tasks extension's negotiation); answers and cancellations from other nodes
//   - scope.go: a scope's tool list from the router's bindings (an agent's selection,
//     the run-tools setting, tool search mode, the tool budget) and its refresh
//   - tools.go, tool_defs.go, listed_profile.go, listed.go, pages.go: tools as listed
//     (connection argument, schema profile, pages) and a call turned into a router
//     request
//   - plain_calls.go, cancellation.go, call_requests.go, streams.go: the adapter's own
//     tools/call path, cancellation, requests to the client on a call's stream, key
//     rechecks of open requests
//   - extension.go, runs_tools.go, runs_tasks.go, runs_tasklinks.go, runs_task_status.go,
//     elicitation.go, request_state.go: the runs extension (confirmations in the client's form or by
//     approval page, MCP tasks as runs)
//   - runs_modern_tasks.go, task_nodes.go, runs_task_flow_inputs.go: the tasks extension
//     of 2026-07-28 (tasks the server creates as runs, tasks/get with the outcome inlined,
//     tasks/update, tasks/cancel; a task's input requests recorded with its run and
//     answered from any node; a workflow task's step questions as its input requests)
//   - flows.go: the flows extension (each flow instance as a resource its starter may
//     read and follow)
//   - search.go: tool search mode (search_tools, describe_tool, call_tool)
//   - connect.go: connecting from the conversation (a call that needs an account, a
//     reconnection or a scope gives its person a connect link in a URL-mode
//     elicitation, then runs)
//   - caller.go, input_requests.go, notify.go, session_levels.go, capabilities.go: what
//     a call asks of its client (progress, logging, a remote server's elicitation,
//     sampling and roots requests, a tool's or an extension prompt's own under keys it
//     names, on 2026-07-28 as the call's inputRequests) and what a session negotiated
//   - prompts.go, resources.go, remote_content.go, subscriptions.go, instructions.go:
//     prompts, resources (and subscriptions to them) and instructions, remote servers'
//     included
//   - tools_list_cache.go, telemetry.go, result.go, unavailable.go: the tools/list cache,
//     spans and metrics, tool errors, answers during an outage
package mcpadapter
