// discovery.mjs runs the MCP authorization flow against a live `switchboard serve`
// with the official TypeScript SDK's OAuth client provider, the way mcp-remote does:
// protected resource metadata of a tenant and an agent URL (none for another tenant's
// agent), dynamic registration, the authorization step (the consent page driven over
// HTTP by a person signed in with the password the admin link sets), the token
// exchange, tools/list with the access token, and the token refused at another
// tenant's URL. A plain client with a wrong key still reads that the key is invalid.
// It prints one JSON summary line on stdout and exits 1 when any check failed.
//
// Environment:
//   TENANT_URL   the default tenant's MCP URL
//   AGENT_URL    an agent URL of the default tenant
//   FOREIGN_URL  that agent's ID under another tenant's URL
//   OTHER_URL    another tenant's MCP URL
//   WRONG_KEY    an API key the hub does not know
//   ADMIN_LINK   the one-time link that sets the admin's UI password

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { discoverOAuthProtectedResourceMetadata, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { consent, signInWithLink } from "./person.mjs";

const env = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`discovery.mjs: environment variable ${name} is required`);
    process.exit(2);
  }
  return v;
};
const cfg = { tenant: env("TENANT_URL"), agent: env("AGENT_URL"), foreign: env("FOREIGN_URL"), other: env("OTHER_URL"), wrongKey: env("WRONG_KEY"), adminLink: env("ADMIN_LINK") };
const origin = new URL(cfg.tenant).origin;

const failures = [];
const summary = { ok: false, failures };
const check = (cond, what) => {
  if (!cond) {
    failures.push(what);
    console.error("FAIL:", what);
  }
};

// The metadata of tenant and agent URLs, by the SDK's own discovery.
for (const [name, url] of [["tenant", cfg.tenant], ["agent", cfg.agent]]) {
  try {
    const md = await discoverOAuthProtectedResourceMetadata(url);
    summary[name + "_metadata"] = md;
    check(md.resource === url, `${name} metadata resource ${md.resource}, want ${url}`);
    check(JSON.stringify(md.scopes_supported) === '["mcp"]', `${name} scopes_supported ${JSON.stringify(md.scopes_supported)}`);
    check(JSON.stringify(md.bearer_methods_supported) === '["header"]', `${name} bearer_methods_supported ${JSON.stringify(md.bearer_methods_supported)}`);
    check(JSON.stringify(md.authorization_servers) === JSON.stringify([origin]), `${name} metadata authorization_servers ${JSON.stringify(md.authorization_servers)}, want [${origin}]`);
  } catch (e) {
    check(false, `${name} metadata discovery failed: ${e.message}`);
  }
}
try {
  await discoverOAuthProtectedResourceMetadata(cfg.foreign);
  check(false, "another tenant's agent has metadata");
} catch (e) {
  summary.foreign_metadata_error = e.message;
}

// A client that logs every request it makes, so the summary shows where a flow went.
const logged = (log) => async (url, init) => {
  const res = await fetch(url, init);
  log.push(`${init?.method ?? "GET"} ${new URL(url).pathname} ${res.status}`);
  return res;
};

// connectError connects with the wrong key (and, when given, an OAuth provider) and
// returns the error's message.
async function connectError(authProvider, log) {
  const transport = new StreamableHTTPClientTransport(new URL(cfg.tenant), {
    requestInit: { headers: { Authorization: `Bearer ${cfg.wrongKey}` } },
    authProvider,
    fetch: logged(log),
  });
  const client = new Client({ name: "discovery-e2e", version: "1.0.0" });
  try {
    await client.connect(transport);
    await client.close();
    return "";
  } catch (e) {
    return `${e.constructor.name}: ${e.message}`;
  }
}

// The admin sets a password with the link serve printed, which signs them in.
check(await signInWithLink(cfg.adminLink, "e2e password for the admin"), "setting the admin's password did not sign them in");

// An OAuth client provider like mcp-remote's: it registers dynamically, and its
// "browser" is the person above answering the consent page.
const redirectUrl = "http://127.0.0.1:3334/oauth/callback";
const store = {};
let authorizationURL;
const provider = {
  redirectUrl,
  clientMetadata: { client_name: "discovery-e2e", redirect_uris: [redirectUrl], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" },
  clientInformation: () => store.client,
  saveClientInformation: (c) => { store.client = c; },
  tokens: () => store.tokens,
  saveTokens: (t) => { store.tokens = t; },
  redirectToAuthorization: (url) => { authorizationURL = url; },
  saveCodeVerifier: (v) => { store.verifier = v; },
  codeVerifier: () => store.verifier,
};

summary.oauth_requests = [];
const transport = new StreamableHTTPClientTransport(new URL(cfg.tenant), { authProvider: provider, fetch: logged(summary.oauth_requests) });
const client = new Client({ name: "discovery-e2e", version: "1.0.0" });
try {
  await client.connect(transport);
  check(false, "connected without authorization");
} catch (e) {
  check(e instanceof UnauthorizedError, `the first connect ended in ${e.constructor.name}: ${e.message}, want UnauthorizedError (go authorize)`);
}
check(store.client?.client_id?.startsWith("cli_"), `no client registered: ${JSON.stringify(store.client)}`);
check(authorizationURL !== undefined, "the client was not sent to the authorization step");
if (authorizationURL) {
  const u = new URL(authorizationURL);
  summary.authorization_url = u.origin + u.pathname;
  check(u.origin + u.pathname === origin + "/oauth/authorize", `authorization endpoint ${u.origin + u.pathname}`);
  check(u.searchParams.get("code_challenge_method") === "S256", "the SDK did not use PKCE S256");
  check(u.searchParams.get("resource") === cfg.tenant, `resource ${u.searchParams.get("resource")}, want ${cfg.tenant}`);
  const { shown, answer } = await consent(authorizationURL);
  check(shown.status === 200 && shown.html.includes("Allow discovery-e2e to use Switchboard?"), `consent page: ${shown.status}`);
  check(shown.html.includes("has not verified this app"), "a dynamically registered client is not marked unverified");
  check(answer.status === 303 && answer.location?.startsWith(redirectUrl), `consent answer: ${answer.status} ${answer.location}`);
  const back = new URL(answer.location ?? redirectUrl);
  check(back.searchParams.get("iss") === origin, `iss ${back.searchParams.get("iss")}`);
  try {
    await transport.finishAuth(back.searchParams.get("code") ?? "");
    const client2 = new Client({ name: "discovery-e2e", version: "1.0.0" });
    await client2.connect(new StreamableHTTPClientTransport(new URL(cfg.tenant), { authProvider: provider }));
    const tools = await client2.listTools();
    summary.tools_with_token = tools.tools.length;
    check(Array.isArray(tools.tools), "tools/list with the access token gave no list");
    await client2.close();
  } catch (e) {
    check(false, `token exchange or connect with the token: ${e.constructor.name}: ${e.message}`);
  }
  check(store.tokens?.refresh_token?.startsWith("sbr_"), "no refresh token");
  // The token is for the tenant URL only: another tenant's URL refuses it.
  if (store.tokens?.access_token) {
    const res = await fetch(cfg.other, { method: "POST", headers: { Authorization: `Bearer ${store.tokens.access_token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } }) });
    summary.other_tenant_status = res.status;
    check(res.status === 401, `the token at another tenant's URL: ${res.status}, want 401`);
    // Rotation: the refresh token works once; its reuse is refused.
    const refresh = (rt) => fetch(origin + "/oauth/token", { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: rt, client_id: store.client.client_id }).toString() });
    const rt = store.tokens.refresh_token;
    const first = await refresh(rt);
    const again = await refresh(rt);
    check(first.status === 200, `refresh: ${first.status}`);
    check(again.status === 400 && (await again.json()).error === "invalid_grant", `refresh token reuse: ${again.status}, want invalid_grant`);
  }
}

summary.plain_requests = [];
summary.plain_error = await connectError(undefined, summary.plain_requests);
check(summary.plain_error.includes("invalid or revoked API key"), `the plain client's error does not say the key is invalid: ${summary.plain_error}`);

summary.ok = failures.length === 0;
console.log(JSON.stringify(summary));
process.exit(summary.ok ? 0 : 1);
