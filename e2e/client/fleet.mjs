// fleet.mjs is a command server around the official TypeScript MCP client
// (@modelcontextprotocol/sdk), for go test ./e2e's fleet test: the test runs several
// `switchboard serve` nodes and a round-robin proxy, and drives MCP sessions through
// this script while it changes things through the nodes' REST APIs and kills nodes.
//
// It reads one JSON command a line on stdin and answers each with one JSON line on
// stdout: {"seq": N, "ok": true, ...} or {"seq": N, "ok": false, "error": "..."}.
// Commands (id names a session this script holds):
//   open {id, url, key, elicit?: "accept"|"decline", protocolVersion?}  connect and initialize; with elicit,
//                          the client declares elicitation and answers every request so;
//                          with protocolVersion, the initialize request asks for that
//                          version instead of the SDK's latest
//   tools {id}             tools/list: the tools, sorted by name, as the server sent them
//   changed {id}           how many notifications/tools/list_changed the session got
//   waitChanged {id, after, timeoutMs}  wait until more than after arrived; answers the
//                          count and how long the wait took (ms)
//   call {id, tool, args}  tools/call: {isError, text, structured}
//   callMany {id, tool, args, n}  n calls at once: [{isError, text}]
//   session {id}           the session id the server issued
//   elicited {id}          the elicitation requests the session answered
//   version {id}           the protocol version the server answered
//   subscribe {id, uri}    resources/subscribe
//   unsubscribe {id, uri}  resources/unsubscribe
//   updated {id}           the URIs of the notifications/resources/updated received, in order
//   waitUpdated {id, uri, timeoutMs}  wait until one for uri arrived: {timedOut}
//   read {id, uri}         resources/read: {contents: [{uri, text}]}
//   close {id}

import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const reqOpts = { timeout: Number(process.env.TIMEOUT_MS || 30000) };
const sessions = new Map();

function textOf(result) {
  return (result?.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

function session(id) {
  const s = sessions.get(id);
  if (!s) throw new Error(`no session ${id}`);
  return s;
}

// askFor returns a fetch that asks for protocol version v in the initialize request.
function askFor(v) {
  return async (input, init) => {
    if (init?.body && typeof init.body === "string" && init.body.includes('"initialize"')) {
      const msg = JSON.parse(init.body);
      if (msg.method === "initialize") {
        msg.params.protocolVersion = v;
        init = { ...init, body: JSON.stringify(msg) };
      }
    }
    return fetch(input, init);
  };
}

async function open({ id, url, key, elicit, protocolVersion }) {
  const options = elicit ? { capabilities: { elicitation: {} } } : {};
  const client = new Client({ name: "switchboard-e2e-fleet", version: "1.0.0" }, options);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    ...(protocolVersion ? { fetch: askFor(protocolVersion) } : {}),
  });
  const s = { client, transport, changed: 0, waiters: [], elicited: [], updated: [] };
  const wake = () => {
    for (const w of s.waiters.splice(0)) w();
  };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    s.changed++;
    wake();
  });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    s.updated.push(n.params.uri);
    wake();
  });
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      s.elicited.push(req.params?.message ?? "");
      return elicit === "accept" ? { action: "accept", content: { confirm: true } } : { action: "decline" };
    });
  }
  await client.connect(transport, reqOpts);
  sessions.set(id, s);
  return { session: transport.sessionId ?? null };
}

async function waitChanged({ id, after, timeoutMs }) {
  const s = session(id);
  const start = Date.now();
  while (s.changed <= after) {
    const left = timeoutMs - (Date.now() - start);
    if (left <= 0) return { count: s.changed, ms: Date.now() - start, timedOut: true };
    await new Promise((resolve) => {
      const t = setTimeout(resolve, left);
      s.waiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
  return { count: s.changed, ms: Date.now() - start, timedOut: false };
}

async function waitUpdated({ id, uri, timeoutMs }) {
  const s = session(id);
  const start = Date.now();
  while (!s.updated.includes(uri)) {
    const left = timeoutMs - (Date.now() - start);
    if (left <= 0) return { timedOut: true, updated: s.updated };
    await new Promise((resolve) => {
      const t = setTimeout(resolve, left);
      s.waiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
  return { timedOut: false, updated: s.updated };
}

async function call({ id, tool, args }) {
  const r = await session(id).client.callTool({ name: tool, arguments: args ?? {} }, undefined, reqOpts);
  return { isError: r.isError ?? false, text: textOf(r), structured: r.structuredContent ?? null };
}

const commands = {
  open,
  tools: async ({ id }) => {
    const { tools } = await session(id).client.listTools(undefined, reqOpts);
    return { tools: [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) };
  },
  changed: async ({ id }) => ({ count: session(id).changed }),
  waitChanged,
  call,
  callMany: async ({ id, tool, args, n }) => {
    const results = await Promise.all(
      Array.from({ length: n }, () =>
        call({ id, tool, args }).catch((err) => ({ isError: true, text: `client error: ${err?.message ?? err}` })),
      ),
    );
    return { results };
  },
  session: async ({ id }) => ({ session: session(id).transport.sessionId ?? null }),
  elicited: async ({ id }) => ({ elicited: session(id).elicited }),
  version: async ({ id }) => ({ version: session(id).transport.protocolVersion ?? null }),
  subscribe: async ({ id, uri }) => {
    await session(id).client.subscribeResource({ uri }, reqOpts);
    return {};
  },
  unsubscribe: async ({ id, uri }) => {
    await session(id).client.unsubscribeResource({ uri }, reqOpts);
    return {};
  },
  updated: async ({ id }) => ({ updated: session(id).updated }),
  waitUpdated,
  read: async ({ id, uri }) => {
    const r = await session(id).client.readResource({ uri }, reqOpts);
    return { contents: r.contents.map((c) => ({ uri: c.uri, text: c.text ?? null })) };
  },
  close: async ({ id }) => {
    const s = session(id);
    sessions.delete(id);
    await s.transport.terminateSession().catch(() => {});
    await s.client.close();
    return {};
  },
};

const rl = createInterface({ input: process.stdin });
rl.on("line", async (line) => {
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch (err) {
    process.stdout.write(JSON.stringify({ seq: -1, ok: false, error: `bad command: ${err.message}` }) + "\n");
    return;
  }
  try {
    const fn = commands[cmd.op];
    if (!fn) throw new Error(`unknown op ${cmd.op}`);
    const out = await fn(cmd);
    process.stdout.write(JSON.stringify({ seq: cmd.seq, ok: true, ...out }) + "\n");
  } catch (err) {
    process.stdout.write(JSON.stringify({ seq: cmd.seq, ok: false, error: String(err?.message ?? err) }) + "\n");
  }
});
rl.on("close", async () => {
  for (const s of sessions.values()) await s.client.close().catch(() => {});
  process.exit(0);
});
