// Package browser holds the end-to-end tests that drive the builder UI of the real
// `switchboard serve` binary in Chromium (playwright-core, the .mjs scripts beside
// this file): TestBrowser walks sign-in, connections, Try it, agents and workflows;
// TestBrowserPages opens every page at a desktop and a phone width; TestBrowserCORS
// connects a browser MCP client from a page of another origin through the OAuth flow.
//
// They need Node.js 20+, npm and Debian's Chromium (/usr/bin/chromium); go test
// installs the npm packages itself. Without them a test skips with a message saying
// it did not run, except in CI (CI=true), where that fails it.
package browser
