// run.mjs drives a live `switchboard serve` with the official TypeScript MCP client
// (@modelcontextprotocol/sdk) over Streamable HTTP. go test ./e2e starts the server, its
// fake upstreams and this script; the script prints one JSON summary line on stdout and
// exits 1 when any check failed (each failure is named in the summary and on stderr).
//
// Environment:
//   MCP_URL_A, KEY_A  tenant A's MCP URL and an API key of tenant A (GitHub and Slack connected)
//   MCP_URL_B, KEY_B  tenant B's MCP URL and an API key of tenant B (its own GitHub account only)
//   GH_LABEL_A        the label of tenant A's GitHub connection, which tenant B must not reach
//   GH_LOGIN_B        the login of tenant B's GitHub account
//   GH_OWNER, GH_REPO the repository the GitHub call targets
//   SLACK_CHANNEL     the channel the Slack call posts to
//   TIMEOUT_MS        per-request timeout (default 30000)

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const env = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`run.mjs: environment variable ${name} is required`);
    process.exit(2);
  }
  return v;
};

const cfg = {
  urlA: env("MCP_URL_A"),
  keyA: env("KEY_A"),
  urlB: env("MCP_URL_B"),
  keyB: env("KEY_B"),
  labelA: env("GH_LABEL_A"),
  loginB: env("GH_LOGIN_B"),
  owner: env("GH_OWNER"),
  repo: env("GH_REPO"),
  channel: env("SLACK_CHANNEL"),
  timeout: Number(process.env.TIMEOUT_MS || 30000),
};

// The tools a tenant with one GitHub and one Slack connection must see.
const expectedTools = [
  "github_add_issue_comment",
  "github_create_issue",
  "github_create_pull_request",
  "github_get_file_contents",
  "github_get_issue",
  "github_get_pull_request",
  "github_list_issues",
  "github_list_pull_requests",
  "github_search_repositories",
  "github_update_issue",
  "slack_add_reaction",
  "slack_get_channel_history",
  "slack_get_thread_replies",
  "slack_get_user_profile",
  "slack_get_users",
  "slack_list_channels",
  "slack_post_message",
  "slack_reply_to_thread",
];

// Annotations the operations declare; a sample of writes and reads of both providers.
const expectedAnnotations = {
  github_create_issue: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  github_update_issue: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  github_get_issue: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  slack_post_message: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  slack_list_channels: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
};

const failures = [];
const summary = {};

function check(ok, message) {
  if (!ok) {
    failures.push(message);
    console.error(`FAIL: ${message}`);
  }
  return ok;
}

function connectTo(url, key, options) {
  const client = new Client({ name: "switchboard-e2e", version: "1.0.0" }, options);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  return { client, transport };
}

function errorInfo(err) {
  return {
    name: err?.constructor?.name ?? typeof err,
    code: err?.code ?? null,
    message: String(err?.message ?? err),
  };
}

function textOf(result) {
  return (result?.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

const reqOpts = { timeout: cfg.timeout };

async function tenantA() {
  const { client, transport } = connectTo(cfg.urlA, cfg.keyA);
  await client.connect(transport, reqOpts);
  try {
    const { tools } = await client.listTools(undefined, reqOpts);
    const names = tools.map((t) => t.name).sort();
    summary.tools_a = names;
    for (const want of expectedTools) {
      check(names.includes(want), `tenant A's tools/list lacks ${want} (got ${names.join(", ")})`);
    }
    for (const t of tools) {
      check(/^[a-zA-Z0-9_-]{1,64}$/.test(t.name), `tool name ${JSON.stringify(t.name)} does not match ^[a-zA-Z0-9_-]{1,64}$`);
      check(t.inputSchema?.type === "object", `${t.name}: inputSchema.type is ${t.inputSchema?.type}, want object`);
      check(t.outputSchema?.type === "object", `${t.name}: outputSchema.type is ${t.outputSchema?.type}, want object`);
      check(typeof t.description === "string" && t.description.length > 0, `${t.name}: no description`);
      for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]) {
        check(typeof t.annotations?.[hint] === "boolean", `${t.name}: annotations.${hint} is not set`);
      }
    }
    for (const [name, want] of Object.entries(expectedAnnotations)) {
      const t = tools.find((x) => x.name === name);
      if (!t) continue; // already reported as missing
      for (const [hint, v] of Object.entries(want)) {
        check(t.annotations?.[hint] === v, `${name}: annotations.${hint} is ${t.annotations?.[hint]}, want ${v}`);
      }
    }
    const create = tools.find((t) => t.name === "github_create_issue");
    if (create) {
      summary.create_issue_required = [...(create.inputSchema.required ?? [])].sort();
      for (const f of ["owner", "repo", "title"]) {
        check(create.inputSchema.required?.includes(f), `github_create_issue: inputSchema does not require ${f}`);
      }
    }

    // One GitHub call. The SDK also validates structuredContent against the tool's
    // outputSchema (it throws when they disagree).
    const title = "Crash when the config file is empty";
    const body = "Steps: start with an empty switchboard.yaml.";
    const gh = await client.callTool(
      { name: "github_create_issue", arguments: { owner: cfg.owner, repo: cfg.repo, title, body } },
      undefined,
      reqOpts,
    );
    summary.github_create_issue = { isError: gh.isError ?? false, structuredContent: gh.structuredContent ?? null };
    if (check(!gh.isError, `github_create_issue returned isError: ${textOf(gh)}`)) {
      const sc = gh.structuredContent ?? {};
      check(Number.isInteger(sc.number) && sc.number > 0, `github_create_issue: number is ${sc.number}`);
      check(sc.title === title, `github_create_issue: title is ${JSON.stringify(sc.title)}, want ${JSON.stringify(title)}`);
      check(sc.body === body, `github_create_issue: body is ${JSON.stringify(sc.body)}`);
      check(sc.state === "open", `github_create_issue: state is ${sc.state}, want open`);
      check(
        typeof sc.html_url === "string" && sc.html_url.endsWith(`/${cfg.owner}/${cfg.repo}/issues/${sc.number}`),
        `github_create_issue: html_url is ${sc.html_url}`,
      );
      check(JSON.stringify(JSON.parse(textOf(gh))) === JSON.stringify(sc), "github_create_issue: text content is not the structured content");
    }

    // One Slack call.
    const text = "Deploy finished :rocket:";
    const sl = await client.callTool(
      { name: "slack_post_message", arguments: { channel: cfg.channel, text } },
      undefined,
      reqOpts,
    );
    summary.slack_post_message = { isError: sl.isError ?? false, structuredContent: sl.structuredContent ?? null };
    if (check(!sl.isError, `slack_post_message returned isError: ${textOf(sl)}`)) {
      const sc = sl.structuredContent ?? {};
      check(sc.channel === cfg.channel, `slack_post_message: channel is ${sc.channel}, want ${cfg.channel}`);
      check(/^[0-9]+\.[0-9]+$/.test(sc.ts ?? ""), `slack_post_message: ts is ${sc.ts}`);
      check(sc.text === text, `slack_post_message: text is ${JSON.stringify(sc.text)}, want ${JSON.stringify(text)}`);
    }

    // A bad argument: a tool error naming the field, and nothing sent upstream (the Go
    // test counts the fake's requests).
    const bad = await client.callTool(
      { name: "github_create_issue", arguments: { owner: cfg.owner, repo: cfg.repo, title: 42 } },
      undefined,
      reqOpts,
    );
    summary.bad_argument = { isError: bad.isError ?? false, text: textOf(bad) };
    check(bad.isError === true, `github_create_issue with title 42: isError is ${bad.isError}, want true`);
    check(textOf(bad).includes("title"), `github_create_issue with title 42: message does not name the field title: ${textOf(bad)}`);

    const missing = await client.callTool(
      { name: "slack_post_message", arguments: { channel: cfg.channel } },
      undefined,
      reqOpts,
    );
    summary.missing_argument = { isError: missing.isError ?? false, text: textOf(missing) };
    check(missing.isError === true, `slack_post_message without text: isError is ${missing.isError}, want true`);
    check(textOf(missing).includes("text"), `slack_post_message without text: message does not name the field text: ${textOf(missing)}`);
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
}

// connectRefused expects connecting with key to url to fail with HTTP 403.
async function connectRefused(label, url, key) {
  const { client, transport } = connectTo(url, key);
  try {
    await client.connect(transport, reqOpts);
    summary[label] = { connected: true };
    check(false, `${label}: connecting succeeded, want HTTP 403`);
    await client.close();
  } catch (err) {
    const info = errorInfo(err);
    summary[label] = { connected: false, code: info.code, message: info.message };
    check(info.code === 403, `${label}: connect failed with ${info.name} code ${info.code} (${info.message}), want HTTP 403`);
  }
}

// tenantB checks tenant B's own view: its GitHub account's tools and no Slack ones
// (tenant A's), a call that runs as its own account (the Go test checks the token the
// fake received), and a call naming tenant A's GitHub account refused.
async function tenantB() {
  const { client, transport } = connectTo(cfg.urlB, cfg.keyB);
  await client.connect(transport, reqOpts);
  try {
    const { tools } = await client.listTools(undefined, reqOpts);
    const names = tools.map((t) => t.name).sort();
    summary.tools_b = names;
    const wantGitHub = expectedTools.filter((n) => n.startsWith("github_"));
    for (const want of wantGitHub) {
      check(names.includes(want), `tenant B's tools/list lacks ${want} (got ${names.join(", ")})`);
    }
    check(
      !names.some((n) => !n.startsWith("github_") && !n.startsWith("switchboard_") && !n.endsWith("_workflow") && n !== "list_workflows" && n !== "cancel_flow" && n !== "list_flows" && !n.endsWith("_elicitation")),
      `tenant B lists tools of providers it has not connected: ${names.join(", ")}`,
    );

    const title = "Filed from tenant beta";
    const own = await client.callTool(
      { name: "github_create_issue", arguments: { owner: cfg.owner, repo: cfg.repo, title } },
      undefined,
      reqOpts,
    );
    summary.tenant_b_create_issue = { isError: own.isError ?? false, structuredContent: own.structuredContent ?? null };
    if (check(!own.isError, `tenant B's github_create_issue returned isError: ${textOf(own)}`)) {
      const sc = own.structuredContent ?? {};
      check(sc.user === cfg.loginB, `tenant B's github_create_issue: opened by ${sc.user}, want ${cfg.loginB}`);
      check(sc.title === title, `tenant B's github_create_issue: title is ${JSON.stringify(sc.title)}`);
    }

    // Naming tenant A's account must not reach it.
    try {
      const res = await client.callTool(
        {
          name: "github_create_issue",
          arguments: { owner: cfg.owner, repo: cfg.repo, title: "Filed through tenant A's account", connection: cfg.labelA },
        },
        undefined,
        reqOpts,
      );
      // A tool result is acceptable only as a refusal.
      summary.tenant_b_foreign_connection = { refused: res.isError === true, how: "tool_error", message: textOf(res) };
      check(res.isError === true, `tenant B's github_create_issue with connection ${cfg.labelA} succeeded: ${JSON.stringify(res)}`);
    } catch (err) {
      const info = errorInfo(err);
      summary.tenant_b_foreign_connection = { refused: true, how: "jsonrpc_error", code: info.code, message: info.message };
    }
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
}

// The management tools every MCP URL has, for asynchronous runs and confirmations.
const runTools = [
  "switchboard_cancel_run",
  "switchboard_get_run",
  "switchboard_list_runs",
  "switchboard_run_async",
  "switchboard_submit_elicitation",
];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// waitRun polls switchboard_get_run until the run ends (or 20 s pass) and returns it.
async function waitRun(client, runId) {
  const deadline = Date.now() + 20000;
  for (;;) {
    const res = await client.callTool({ name: "switchboard_get_run", arguments: { run_id: runId } }, undefined, reqOpts);
    const run = res.structuredContent ?? {};
    if (res.isError || ["completed", "failed", "canceled"].includes(run.state) || Date.now() > deadline) {
      return { isError: res.isError ?? false, text: textOf(res), run };
    }
    await sleep(50);
  }
}

const issueArgs = () => ({ owner: cfg.owner, repo: cfg.repo, issue_number: 1347 });

// runsFlow: tenant A (confirm policy "destructive") starts a run and reads its output
// by tool and by resource; a destructive call from a client that cannot elicit waits
// as an input_required run until switchboard_submit_elicitation; a client that can
// elicit is asked first, and its decline runs nothing while its accept runs the call.
// Tenant B cannot reach A's run by tool or resource.
async function runsFlow() {
  const { client, transport } = connectTo(cfg.urlA, cfg.keyA);
  await client.connect(transport, reqOpts);
  const asked = [];
  let answer = "decline";
  const elicit = connectTo(cfg.urlA, cfg.keyA, { capabilities: { elicitation: {} } });
  elicit.client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params.message);
    return answer === "accept" ? { action: "accept", content: { confirm: true } } : { action: answer };
  });
  await elicit.client.connect(elicit.transport, reqOpts);
  const b = connectTo(cfg.urlB, cfg.keyB);
  await b.client.connect(b.transport, reqOpts);
  try {
    const { tools } = await client.listTools(undefined, reqOpts);
    for (const name of runTools) {
      check(tools.some((t) => t.name === name), `tools/list lacks ${name}`);
    }

    // An async run from start to output.
    const started = await client.callTool({ name: "switchboard_run_async", arguments: { tool: "github_get_issue", arguments: issueArgs() } }, undefined, reqOpts);
    const runId = started.structuredContent?.run_id;
    summary.async_run_id = runId ?? null;
    if (!check(!started.isError && typeof runId === "string" && runId.startsWith("run_"), `switchboard_run_async: ${textOf(started)}`)) {
      return;
    }
    check(["working", "completed"].includes(started.structuredContent.state), `switchboard_run_async: state ${started.structuredContent.state}`);
    const done = await waitRun(client, runId);
    summary.async_run = { state: done.run.state ?? null, output: done.run.output ?? null, started_at: done.run.started_at ?? null, finished_at: done.run.finished_at ?? null };
    check(done.run.state === "completed", `async run ended ${done.run.state}: ${done.text}`);
    const resource = await client.readResource({ uri: `switchboard://runs/${runId}` }, reqOpts);
    const fromResource = JSON.parse(resource.contents?.[0]?.text ?? "{}");
    summary.async_run_resource = { state: fromResource.state ?? null, output_number: fromResource.output?.number ?? null };
    const listed = await client.callTool({ name: "switchboard_list_runs", arguments: {} }, undefined, reqOpts);
    check((listed.structuredContent?.runs ?? []).some((r) => r.run_id === runId), `switchboard_list_runs lacks ${runId}`);

    // An MCP task (a task-augmented tools/call) through the SDK's tasks API: created,
    // then its result is the tool's output.
    const task = { created: false, statuses: [], result: null, error: null };
    for await (const msg of client.experimental.tasks.callToolStream({ name: "github_get_issue", arguments: issueArgs() }, undefined, reqOpts)) {
      if (msg.type === "taskCreated") task.created = true;
      else if (msg.type === "taskStatus") task.statuses.push(msg.task.status);
      else if (msg.type === "result") task.result = { isError: msg.result.isError ?? false, number: msg.result.structuredContent?.number ?? null, text: textOf(msg.result) };
      else if (msg.type === "error") task.error = errorInfo(msg.error).message;
    }
    summary.task = task;

    // A destructive call from a client that cannot elicit: an input_required run.
    const pending = await client.callTool({ name: "github_update_issue", arguments: { ...issueArgs(), state: "closed" } }, undefined, reqOpts);
    const pendingId = pending._meta?.["switchboard/run_id"];
    summary.fallback = { isError: pending.isError ?? false, state: pending._meta?.["switchboard/state"] ?? null, text: textOf(pending) };
    if (check(typeof pendingId === "string", `github_update_issue without elicitation gave no run id: ${textOf(pending)}`)) {
      const submitted = await client.callTool({ name: "switchboard_submit_elicitation", arguments: { run_id: pendingId, response: { action: "accept" } } }, undefined, reqOpts);
      check(!submitted.isError, `switchboard_submit_elicitation: ${textOf(submitted)}`);
      const after = await waitRun(client, pendingId);
      summary.fallback.after_accept = { state: after.run.state ?? null, output_state: after.run.output?.state ?? null };
    }

    // A client that can elicit is asked first.
    const declined = await elicit.client.callTool({ name: "github_update_issue", arguments: { ...issueArgs(), state: "closed" } }, undefined, reqOpts);
    summary.elicit_decline = { isError: declined.isError ?? false, text: textOf(declined) };
    answer = "accept";
    const accepted = await elicit.client.callTool({ name: "github_update_issue", arguments: { ...issueArgs(), state: "closed" } }, undefined, reqOpts);
    summary.elicit_accept = { isError: accepted.isError ?? false, structuredContent: accepted.structuredContent ?? null };
    summary.elicit_asked = asked;

    // Tenant B and A's run.
    const foreign = {};
    for (const name of ["switchboard_get_run", "switchboard_cancel_run"]) {
      const res = await b.client.callTool({ name, arguments: { run_id: runId } }, undefined, reqOpts);
      foreign[name] = { isError: res.isError ?? false, text: textOf(res) };
    }
    const sub = await b.client.callTool({ name: "switchboard_submit_elicitation", arguments: { run_id: runId, response: { action: "accept" } } }, undefined, reqOpts);
    foreign.switchboard_submit_elicitation = { isError: sub.isError ?? false, text: textOf(sub) };
    const bList = await b.client.callTool({ name: "switchboard_list_runs", arguments: {} }, undefined, reqOpts);
    foreign.list_count = (bList.structuredContent?.runs ?? []).length;
    try {
      await b.client.readResource({ uri: `switchboard://runs/${runId}` }, reqOpts);
      foreign.resource = { refused: false };
    } catch (err) {
      foreign.resource = { refused: true, ...errorInfo(err) };
    }
    summary.tenant_b_on_a_run = foreign;
  } finally {
    for (const c of [{ client, transport }, elicit, b]) {
      await c.transport.terminateSession().catch(() => {});
      await c.client.close();
    }
  }
}

async function main() {
  const steps = [
    ["tenant_a", tenantA],
    ["b_key_on_a_url", () => connectRefused("b_key_on_a_url", cfg.urlA, cfg.keyB)],
    ["a_key_on_b_url", () => connectRefused("a_key_on_b_url", cfg.urlB, cfg.keyA)],
    ["tenant_b", tenantB],
    ["runs", runsFlow],
  ];
  for (const [name, step] of steps) {
    try {
      await step();
    } catch (err) {
      const info = errorInfo(err);
      check(false, `${name}: ${info.name}${info.code !== null ? ` (code ${info.code})` : ""}: ${info.message}`);
    }
  }
  summary.ok = failures.length === 0;
  summary.failures = failures;
  process.stdout.write(JSON.stringify(summary) + "\n");
  process.exit(summary.ok ? 0 : 1);
}

await main();
