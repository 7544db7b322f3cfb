// surface.mjs drives a live `switchboard serve` with the official TypeScript MCP client
// (@modelcontextprotocol/sdk) to check what the MCP surface promises beyond tool calls:
// an agent URL lists only its own tools, live sessions get notifications/tools/list_changed
// when an agent is edited or a connection added (and only sessions of that tenant), and
// cancelling a call (notifications/cancelled) cancels the upstream request. go test ./e2e/clients
// (TestMCPSurface) starts the server, a fake GitHub whose GET issue blocks until
// cancelled, and this script; it prints one JSON summary line and exits 1 on a failure.
//
// Environment:
//   BASE_URL                 the server's base URL (REST API at BASE_URL/api)
//   ADMIN_KEY                tenant default's admin API key
//   TENANT_URL               tenant default's MCP URL
//   AGENT_URL, AGENT_KEY     an agent's MCP URL and key (its tools: github_create_issue)
//   AGENT_ID, CONNECTION_ID  the agent's ID and its GitHub connection
//   OTHER_URL, OTHER_KEY     tenant beta's MCP URL and key
//   NEW_TOKEN                a GitHub token the fake accepts, to add a connection
//   GH_OWNER, GH_REPO        the repository of the blocking issue read
//   GH_FAKE_URL              the fake GitHub, whose /_test/started counts the calls it holds

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const env = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`surface.mjs: environment variable ${name} is required`);
    process.exit(2);
  }
  return v;
};
const cfg = {
  base: env("BASE_URL"), adminKey: env("ADMIN_KEY"), tenantURL: env("TENANT_URL"),
  agentURL: env("AGENT_URL"), agentKey: env("AGENT_KEY"), agentID: env("AGENT_ID"), connectionID: env("CONNECTION_ID"),
  otherURL: env("OTHER_URL"), otherKey: env("OTHER_KEY"), newToken: env("NEW_TOKEN"),
  owner: env("GH_OWNER"), repo: env("GH_REPO"), ghFake: env("GH_FAKE_URL"),
};

const failures = [];
const summary = { ok: false, failures };
const fail = (msg) => { failures.push(msg); console.error("FAIL:", msg); };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function connect(url, key, name) {
  const client = new Client({ name, version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  return client;
}

// listChanged counts a client's tools/list_changed notifications.
function listChanged(client) {
  const seen = { count: 0 };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { seen.count++; });
  return seen;
}

async function waitFor(pred, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await pred()) return true;
    await sleep(25);
  }
  return pred();
}

async function api(method, path, body) {
  const res = await fetch(cfg.base + path, {
    method, headers: { Authorization: `Bearer ${cfg.adminKey}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const hubTools = (tools) => tools.map((t) => t.name).filter((n) => !n.startsWith("switchboard_")).sort();

try {
  const agent = await connect(cfg.agentURL, cfg.agentKey, "surface-agent");
  const tenant = await connect(cfg.tenantURL, cfg.adminKey, "surface-tenant");
  const other = await connect(cfg.otherURL, cfg.otherKey, "surface-other");

  // 1. The agent URL lists exactly the agent's tools (management tools aside).
  const agentTools = hubTools((await agent.listTools()).tools);
  summary.agent_tools = agentTools;
  if (JSON.stringify(agentTools) !== JSON.stringify(["github_create_issue"])) fail(`agent URL lists ${agentTools}`);
  const tenantTools = hubTools((await tenant.listTools()).tools);
  summary.tenant_tool_count = tenantTools.length;
  if (tenantTools.length <= 1 || !tenantTools.includes("github_get_issue")) fail(`tenant URL lists ${tenantTools}`);
  try {
    const r = await agent.callTool({ name: "github_get_issue", arguments: { owner: cfg.owner, repo: cfg.repo, issue_number: 1 } });
    fail(`the agent called a tool it does not have: ${JSON.stringify(r)}`);
  } catch (e) {
    summary.agent_unselected_call = String(e.message || e);
  }

  // 2. Editing the agent notifies the agent's session, not the other tenant's.
  const agentSeen = listChanged(agent);
  const tenantSeen = listChanged(tenant);
  const otherSeen = listChanged(other);
  await sleep(2000); // the GET streams that carry notifications open after initialize (slowly on a loaded machine)
  const cur = await api("GET", `/api/agents/${cfg.agentID}`);
  const put = await api("PUT", `/api/agents/${cfg.agentID}`, {
    name: cur.body.name, instructions: cur.body.instructions, version: cur.body.version,
    tools: [{ tool: "github_create_issue", connection_id: cfg.connectionID }, { tool: "github_get_issue", connection_id: cfg.connectionID }],
  });
  if (put.status !== 200) fail(`PUT agent: ${put.status} ${JSON.stringify(put.body)}`);
  if (!(await waitFor(() => agentSeen.count > 0, 30000))) fail("the agent's session got no tools/list_changed after the edit");
  const edited = hubTools((await agent.listTools()).tools);
  summary.agent_tools_after_edit = edited;
  if (JSON.stringify(edited) !== JSON.stringify(["github_create_issue", "github_get_issue"])) fail(`after the edit the agent lists ${edited}`);

  // 3. Adding a connection notifies the tenant's sessions, not the other tenant's.
  const before = tenantSeen.count;
  const conn = await api("POST", "/api/connections", { provider: "github", token: cfg.newToken, shared: true });
  if (conn.status !== 201) fail(`POST connection: ${conn.status} ${JSON.stringify(conn.body)}`);
  if (!(await waitFor(() => tenantSeen.count > before, 30000))) fail("the tenant's session got no tools/list_changed after a connection was added");
  const withTwo = (await tenant.listTools()).tools.find((t) => t.name === "github_get_issue");
  summary.connection_enum = withTwo?.inputSchema?.properties?.connection?.enum ?? null;
  if (!summary.connection_enum || summary.connection_enum.length !== 2) fail(`with two GitHub connections the tool takes no connection choice: ${JSON.stringify(withTwo?.inputSchema)}`);
  await sleep(500);
  summary.other_list_changed = otherSeen.count;
  if (otherSeen.count !== 0) fail(`tenant beta's session got ${otherSeen.count} tools/list_changed for tenant default's changes`);

  // 4. Cancelling a call cancels the upstream request (the fake blocks until then).
  const controller = new AbortController();
  const started = Date.now();
  const pending = agent.callTool(
    { name: "github_get_issue", arguments: { owner: cfg.owner, repo: cfg.repo, issue_number: 4242 } },
    undefined, { signal: controller.signal, timeout: 30000 },
  ).then(() => "resolved", (e) => `rejected: ${e.message || e}`);
  // Abort once the call is held at the fake GitHub (a fixed pause could end before it
  // got there on a loaded machine, and nothing would reach the upstream to cancel).
  const held = async () => (await (await fetch(cfg.ghFake + "/_test/started")).json()).started > 0;
  if (!(await waitFor(held, 30000))) fail("the call to abort never reached the fake GitHub");
  controller.abort("the user stopped it");
  summary.cancelled_call = await pending;
  summary.cancel_ms = Date.now() - started;
  if (!summary.cancelled_call.startsWith("rejected")) fail(`the aborted call ${summary.cancelled_call}`);

  // 5. The session still works after the cancellation.
  await agent.ping();
  for (const c of [agent, tenant, other]) await c.close();
} catch (e) {
  fail(`unexpected error: ${e.stack || e}`);
}
summary.ok = failures.length === 0;
console.log(JSON.stringify(summary));
process.exit(summary.ok ? 0 : 1);
