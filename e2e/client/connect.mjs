// connect.mjs calls gmail_send_message of a live `switchboard serve` with the official
// TypeScript MCP client (@modelcontextprotocol/sdk) on protocol 2025-11-25, declaring
// URL-mode elicitation. go test ./e2e/clients (TestTypeScriptClientConnect) gives the
// tenant Gmail with nothing connected. When the hub asks the person to connect, the
// script prints {"url": …} and waits for a line on stdin (the person connected), then
// accepts. It prints one JSON summary line last:
//   asked      the URL-mode elicitations shown: mode, elicitationId, url, message
//   completed  the elicitation ids notifications/elicitation/complete named
//   result     the call's answer: isError, text
//   error      what went wrong, if anything
//
// Environment:
//   MCP_URL, KEY   the tenant's MCP URL and API key

import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ElicitationCompleteNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const env = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`connect.mjs: environment variable ${name} is required`);
    process.exit(2);
  }
  return v;
};

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const summary = { asked: [], completed: [], result: null, error: "" };
const client = new Client({ name: "connect", version: "1.0.0" }, { capabilities: { elicitation: { url: {} } } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  const p = req.params;
  summary.asked.push({ mode: p.mode, elicitationId: p.elicitationId, url: p.url, message: p.message });
  if (p.mode !== "url") return { action: "decline" };
  console.log(JSON.stringify({ url: p.url }));
  await lines.next(); // the person connected the account
  return { action: "accept" };
});
client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => {
  summary.completed.push(n.params.elicitationId);
});
const transport = new StreamableHTTPClientTransport(new URL(env("MCP_URL")), {
  requestInit: { headers: { Authorization: `Bearer ${env("KEY")}` } },
});
try {
  await client.connect(transport, { timeout: 60000 });
  const res = await client.callTool({ name: "gmail_send_message", arguments: { userId: "me", body: { raw: "SGVsbG8gZnJvbSBUeXBlU2NyaXB0" } } }, undefined, { timeout: 120000 });
  summary.result = { isError: res.isError ?? false, text: (res.content ?? []).map((c) => c.text ?? "").join("\n") };
} catch (err) {
  summary.error = String(err && err.stack ? err.stack : err);
} finally {
  await transport.close().catch(() => {});
}
console.log(JSON.stringify(summary));
process.exit(0);
