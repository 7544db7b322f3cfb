// Package e2e holds the end-to-end tests of the server's own life: it builds the real
// `switchboard serve` binary, starts it against fake GitHub and Slack upstreams,
// connects both providers through the REST API, and drives the tenant's MCP URL with
// the official TypeScript MCP client (e2e/client/run.mjs, @modelcontextprotocol/sdk);
// then crashes, drains, restarts and runs it as a fleet. It runs on SQLite, and on
// PostgreSQL too when SWITCHBOARD_TEST_DATABASE_URL is set.
//
// The end-to-end tests are three packages, so that none nears go test's default
// timeout: this one; e2e/browser, the builder UI in Chromium; and e2e/clients, the
// TypeScript client's suites, the MCP conformance suite and the README's Quick start.
// What they share (building and starting serve, the fakes, the REST client) is
// e2e/internal/rig.
//
// The client suite needs Node.js 20+ and npm; go test installs the npm packages itself.
// Without Node it skips with a message saying the suite did not run, except in CI
// (CI=true), where a missing Node fails the test.
//
// TestFleet runs three `serve` processes on PostgreSQL and a private redis-server
// (Debian's redis-server) behind a round-robin proxy; it needs
// SWITCHBOARD_TEST_DATABASE_URL and redis-server, and skips without them except in CI,
// where it fails.
//
// TestSurfaceMatrix is the surface matrix: one `serve` with a tool of every kind
// (curated, OpenAPI, remote MCP, workflow, the hub's own), each called through every
// surface (MCP tenant and agent URLs in every protocol version, REST calls and runs,
// switchboard_run_async, MCP tasks, a workflow step, Try it and the agent builder in
// Chromium, the audit log) by every kind of principal. Its subtests are its cells,
// named as sentences ("agent key / workflow tool / MCP agent URL 2025-06-18: listed");
// go test ./e2e -run 'TestSurfaceMatrix/agent_key' reports one principal's row. Its
// browser cells need Node.js and Chromium like e2e/browser's TestBrowser.
package e2e
