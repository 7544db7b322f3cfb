// flowinput.mjs drives the purchase-approval flow of a live `switchboard serve`, whose
// step asks the run's person for approval_status and comments, with the official
// TypeScript MCP client (@modelcontextprotocol/sdk). go test ./e2e/clients
// (TestTypeScriptClientFlowInput) saves purchase_approval and quick_approval (the same,
// its question shown for 1 s) and connects Slack; this script prints one JSON summary
// line:
//   accept     run_flow__purchase_approval whose client's form accepts: its answer
//   asked      the messages the accepting client's form showed
//   decline    the same whose form declines: isError, status, text
//   timeout    run_flow__quick_approval whose person never answers: its answer
//   submitted  submit_flow_elicitation of that elicitation, then query_flow__ once completed
//   replay     run_flow_async__ from a client without forms, then replay_flow_pending_elicitation
//              from one that accepts: the replay's answer and the query once completed
//   error      what went wrong, if anything
//
// Environment:
//   MCP_URL, KEY   the tenant's MCP URL and API key

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const env = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`flowinput.mjs: environment variable ${name} is required`);
    process.exit(2);
  }
  return v;
};

const reqOpts = { timeout: 60000 };
const sessions = [];
const summary = { asked: [], error: "" };

// connect opens a session; answer, when given, is the person behind the client's
// form: it gets each request's params and returns the elicitation result (or a
// promise that never settles: nobody answers).
async function connect(name, answer) {
  const client = new Client({ name, version: "1.0.0" }, answer ? { capabilities: { elicitation: { form: {} } } } : {});
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => answer(req.params));
  }
  const transport = new StreamableHTTPClientTransport(new URL(env("MCP_URL")), {
    requestInit: { headers: { Authorization: `Bearer ${env("KEY")}` } },
  });
  await client.connect(transport, reqOpts);
  sessions.push({ client, transport });
  return client;
}

const call = async (client, name, args) => {
  const res = await client.callTool({ name, arguments: args }, undefined, reqOpts);
  return { isError: res.isError ?? false, structured: res.structuredContent ?? null, text: (res.content ?? []).map((c) => c.text ?? "").join("\n") };
};

// completed queries the instance until it is no longer working or waiting (30 s at most).
async function completed(client, tool, id) {
  for (let i = 0; i < 300; i++) {
    const q = await call(client, tool, { instance_id: id });
    const state = q.structured?.status?.state;
    if (state !== "working" && state !== "input_required") {
      return q;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${tool} ${id} did not end`);
}

const params = { item: "Laptop", amount: 899.5, justification: "Old one broke" };
try {
  const yes = await connect("approver", (p) => {
    summary.asked.push(p.message);
    return { action: "accept", content: { approval_status: "approved", comments: "Approved" } };
  });
  summary.accept = await call(yes, "run_flow__purchase_approval", params);

  const no = await connect("decliner", () => ({ action: "decline" }));
  summary.decline = await call(no, "run_flow__purchase_approval", params);

  const silent = await connect("silent", () => new Promise(() => {}));
  summary.timeout = await call(silent, "run_flow__quick_approval", params);
  const pending = summary.timeout.structured?.elicitations?.[0];
  const instance = summary.timeout.structured?.status?.instance_id;
  if (pending && instance) {
    const sub = await call(silent, "submit_flow_elicitation", {
      instance_id: instance,
      elicitation_id: pending.elicitation_id,
      response: { action: "accept", content: { approval_status: "rejected", comments: "Too dear" } },
    });
    summary.submitted = { submit: sub, query: await completed(silent, "query_flow__quick_approval", instance) };
  }

  const plain = await connect("plain");
  const started = await call(plain, "run_flow_async__purchase_approval", params);
  const id = started.structured?.instance_id;
  for (let i = 0; i < 300; i++) {
    const q = await call(plain, "query_flow__purchase_approval", { instance_id: id });
    if (q.structured?.status?.state !== "working") {
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const later = await connect("replayer", () => ({ action: "accept", content: { approval_status: "approved", comments: "Replayed" } }));
  const replay = await call(later, "replay_flow_pending_elicitation", { instance_id: id });
  summary.replay = { instance: id, replay, query: await completed(later, "query_flow__purchase_approval", id) };
} catch (err) {
  summary.error = String(err?.stack ?? err);
} finally {
  for (const s of sessions) {
    await s.transport.terminateSession().catch(() => {});
    await s.client.close().catch(() => {});
  }
}
console.log(JSON.stringify(summary));
process.exit(0);
