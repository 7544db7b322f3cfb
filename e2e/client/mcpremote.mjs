// mcpremote.mjs runs mcp-remote (the stdio bridge desktop apps start from their config,
// with no key) against a live `switchboard serve`: mcp-remote discovers the server,
// registers, and prints the authorization URL (its browser is switched off); the person
// signs in and allows it over HTTP; the browser's redirect is delivered to mcp-remote's
// callback; mcp-remote then answers initialize and tools/list on stdio.
// It prints one JSON summary line on stdout and exits 1 when any check failed.
//
// Environment:
//   TENANT_URL   the default tenant's MCP URL
//   ADMIN_LINK   the one-time link that sets the admin's UI password
//   CONFIG_DIR   an empty directory for mcp-remote's stored client and tokens

import { spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { createRequire } from "node:module";
import { consent, signInWithLink } from "./person.mjs";

const env = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`mcpremote.mjs: environment variable ${name} is required`);
    process.exit(2);
  }
  return v;
};
const cfg = { tenant: env("TENANT_URL"), adminLink: env("ADMIN_LINK"), configDir: env("CONFIG_DIR") };
const failures = [];
const summary = { ok: false, failures, stderr: [] };
const check = (cond, what) => {
  if (!cond) {
    failures.push(what);
    console.error("FAIL:", what);
  }
};
const finish = (child) => {
  child?.kill("SIGKILL");
  summary.ok = failures.length === 0;
  console.log(JSON.stringify(summary));
  process.exit(summary.ok ? 0 : 1);
};
// Nothing below may wait for ever.
const deadline = setTimeout(() => { check(false, "mcp-remote did not finish within 90 s"); finish(child); }, 90_000);

check(await signInWithLink(cfg.adminLink, "e2e password for the admin"), "setting the admin's password did not sign them in");

// A free port for mcp-remote's OAuth callback.
const port = await new Promise((resolve) => { const s = net.createServer().listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => resolve(p)); }); });
const require = createRequire(import.meta.url);
const proxy = path.join(path.dirname(require.resolve("mcp-remote/package.json")), "dist", "proxy.js");
// BROWSER=true: xdg-open "opens" the URL with /bin/true, so no real browser starts.
var child = spawn(process.execPath, [proxy, cfg.tenant, String(port)], {
  env: { ...process.env, MCP_REMOTE_CONFIG_DIR: cfg.configDir, BROWSER: "true", DISPLAY: "" }, stdio: ["pipe", "pipe", "pipe"],
});

// Lines mcp-remote writes: JSON-RPC on stdout, its log on stderr.
const waiters = [];
const answers = new Map();
let out = "";
child.stdout.on("data", (d) => {
  out += d;
  let i;
  while ((i = out.indexOf("\n")) >= 0) {
    const line = out.slice(0, i).trim();
    out = out.slice(i + 1);
    if (!line) continue;
    try { const m = JSON.parse(line); if (m.id !== undefined) answers.set(m.id, m); } catch { summary.stderr.push(`stdout: ${line.slice(0, 200)}`); }
  }
  waiters.forEach((w) => w());
});
let err = "";
let authorizationURL;
child.stderr.on("data", (d) => {
  err += d;
  const m = err.match(/Please authorize this client by visiting:\s*(\S+)/);
  if (m && !authorizationURL) authorizationURL = m[1];
  waiters.forEach((w) => w());
});
child.on("exit", (code) => { summary.exit = code; waiters.forEach((w) => w()); });
const until = (cond) => new Promise((resolve) => { const w = () => { if (cond()) resolve(); }; waiters.push(w); w(); });
const send = (m) => child.stdin.write(JSON.stringify(m) + "\n");

send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "mcp-remote-e2e", version: "1.0.0" } } });
await until(() => authorizationURL || summary.exit !== undefined);
check(authorizationURL, `mcp-remote printed no authorization URL; its log: ${err.slice(-2000)}`);
if (!authorizationURL) finish(child);
const u = new URL(authorizationURL);
summary.authorization = { endpoint: u.origin + u.pathname, resource: u.searchParams.get("resource"), method: u.searchParams.get("code_challenge_method"), redirect: u.searchParams.get("redirect_uri") };
check(u.searchParams.get("resource") === cfg.tenant, `resource ${u.searchParams.get("resource")}`);
const { shown, answer } = await consent(authorizationURL);
check(shown.status === 200 && shown.html.includes("Allow "), `consent page: ${shown.status}`);
check(answer.status === 303 && answer.location?.startsWith(`http://localhost:${port}/`), `consent answer: ${answer.status} ${answer.location}`);
// The browser follows the redirect to mcp-remote's callback.
if (answer.location) {
  const cb = await fetch(answer.location);
  summary.callback_status = cb.status;
}
await until(() => answers.has(1) || summary.exit !== undefined);
const init = answers.get(1);
check(init?.result?.serverInfo, `initialize through mcp-remote: ${JSON.stringify(init ?? null)}; its log: ${err.slice(-1500)}`);
summary.server = init?.result?.serverInfo?.name;
send({ jsonrpc: "2.0", method: "notifications/initialized" });
send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
await until(() => answers.has(2) || summary.exit !== undefined);
const tools = answers.get(2);
check(Array.isArray(tools?.result?.tools), `tools/list through mcp-remote: ${JSON.stringify(tools ?? null).slice(0, 500)}`);
summary.tools = tools?.result?.tools?.length;
clearTimeout(deadline);
finish(child);
