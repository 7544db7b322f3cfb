// A browser MCP client on another site (TestBrowserCORS): a page served from
// ALLOWED_ORIGIN, a loopback origin the hub lists in SWITCHBOARD_ALLOWED_ORIGINS,
// registers an OAuth client, gets the signed-in person's consent, exchanges the code
// and speaks JSON-RPC over fetch to the tenant URL (initialize, tools/list,
// tools/call). The same page served from OTHER_ORIGIN, not listed, cannot call it.
// Run by go test ./e2e/browser, which passes everything in the environment; the last line
// of stdout is a JSON summary.
import crypto from 'node:crypto';
import { chromium } from 'playwright-core';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const BASE = env('BASE_URL');
const ADMIN_LINK = env('ADMIN_LINK');
const ALLOWED = env('ALLOWED_ORIGIN');
const OTHER = env('OTHER_ORIGIN');
const TOOL = env('TOOL');
const PASSWORD = 'e2e password for the browser client';

const summary = { ok: false, failures: [], steps: [] };
const step = (s) => summary.steps.push(s);
const check = (cond, msg) => { if (!cond) summary.failures.push(msg); };

// mcpSession runs in the page: the MCP client, fetch and JSON-RPC only, as a browser
// client without an SDK bundle speaks it.
async function mcpSession({ mcpURL, token, tool }) {
  const out = { steps: [] };
  const rpcAnswer = async (res, id) => {
    const type = res.headers.get('Content-Type') || '';
    const text = await res.text();
    if (!type.includes('text/event-stream')) return JSON.parse(text);
    for (const ev of text.split('\n\n')) {
      const data = ev.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
      if (!data) continue;
      const msg = JSON.parse(data);
      if (msg.id === id) return msg;
    }
    throw new Error(`no answer to request ${id} in the stream: ${text.slice(0, 200)}`);
  };
  // Without a credential: the 401 and its challenge must be readable here.
  const anon = await fetch(mcpURL, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'browser', version: '1' } } }) });
  out.anon_status = anon.status;
  out.challenge = anon.headers.get('WWW-Authenticate') || '';
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  let id = 0;
  const rpc = async (method, params) => {
    id++;
    const res = await fetch(mcpURL, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) });
    if (res.status !== 200) throw new Error(`${method}: HTTP ${res.status} ${await res.text()}`);
    const sid = res.headers.get('Mcp-Session-Id');
    if (sid) headers['Mcp-Session-Id'] = sid;
    const msg = await rpcAnswer(res, id);
    if (msg.error) throw new Error(`${method}: ${JSON.stringify(msg.error)}`);
    return msg.result;
  };
  const init = await rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'browser', version: '1' } });
  out.session_id = headers['Mcp-Session-Id'] || '';
  headers['Mcp-Protocol-Version'] = init.protocolVersion;
  const note = await fetch(mcpURL, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  out.initialized_status = note.status;
  const tools = [];
  let cursor;
  do {
    const page = await rpc('tools/list', cursor ? { cursor } : {});
    tools.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  out.tools = tools;
  const called = await rpc('tools/call', { name: tool, arguments: {} });
  out.call_error = !!called.isError;
  out.call_text = (called.content || []).map((c) => c.text || '').join('\n');
  return out;
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
});
try {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  page.setDefaultTimeout(15000);

  step('the admin sets a password and is signed in at the hub');
  await page.goto(ADMIN_LINK);
  await page.fill('#password', PASSWORD);
  await page.fill('#confirm', PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForURL(`${BASE}/`);

  step('the client page registers an OAuth client from its own origin');
  const mcpURL = `${BASE}/mcp/default`;
  const redirect = `${ALLOWED}/callback`;
  await page.goto(`${ALLOWED}/client`);
  const reg = await page.evaluate(async ({ base, redirect }) => {
    const res = await fetch(`${base}/oauth/register`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: 'E2E browser client', redirect_uris: [redirect], token_endpoint_auth_method: 'none' }) });
    return { status: res.status, body: await res.json() };
  }, { base: BASE, redirect });
  check(reg.status === 201 && reg.body.client_id, `registration from the page: ${JSON.stringify(reg)}`);

  step('the person allows the client on the consent page; the browser goes back to the client page with a code');
  const verifier = crypto.randomBytes(32).toString('base64url');
  const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
  const q = new URLSearchParams({ response_type: 'code', client_id: reg.body.client_id, redirect_uri: redirect, code_challenge: challenge,
    code_challenge_method: 'S256', state: 'browser-state', scope: 'mcp', resource: mcpURL });
  await page.goto(`${BASE}/oauth/authorize?${q}`);
  await page.click('button.allow');
  await page.waitForURL(`${redirect}?**`);
  const back = new URL(page.url());
  check(back.searchParams.get('state') === 'browser-state' && back.searchParams.get('code'), `the consent sent no code back: ${back}`);

  step('the client page exchanges the code and calls the tenant URL');
  const tok = await page.evaluate(async ({ base, code, redirect, clientID, verifier, resource }) => {
    const res = await fetch(`${base}/oauth/token`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirect, client_id: clientID, code_verifier: verifier, resource }) });
    return { status: res.status, body: await res.json() };
  }, { base: BASE, code: back.searchParams.get('code'), redirect, clientID: reg.body.client_id, verifier, resource: mcpURL });
  check(tok.status === 200 && tok.body.access_token, `the token exchange from the page answered ${tok.status}`);
  summary.allowed = await page.evaluate(mcpSession, { mcpURL, token: tok.body.access_token, tool: TOOL }).catch((e) => ({ error: String(e) }));

  step('the same client page on an origin not listed cannot call');
  await page.goto(`${OTHER}/client`);
  summary.other = await page.evaluate(mcpSession, { mcpURL, token: tok.body.access_token, tool: TOOL }).then(
    (r) => ({ error: '', result: r }), (e) => ({ error: String(e) }));
  summary.ok = summary.failures.length === 0;
} catch (e) {
  summary.failures.push(`${summary.steps.at(-1)}: ${e.stack || e}`);
} finally {
  await browser.close();
}
console.log(JSON.stringify(summary));
process.exit(summary.ok ? 0 : 1);
