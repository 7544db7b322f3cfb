// Package rig is what the end-to-end test packages share: it builds and starts the real
// `switchboard serve` binary, fakes its GitHub, Slack and remote MCP upstreams, calls
// its REST API, runs a test on each database, and checks that Node.js and Chromium are
// there for the suites that drive the official TypeScript MCP client and the browser.
//
// Start from [BuildServer] and [StartServer], which give a [Server], and [APIClient].
package rig
