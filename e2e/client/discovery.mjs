// discovery.mjs checks what an OAuth-capable MCP client sees at a live `switchboard
// serve` while Switchboard has no authorization server, with the official TypeScript
// SDK: the protected resource metadata of a tenant and an agent URL (and none for
// another tenant's agent), and, with a wrong API key, an error that tells the person
// what to do, whether the client runs the SDK's OAuth flow (as mcp-remote does) or not.
// It prints one JSON summary line on stdout and exits 1 when any check failed.
//
// Environment:
//   TENANT_URL   the default tenant's MCP URL
//   AGENT_URL    an agent URL of the default tenant
//   FOREIGN_URL  that agent's ID under another tenant's URL
//   WRONG_KEY    an API key the hub does not know

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { discoverOAuthProtectedResourceMetadata } from "@modelcontextprotocol/sdk/client/auth.js";

const env = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`discovery.mjs: environment variable ${name} is required`);
    process.exit(2);
  }
  return v;
};
const cfg = { tenant: env("TENANT_URL"), agent: env("AGENT_URL"), foreign: env("FOREIGN_URL"), wrongKey: env("WRONG_KEY") };

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
    check(md.authorization_servers === undefined, `${name} metadata names authorization servers ${JSON.stringify(md.authorization_servers)} that do not exist`);
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

// An OAuth client provider like mcp-remote's: it registers dynamically and would open
// a browser for the authorization step.
let redirected = false;
const provider = {
  redirectUrl: "http://127.0.0.1:3334/oauth/callback",
  clientMetadata: { client_name: "discovery-e2e", redirect_uris: ["http://127.0.0.1:3334/oauth/callback"], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" },
  clientInformation: () => undefined,
  saveClientInformation: () => {},
  tokens: () => undefined,
  saveTokens: () => {},
  redirectToAuthorization: () => { redirected = true; },
  saveCodeVerifier: () => {},
  codeVerifier: () => "",
};

summary.oauth_requests = [];
summary.oauth_error = await connectError(provider, summary.oauth_requests);
check(!redirected, "the OAuth client was sent to a browser authorization step that does not exist");
check(summary.oauth_error.includes("connect with an API key"), `the OAuth client's error does not say to use an API key: ${summary.oauth_error}`);
check(summary.oauth_requests.includes(`GET ${new URL(cfg.tenant).pathname.replace(/^/, "/.well-known/oauth-protected-resource")} 200`), `the OAuth client did not read the tenant URL's metadata: ${summary.oauth_requests.join(", ")}`);

summary.plain_requests = [];
summary.plain_error = await connectError(undefined, summary.plain_requests);
check(summary.plain_error.includes("invalid or revoked API key"), `the plain client's error does not say the key is invalid: ${summary.plain_error}`);

summary.ok = failures.length === 0;
console.log(JSON.stringify(summary));
process.exit(summary.ok ? 0 : 1);
