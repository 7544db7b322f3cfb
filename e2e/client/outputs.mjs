// outputs.mjs calls tools of a live `switchboard serve` with the official TypeScript MCP
// client (@modelcontextprotocol/sdk), which validates every result's structuredContent
// against the tool's outputSchema from tools/list and throws (-32602) when it does not
// match. go test ./e2e/clients (TestTypeScriptClientAcceptsMinimalAnswers) starts the server
// with fake upstreams that give the least answers their API descriptions allow; this
// script prints one JSON summary line: per call, whether the client accepted it.
//
// Environment:
//   MCP_URL, KEY   the tenant's MCP URL and API key
//   CALLS          a JSON array of {"name": tool, "arguments": {...}}

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const env = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`outputs.mjs: environment variable ${name} is required`);
    process.exit(2);
  }
  return v;
};

const reqOpts = { timeout: 30000 };
const client = new Client({ name: "outputs", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(env("MCP_URL")), {
  requestInit: { headers: { Authorization: `Bearer ${env("KEY")}` } },
});
const summary = { calls: {} };
try {
  await client.connect(transport, reqOpts);
  const { tools } = await client.listTools(undefined, reqOpts);
  summary.with_output_schema = tools.filter((t) => t.outputSchema).map((t) => t.name);
  for (const call of JSON.parse(env("CALLS"))) {
    try {
      const res = await client.callTool(call, undefined, reqOpts);
      summary.calls[call.name] = {
        accepted: true,
        isError: res.isError ?? false,
        structured: res.structuredContent !== undefined && res.structuredContent !== null,
        text: res.isError ? (res.content ?? []).map((c) => c.text).join(" ") : "",
      };
    } catch (err) {
      summary.calls[call.name] = { accepted: false, code: err?.code ?? null, message: String(err?.message ?? err) };
    }
  }
} finally {
  await transport.terminateSession().catch(() => {});
  await client.close();
}
console.log(JSON.stringify(summary));
