// Package clients holds the end-to-end tests that drive the real `switchboard serve`
// binary with the clients its users run: the official TypeScript MCP client (the scripts in e2e/client) on the MCP surface, paging, minimal answers, OAuth
// discovery and mcp-remote; the official MCP conformance suites 0.1.16 and 0.2 (e2e/conformance,
// against a build with the suite's fixture provider, internal/conformancefixture; the
// baselines list what does not pass, with the reason); the MCP clients of agent
// frameworks (e2e/frameworks: the OpenAI Agents SDK, Mastra, the Vercel AI SDK,
// LangChain) and the Go SDK's, whose results docs/guide/clients.md's table must match
// (TestFrameworkClients); and the README's Quick start and Commands, run as written (TestQuickStart, e2e/quickstart).
//
// They need Node.js 20+ and npm; go test installs the npm packages itself. Without
// Node a test skips with a message saying it did not run, except in CI (CI=true),
// where that fails it.
package clients
