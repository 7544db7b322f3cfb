// pages.mjs lists the tools of a live `switchboard serve` with the official TypeScript
// MCP client (@modelcontextprotocol/sdk), following nextCursor from page to page as a
// client must when the list is longer than a page. go test ./e2e/clients (TestTypeScriptClientPages)
// starts the server with a small page size; this script prints one JSON summary line:
// each page's tool names.
//
// Environment:
//   MCP_URL, KEY   the tenant's MCP URL and API key

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const env = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`pages.mjs: environment variable ${name} is required`);
    process.exit(2);
  }
  return v;
};

const reqOpts = { timeout: 30000 };
const client = new Client({ name: "pages", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(env("MCP_URL")), {
  requestInit: { headers: { Authorization: `Bearer ${env("KEY")}` } },
});
const summary = { pages: [], error: "" };
try {
  await client.connect(transport, reqOpts);
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, reqOpts);
    summary.pages.push(page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor && summary.pages.length < 1000);
} catch (err) {
  summary.error = String(err?.stack ?? err);
} finally {
  await transport.terminateSession().catch(() => {});
  await client.close();
}
console.log(JSON.stringify(summary));
