// Drives the builder UI of a live `switchboard serve` in Chromium (playwright-core):
// sign in, connect GitHub with a token, build an agent with two tools, copy its URL,
// run a tool from Try it, see the call in Activity, approve a destructive call a
// confirm policy held on its approval page, revoke a key, and check that
// another tenant's member sees none of it. Run by go test ./e2e/browser (TestBrowser), which
// starts the server and the fake GitHub and passes everything in the environment.
// The last line of stdout is a JSON summary; the exit code is 0 only if every check held.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import crypto from 'node:crypto';
import path from 'node:path';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { workflowsUI } from './workflows.mjs';

// AXE is axe-core's browser build (pinned in package.json), injected into each page.
const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const BASE = env('BASE_URL');
const ADMIN_LINK = env('ADMIN_LINK');
const BETA_LINK = env('BETA_LINK');
const GITHUB_TOKEN = env('GITHUB_TOKEN');
const GITHUB_RENEWED_TOKEN = env('GITHUB_RENEWED_TOKEN'); // a second token of the same account
const GITHUB_OTHER_TOKEN = env('GITHUB_OTHER_TOKEN'); // another account's
const SHOTS = env('SCREENSHOT_DIR');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const PASSWORD = 'e2e password for the admin';
const OAUTH_SECRET = 'e2e-oauth-client-secret-0123456789';
const GITHUB_AUTHORIZE = 'https://github.com/login/oauth/authorize';
const BETA_PASSWORD = 'e2e password for beta';
const REMOTE_MCP_URL = env('REMOTE_MCP_URL');
const REMOTE_MCP_TOKEN = env('REMOTE_MCP_TOKEN');

const summary = { ok: false, failures: [], steps: [], screenshots: [], beta: {}, reconnect: {}, axe: {}, builder: {} };
const check = (cond, msg) => { if (!cond) { summary.failures.push(msg); throw new Error(msg); } };
const step = (name) => { summary.steps.push(name); console.error(`-- ${name}`); };
// waitUntil waits until fn(arg) holds in the page, however late the page's own requests
// finish, and records msg as the failure if it never does within a generous deadline.
const waitUntil = async (page, fn, arg, msg) => {
  try { await page.waitForFunction(fn, arg, { timeout: 60000 }); } catch (err) { check(false, `${msg} (${err.message.split('\n')[0]})`); }
};

// confirmInPage answers the page's own confirmation dialog (#confirm-dialog): ok or
// cancel; it returns the dialog's title and text.
async function confirmInPage(page, answer = 'ok') {
  await page.waitForSelector('#confirm-dialog[open]');
  const said = { title: await page.textContent('#confirm-title'), text: await page.textContent('#confirm-dialog') };
  await page.click(answer === 'ok' ? '#confirm-ok' : '#confirm-cancel');
  await page.waitForSelector('#confirm-dialog', { state: 'hidden' });
  return said;
}

fs.mkdirSync(SHOTS, { recursive: true });
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
});
const origin = new URL(BASE).origin;
const foreign = [];
// MCP_CLIENT_REDIRECT is where the consent page sends the browser back to an MCP client
// (a desktop app's loopback listener): the one other place a page may lead.
const MCP_CLIENT_REDIRECT = 'http://127.0.0.1:9/oauth/callback';
const dialogs = []; // the type of every dialog the pages opened (confirm, beforeunload…)
let dismissNext = false; // the next dialog is declined instead of accepted

async function newPage(ctx) {
  const page = await ctx.newPage();
  page.setDefaultTimeout(15000);
  page.on('request', (req) => {
    const u = req.url();
    if (!u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith(GITHUB_AUTHORIZE) && !u.startsWith(MCP_CLIENT_REDIRECT + '?')) foreign.push(u);
  });
  page.on('pageerror', (err) => summary.failures.push(`page error on ${page.url()}: ${err.message}`));
  page.on('dialog', (d) => { dialogs.push(d.type()); if (dismissNext) { dismissNext = false; d.dismiss(); } else d.accept(); });
  return page;
}

async function shot(page, name) {
  const file = path.join(SHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  summary.screenshots.push(file);
}

// axeCheck runs axe-core (WCAG 2.1 A and AA rules) on the page as it is and fails on
// any serious or critical violation; it records how many rules it checked.
async function axeCheck(page, what) {
  // Evaluated through the DevTools protocol: the pages' CSP forbids injected script tags.
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(AXE_SOURCE + '\n;true');
  const res = await page.evaluate(async () => {
    const r = await window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] });
    return {
      passes: r.passes.length + r.violations.length + r.incomplete.length,
      bad: r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id} (${v.impact}, ${v.nodes.length}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`),
    };
  });
  summary.axe[what] = res.bad.length;
  check(res.bad.length === 0, `${what}: axe-core found serious or critical violations: ${res.bad.join('; ')}`);
}

// audit checks what every page must be: labelled controls, nothing wider than the
// window, no secret in the HTML.
async function audit(page, what) {
  const res = await page.evaluate((secrets) => {
    const unlabelled = [];
    for (const n of document.querySelectorAll('input:not([type=hidden]), select, textarea')) {
      if (n.closest('[hidden]')) continue;
      const named = (n.labels && n.labels.length) || n.getAttribute('aria-label') || n.getAttribute('aria-labelledby');
      if (!named) unlabelled.push(n.id || n.name || n.outerHTML.slice(0, 60));
    }
    const html = document.documentElement.outerHTML;
    const values = [...document.querySelectorAll('input, textarea')].map((n) => n.value).join('\n');
    const wide = [...document.querySelectorAll('body *')].filter((n) => n.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 5).map((n) => n.tagName + '#' + n.id + '.' + n.className);
    return { wide, unlabelled, overflow: document.documentElement.scrollWidth - window.innerWidth, leaked: secrets.some((t) => html.includes(t) || values.includes(t)), size: html.length };
  }, [GITHUB_TOKEN, GITHUB_RENEWED_TOKEN, OAUTH_SECRET, PASSWORD, REMOTE_MCP_TOKEN]);
  check(res.unlabelled.length === 0, `${what}: controls without a label: ${res.unlabelled.join(', ')}`);
  check(res.overflow <= 1, `${what}: the page is ${res.overflow}px wider than the window (${res.wide.join(', ')})`);
  check(!res.leaked, `${what}: a token, secret or password appears in the page`);
  await axeCheck(page, what);
}

// mcpCall initializes an MCP session at url with the bearer key and calls tool with
// args; it returns the tools/call answer's JSON-RPC message.
async function mcpCall(url, key, tool, args) {
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const rpc = async (body, session) => {
    const res = await fetch(url, { method: 'POST', headers: session ? { ...headers, 'Mcp-Session-Id': session } : headers, body: JSON.stringify(body) });
    const text = await res.text();
    const data = (res.headers.get('content-type') || '').includes('text/event-stream')
      ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).pop() : text;
    return { status: res.status, session: res.headers.get('mcp-session-id'), msg: data ? JSON.parse(data) : null };
  };
  const init = await rpc({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } });
  check(init.status === 200, `initialize at ${url} answered ${init.status}`);
  await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' }, init.session);
  const call = await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: tool, arguments: args } }, init.session);
  check(call.status === 200 && call.msg, `tools/call ${tool} answered ${call.status}`);
  return call.msg;
}

// mcpList initializes an MCP session at url with the bearer key and returns its tools/list.
async function mcpList(url, key) {
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const rpc = async (body, session) => {
    const res = await fetch(url, { method: 'POST', headers: session ? { ...headers, 'Mcp-Session-Id': session } : headers, body: JSON.stringify(body) });
    const text = await res.text();
    const data = (res.headers.get('content-type') || '').includes('text/event-stream')
      ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).pop() : text;
    return { status: res.status, session: res.headers.get('mcp-session-id'), msg: data ? JSON.parse(data) : null };
  };
  const init = await rpc({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } });
  check(init.status === 200, `initialize at ${url} answered ${init.status}`);
  await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' }, init.session);
  const list = await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, init.session);
  check(list.status === 200 && list.msg && list.msg.result, `tools/list at ${url} answered ${list.status}`);
  return list.msg.result.tools;
}


// pageAPI calls the REST API from the page, as its signed-in person (session cookie and
// CSRF token), and returns the answer's status and JSON body.
async function pageAPI(page, method, path, body) {
  return page.evaluate(async ([method, path, body]) => {
    const res = await fetch(path, { method, credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': document.querySelector('meta[name="csrf-token"]').content },
      body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: await res.json().catch(() => null) };
  }, [method, path, body]);
}

try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const page = await newPage(ctx);

  step('a signed-out browser is sent to sign in');
  await page.goto(`${BASE}/#connections`);
  check(new URL(page.url()).pathname === '/signin', `/ without a session went to ${page.url()}`);
  await axeCheck(page, 'sign-in');
  await shot(page, '01-signin');

  step('the admin sets a password with the link serve printed');
  await page.goto(ADMIN_LINK);
  check((await page.textContent('#invite-email')) === 'admin@localhost', 'the password link is not for admin@localhost');
  await page.fill('#password', PASSWORD);
  await page.fill('#confirm', PASSWORD + ' typo');
  await page.click('button[type=submit]');
  check((await page.textContent('#form-error')).includes('differ'), 'mismatched passwords were not refused with a message');
  await page.fill('#password', PASSWORD);
  await page.fill('#confirm', PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForURL(`${BASE}/`);

  step('sign out, then sign in with email and password');
  await page.click('text=Sign out');
  await page.waitForURL(/\/signin/);
  await page.fill('#email', 'admin@localhost');
  await page.fill('#password', 'wrong password!');
  await page.click('button[type=submit]');
  check((await page.textContent('#form-error')).includes('wrong'), 'a wrong password was not refused with a message');
  check((await page.inputValue('#password')) === '', 'the password field kept the password after a failed sign-in');
  await page.fill('#password', PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForURL(`${BASE}/`);
  check((await page.textContent('#who-email')) === 'admin@localhost', `the header names ${await page.textContent('header .who')}, not the signed-in email`);
  const cookies = await ctx.cookies();
  const session = cookies.find((c) => c.name === 'switchboard_session');
  check(session && session.httpOnly && session.sameSite === 'Lax', `the session cookie is not HTTP-only and SameSite=Lax: ${JSON.stringify(session && { httpOnly: session.httpOnly, sameSite: session.sameSite })}`);

  step('connect GitHub with a token');
  await page.waitForSelector('[data-provider=github]');
  // A provider's tools are fetched when its list is opened.
  await page.click('[data-provider=slack] details > summary');
  await waitUntil(page, () => { const d = document.querySelector('[data-provider=slack] details');
    return d.querySelectorAll('ul.tools li a').length > 0 && d.querySelector('summary').textContent === `Tools (${d.querySelectorAll('ul.tools li a').length})`; }, null,
  'opening Slack\'s tools did not list them all');
  await page.fill('#catalog-search', 'issue');
  await page.waitForSelector('[data-provider=github] a[href="/tools/github_create_issue"]');
  await page.fill('#catalog-search', '');
  // Each provider's card carries its own mark, vendored and drawn from this server.
  const marks = await page.$$eval('#catalog [data-logo]', (ns) => ns.map((n) => ({ name: n.dataset.logo, mask: getComputedStyle(n).maskImage || getComputedStyle(n).webkitMaskImage })));
  check(marks.length >= 7 && marks.every((m) => m.mask.includes(`/static/logos/${m.name}.svg`)), `the catalog's logos are ${JSON.stringify(marks)}`);
  const logoAnswer = await page.evaluate(async () => { const r = await fetch('/static/logos/github.svg'); return { status: r.status, type: r.headers.get('content-type'), body: (await r.text()).slice(0, 60) }; });
  check(logoAnswer.status === 200 && logoAnswer.type.startsWith('image/svg+xml') && logoAnswer.body.includes('<svg'), `the GitHub logo answered ${JSON.stringify(logoAnswer)}`);
  summary.connecting = { logos: marks.length };
  step('Jira, OAuth only and without an OAuth app, says where to set one up');
  await page.click('[data-connect=jira]');
  check(!(await page.isVisible('#connect-token-input')) && !(await page.isVisible('#connect-oauth-button')), 'Jira without an OAuth app offers a token field or Continue with OAuth');
  check((await page.getAttribute('#connect-oauth-missing a', 'href')) === '/settings#oauth-title', 'Jira without an OAuth app does not link to Settings → OAuth apps');
  await axeCheck(page, 'connect dialog oauth only');
  await page.keyboard.press('Escape');
  check(await page.evaluate(() => document.activeElement && document.activeElement.dataset.connect === 'jira'), 'closing the dialog did not return focus to its Connect button');
  await page.click('[data-connect=github]');
  check(await page.isVisible('#connect-dialog'), 'the connect dialog did not open');
  check(!(await page.isVisible('#connect-oauth-button')) && await page.isVisible('#connect-oauth-missing'), 'Continue with OAuth is offered with no OAuth app configured');
  check((await page.$$('#connect-help ol.steps li')).length >= 3, 'the token help is not short numbered steps');
  check((await page.getAttribute('#connect-help a', 'href')).startsWith('https://github.com/settings/'), 'the token help does not link to GitHub\'s token page');
  check((await page.textContent('#connect-scopes')).includes('Scopes'), 'the connect dialog does not say which scopes the tools need');
  await axeCheck(page, 'connect dialog');
  const badToken = 'ghp_notAValidTokenForTheFake000000000000';
  await page.fill('#connect-token-input', badToken);
  await page.click('#connect-submit');
  await page.waitForSelector('#connect-error:not([hidden])');
  const refused = await page.textContent('#connect-error');
  check(refused.startsWith('GitHub refused this token:') && !/reconnect/i.test(refused), `a first bad token said ${refused}`);
  check((await page.inputValue('#connect-token-input')) === badToken, 'the refused token was not kept for correction');
  check((await page.getAttribute('#connect-token-input', 'aria-invalid')) === 'true', 'the refused token field is not marked invalid');
  await page.fill('#connect-token-input', GITHUB_TOKEN);
  await page.check('#connect-shared');
  await page.click('#connect-submit');
  await page.waitForSelector('#connections-table tbody tr');
  const row = await page.textContent('#connections-table tbody tr');
  check(row.includes('octocat') && row.includes('active') && row.includes('repo'), `the connection row lacks login, status or scopes: ${row}`);
  const connectionID = await page.getAttribute('#connections-table tbody tr', 'data-connection');
  await waitUntil(page, () => document.querySelector('#flash').textContent.includes('tools will fail'), undefined, 'the flash after connecting does not warn of the missing scopes');
  const gap = await page.getAttribute(`tr[data-connection="${connectionID}"] [data-scope-gap]`, 'data-scope-gap');
  check(gap && gap.split(' ').includes('gist') && !gap.split(' ').includes('repo'), `the row's missing scopes are ${gap}`);
  const failing = await page.evaluate(async (id) => (await (await fetch(`/api/connections/${id}`)).json()).failing_tools || [], connectionID);
  check(failing.includes('github_create_gist') && (await page.textContent(`tr[data-connection="${connectionID}"] [data-scope-gap]`)).includes(failing[0]),
    `the row does not name the tools that will fail (${failing.join(', ')})`);
  check((await page.textContent('[data-provider=github] [data-connected]')).includes('Connected'), 'the GitHub card does not say it is connected');
  step('the same account connected twice is flagged');
  await page.click('[data-connect=github]');
  await page.fill('#connect-token-input', GITHUB_RENEWED_TOKEN);
  await page.click('#connect-submit');
  await waitUntil(page, () => document.querySelectorAll('#connections-table tbody tr').length === 2, undefined, 'the second connection of the same account was not listed');
  await waitUntil(page, () => document.querySelector('#flash').textContent.includes('already connected'), undefined, 'connecting the same account twice did not warn');
  check((await page.$$('#connections-table [data-duplicate]')).length === 2, 'the two connections of one account are not flagged');
  const twinID = await page.$$eval('#connections-table tbody tr', (rows, first) => rows.map((r) => r.dataset.connection).find((id) => id !== first), connectionID);
  await page.click(`tr[data-connection="${twinID}"] button:has-text("Disconnect")`);
  await page.waitForSelector('#confirm-dialog[open]');
  check((await page.textContent('#confirm-ok')) === 'Disconnect' && (await page.textContent('#confirm-title')).startsWith('Disconnect GitHub'), `the disconnect confirmation reads ${await page.textContent('#confirm-dialog')}`);
  await axeCheck(page, 'disconnect confirmation');
  await confirmInPage(page);
  await waitUntil(page, () => document.querySelectorAll('#connections-table tbody tr').length === 1, undefined, 'the duplicate was not disconnected');
  check(await page.evaluate(() => document.activeElement && document.activeElement.id === 'connections-title'), 'after a disconnect, focus dropped to the page body');
  step('a remote MCP server is added and listed with its tools, then removed');
  await page.click('#remote-add');
  await page.fill('#remote-name', 'docs');
  await page.fill('#remote-url', REMOTE_MCP_URL);
  await page.selectOption('#remote-auth', 'bearer');
  await axeCheck(page, 'remote mcp dialog');
  await page.click('#remote-submit');
  await page.waitForSelector('#remote-error:not([hidden])');
  check((await page.getAttribute('#remote-token', 'aria-invalid')) === 'true', `a missing bearer token was not marked on its field: ${await page.textContent('#remote-error')}`);
  await page.fill('#remote-token', REMOTE_MCP_TOKEN);
  await page.click('#remote-submit');
  await page.waitForSelector('#remote-table tr[data-connection]');
  const remoteRow = await page.$eval('#remote-table tr[data-connection]', (r) => ({ text: r.textContent, tools: r.querySelector('[data-tools]').dataset.tools }));
  check(remoteRow.text.includes(REMOTE_MCP_URL) && remoteRow.text.includes('streamable') && remoteRow.text.includes('bearer') && remoteRow.tools === 'docs_search',
    `the remote server's row reads ${JSON.stringify(remoteRow)}`);
  summary.connecting.remote_tools = remoteRow.tools;
  await axeCheck(page, 'integrations with a remote server');
  step('a remote server\'s tool opens its own page and runs there; an agent built with it keeps it through two saves');
  const remoteID = await page.getAttribute('#remote-table tr[data-connection]', 'data-connection');
  await page.click('#remote-table a[href="/tools/docs_search"]');
  await page.waitForSelector('#try-fields .field, #not-found');
  check(!(await page.$('#not-found')) && (await page.textContent('#tool-title')) === 'search', `the remote tool's link opened ${await page.textContent('#main')}`);
  check((await page.inputValue('#try-conn')) === remoteID, 'Try it on the remote tool does not run on its server');
  await page.fill('[data-path=query] input', 'agents');
  await page.click('#try-run');
  await confirmInPage(page); // the server gave no hints: MCP's default is a destructive tool
  await page.waitForSelector('#try-result:not([hidden])');
  check((await page.textContent('#try-output')).includes('found: agents'), `Try it on the remote tool answered ${await page.textContent('#try-output')}`);
  await page.goto(`${BASE}/agents/new`);
  await page.waitForSelector('#pick-docs_search', { state: 'attached' });
  check((await page.textContent('[data-provider=docs] > summary')).includes('docs'), 'the builder has no group for the remote server');
  await page.fill('#agent-name', 'Docs helper');
  await page.fill('#tool-search', 'docs_search');
  await page.check('#pick-docs_search');
  await page.fill('#tool-search', '');
  const savedAgent = async (version) => {
    await page.evaluate(() => { document.querySelector('#flash').textContent = ''; });
    await page.click('#agent-save');
    await waitUntil(page, () => document.querySelector('#flash').textContent.startsWith('Saved agent Docs helper'), undefined, 'saving the agent with the remote tool did not say so');
    const id = await page.evaluate(() => location.pathname.split('/').pop());
    const a = await page.evaluate(async (agent) => (await fetch(`/api/agents/${agent}`)).json(), id);
    check(a.version === version && JSON.stringify((a.tools || []).map((t) => [t.tool, t.connection_id])) === JSON.stringify([['docs_search', remoteID]]),
      `the saved agent (version ${a.version}, want ${version}) has the tools ${JSON.stringify(a.tools)}`);
    return id;
  };
  const docsAgent = await savedAgent(1);
  await page.goto(`${BASE}/agents/${docsAgent}`);
  await page.waitForSelector('#pick-docs_search', { state: 'attached' });
  check(await page.isChecked('#pick-docs_search'), 'the saved agent\'s remote tool is not ticked in the builder');
  await page.fill('#agent-description', 'Searches the docs');
  await savedAgent(2);
  await page.goto(`${BASE}/`);
  await page.waitForSelector('#remote-table tr[data-connection]');
  check(!(await page.$('#catalog [data-provider=docs]')), 'the remote server is offered as a provider card to connect');
  await page.click('button[aria-label="Remove the remote MCP server docs"]');
  await confirmInPage(page);
  await waitUntil(page, () => !document.querySelector('#remote-table'), undefined, 'the removed remote server is still listed');
  check(await page.evaluate(() => document.activeElement && document.activeElement.id === 'remote-title'), 'after removing the server, focus dropped to the page body');
  step('the agent whose remote server was removed still shows its tool in the builder, as disconnected');
  await page.goto(`${BASE}/agents/${docsAgent}`);
  await page.waitForSelector('#agent-missing:not([hidden])');
  check((await page.$$('[data-provider=unlisted] [data-missing=docs_search]')).length === 1 && !(await page.isChecked('#pick-docs_search')),
    'the builder does not show the removed server\'s tool, unticked and marked disconnected');
  const dropped = await page.evaluate(async (id) => (await fetch(`/api/agents/${id}`, { method: 'DELETE', headers: { 'X-CSRF-Token': document.querySelector('meta[name="csrf-token"]').content } })).status, docsAgent);
  check(dropped === 204, `deleting the agent with the remote tool answered ${dropped}`);
  await page.goto(`${BASE}/`);
  await page.waitForSelector('#remote-list >> text=No remote MCP server yet.');
  await audit(page, 'integrations');
  await shot(page, '02-integrations');

  let agentURL = '';
  let agentKeyForLater = '';
  {
  step('build an agent with two tools');
  await page.click('nav >> text=Agents');
  await page.click('#new-agent');
  await page.waitForSelector('#pick-github_create_issue', { state: 'attached' });
  await page.fill('#agent-name', 'Triage bot');
  await page.fill('#agent-description', 'Files and reads issues');
  await page.fill('#agent-instructions', 'Be brief.');
  await page.selectOption('#agent-confirm', 'destructive');
  await page.selectOption('#agent-toolmode', 'all');
  check(!(await page.isVisible('#pick-github_create_issue')), 'the provider groups of the picker are not folded');
  await page.fill('#tool-search', 'create issue');
  check(!(await page.isVisible('[data-tool=github_get_pull_request]')), 'the tool search did not hide a non-matching tool');
  await page.check('#pick-github_create_issue');
  await page.fill('#tool-search', 'get issue');
  await page.check('#pick-github_get_issue');
  await page.fill('#tool-search', '');
  check((await page.textContent('[data-provider=github] > summary')).includes('2 of'), 'the GitHub group does not count its selected tools');
  check((await page.textContent('[data-tool=github_create_issue] .params')).includes('title'), 'the create_issue parameters do not list title');
  check((await page.getAttribute('[data-tool=github_create_issue] a[href="/tools/github_create_issue"]', 'target')) === '_blank', 'Try it in the builder does not open a new tab, so it would lose the picks');
  check((await page.textContent('#selection')).includes('github_create_issue'), 'the selection summary does not name the picked tool');
  step('leaving with unsaved changes asks first');
  dialogs.length = 0;
  await page.click('nav >> text=Activity');
  await page.waitForURL(`${BASE}/activity`);
  check(dialogs.includes('beforeunload'), `leaving the builder with unsaved picks did not ask (dialogs: ${dialogs.join(', ')})`);
  await page.goBack();
  step('a new agent left at "Workspace default" inherits the workspace\'s catalog setting');
  // The workspace offers tools of accounts not connected: a new agent that keeps the
  // default offers them too, so a Notion tool (none connected) can be picked until
  // "Not offered" is chosen.
  const workspace = await pageAPI(page, 'GET', '/api/mcp-settings');
  check(workspace.status === 200 && workspace.body.catalog === 'connected', `the workspace's MCP settings: ${JSON.stringify(workspace)}`);
  const { confirm, approval, tool_mode, run_tools } = workspace.body;
  const offered = await pageAPI(page, 'PUT', '/api/mcp-settings', { confirm, approval, tool_mode, run_tools, catalog: 'all' });
  check(offered.status === 200 && offered.body.catalog === 'all', `offering the catalog in the workspace: ${JSON.stringify(offered)}`);
  await page.goto(`${BASE}/agents/new`);
  await page.waitForSelector('#pick-notion_search', { state: 'attached' });
  check(!(await page.isDisabled('#pick-notion_search')), 'a new agent inheriting the workspace\'s "offered" cannot pick a Notion tool (none connected)');
  check(await page.inputValue('#agent-catalog') === '' && (await page.textContent('#agent-catalog option[value=""]')).includes('(offered)'),
    'a new agent\'s catalog setting does not start at "Workspace default (offered)" in a workspace that offers it');
  await page.selectOption('#agent-catalog', 'connected');
  check(await page.isDisabled('#pick-notion_search'), 'a Notion tool (none connected) can be picked with "Not offered" chosen');
  await page.selectOption('#agent-catalog', '');
  check(!(await page.isDisabled('#pick-notion_search')), 'back at "Workspace default", a Notion tool (none connected) cannot be picked');
  const restored = await pageAPI(page, 'PUT', '/api/mcp-settings', { confirm, approval, tool_mode, run_tools, catalog: 'connected' });
  check(restored.status === 200 && restored.body.catalog === 'connected', `the workspace's catalog setting put back: ${JSON.stringify(restored)}`);
  await page.goto(`${BASE}/agents/new`);
  await page.waitForSelector('#pick-github_create_issue', { state: 'attached' });
  check((await page.textContent('#agent-catalog option[value=""]')).includes('(not offered)'), 'the default catalog option does not say the workspace does not offer it');
  await page.fill('#agent-name', 'Triage bot');
  await page.fill('#agent-description', 'Files and reads issues');
  await page.fill('#agent-instructions', 'Be brief.');
  await page.selectOption('#agent-confirm', 'destructive');
  await page.selectOption('#agent-toolmode', 'all');
  await page.selectOption('#agent-catalog', 'all');
  // Offered, a tool of a provider connected with OAuth and not connected yet can be picked.
  check(!(await page.isDisabled('#pick-notion_search')) && (await page.textContent('[data-tool=notion_search]')).includes('asks the person to connect'),
    'with tools of accounts not connected offered, a Notion tool (none connected) cannot be picked');
  await page.selectOption('#agent-catalog', '');
  check(await page.isDisabled('#pick-notion_search'), 'a Notion tool (none connected) can be picked while the agent does not offer it');
  await page.selectOption('#agent-catalog', 'all');
  await page.fill('#tool-search', 'create issue');
  await page.check('#pick-github_create_issue');
  await page.fill('#tool-search', 'get issue');
  await page.check('#pick-github_get_issue');
  await page.fill('#tool-search', '');
  // Two picked, and the run tools the destructive confirm policy brings (the URL's own
  // list is compared with the estimate once the agent is saved).
  await waitUntil(page, () => document.querySelector('#token-estimate').textContent.startsWith('2 selected') && Number(document.querySelector('#token-estimate').dataset.served) > 2,
    undefined, 'the estimate does not count the run tools besides the 2 picked');
  summary.builder.estimate = await page.textContent('#token-estimate');
  summary.builder.estimated_tools = Number(await page.getAttribute('#token-estimate', 'data-served'));
  summary.builder.estimated_tokens = Number(await page.getAttribute('#token-estimate', 'data-tokens'));
  await page.click('#agent-save');
  await page.waitForSelector('#agent-connect:not([hidden])');
  agentURL = await page.inputValue('#agent-mcp-url');
  check(/\/mcp\/default\/agents\/[^/]+$/.test(agentURL), `the agent's MCP URL is ${agentURL}`);
  const savedCatalog = await page.evaluate(async (u) => (await (await fetch(`/api/agents/${u.split('/').pop()}`)).json()).catalog, agentURL);
  check(savedCatalog === 'all', `the builder saved the agent's catalog setting as ${savedCatalog}`);
  summary.agent_mcp_url = agentURL;
  await page.click('[data-copy=agent-mcp-url]');
  summary.clipboard = await page.evaluate(() => navigator.clipboard.readText());
  check(summary.clipboard === agentURL, `the clipboard holds ${summary.clipboard}, not the MCP URL`);
  await page.click('#agent-new-key');
  await page.waitForSelector('#agent-key-box:not([hidden])');
  const agentKey = await page.inputValue('#agent-key');
  agentKeyForLater = agentKey;
  check(agentKey.startsWith('sbk_'), 'no agent API key was shown');
  await page.waitForSelector('#agent-keys li');
  check((await page.textContent('#agent-keys')).includes(agentKey.split('_')[1]), "the agent's key list lacks the new key");
  for (const id of ['claude', 'claudecode', 'cursor', 'curl']) {
    const text = await page.textContent(`#snippets-${id}`);
    check(text.includes(agentURL) && text.includes(agentKey), `the ${id} snippet lacks the URL or the key`);
  }
  // One client's configuration open at a time; opening another and copying it works.
  check((await page.$$('#snippets details[open]')).length === 1, 'the client configurations are not folded to one open');
  await page.click('#snippets-vscode-title');
  await page.click('button[data-copy=snippets-vscode]');
  await waitUntil(page, () => document.querySelector('button[data-copy=snippets-vscode]').textContent === 'Copied', null, 'the VS Code configuration\'s Copy does not say Copied');
  check((await page.evaluate(() => navigator.clipboard.readText())) === await page.textContent('#snippets-vscode'), 'Copy copied something else than the VS Code configuration');
  const claudeCode = await page.textContent('#snippets-claudecode');
  check(claudeCode.startsWith('claude mcp add --transport http triage-bot '), `the Claude Code snippet reads ${claudeCode}`);
  const vscode = JSON.parse(await page.textContent('#snippets-vscode'));
  check(vscode.inputs && vscode.inputs[0].password === true && vscode.servers['triage-bot'].url === agentURL &&
    vscode.servers['triage-bot'].headers.Authorization === `Bearer \${input:${vscode.inputs[0].id}}` && !JSON.stringify(vscode).includes(agentKey),
  `the VS Code snippet does not prompt for the key, or writes it into the file: ${JSON.stringify(vscode)}`);
  // The curl snippet, run as it is, lists the tools and calls one.
  const curlOut = execFileSync('bash', ['-c', await page.textContent('#snippets-curl')], { encoding: 'utf8', timeout: 30000 });
  check(curlOut.includes('"github_create_issue"') && /"id":3,"result"/.test(curlOut.replace(/\s/g, '')), `the curl snippet printed ${curlOut.slice(0, 500)}`);
  // The estimate counted what the agent's URL really lists.
  const served = await mcpList(agentURL, agentKey);
  summary.builder.served_tools = served.length;
  summary.builder.served_tokens = served.reduce((n, t) => n + Math.ceil(JSON.stringify(t).length / 4), 0);
  check(served.length === summary.builder.estimated_tools, `the builder estimated ${summary.builder.estimated_tools} tools; the URL lists ${served.length}`);
  check(Math.abs(summary.builder.served_tokens - summary.builder.estimated_tokens) <= summary.builder.served_tokens * 0.1,
    `the builder estimated ${summary.builder.estimated_tokens} tokens; the URL's list is about ${summary.builder.served_tokens}`);
  await audit(page, 'agent builder');
  await page.evaluate(() => document.querySelectorAll('#tool-picker details.group').forEach((d) => { d.open = false; }));
  await shot(page, '03-agent');
  await page.reload();
  await page.waitForSelector('#pick-github_create_issue', { state: 'attached' });
  check(await page.isChecked('#pick-github_create_issue') && await page.isChecked('#pick-github_get_issue'), 'the saved agent does not show its two tools after a reload');
  check(!(await page.content()).includes(agentKey), 'the agent key is still in the page after a reload');
  step('the builder stays short and Save stays near with GitHub and Slack open');
  check(!(await page.isVisible('#pick-github_create_issue')), 'the saved agent\'s groups are not folded on load');
  check((await page.textContent('[data-provider=github] > summary')).includes('2 of'), 'the folded GitHub group does not count its picked tools');
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.click('[data-provider=github] > summary');
  await page.click('[data-provider=slack] > summary');
  summary.builder.height = await page.evaluate(() => document.documentElement.scrollHeight);
  check(summary.builder.height <= 9000, `with GitHub and Slack open the builder is ${summary.builder.height} px tall`);
  await page.focus('#tool-search');
  let tabs = 0;
  for (; tabs < 40; tabs++) {
    if (await page.evaluate(() => document.activeElement && document.activeElement.id === 'agent-save')) break;
    await page.keyboard.press('Tab');
  }
  summary.builder.tabs_to_save = tabs;
  check(tabs <= 3, `Save is ${tabs} Tab presses from the tool search with GitHub and Slack open`);
  await page.evaluate(() => document.querySelector('[data-provider=slack] .pick:last-child').scrollIntoView());
  const bar = await page.evaluate(() => { const r = document.querySelector('#agent-save').getBoundingClientRect(); return { top: r.top, bottom: r.bottom, h: window.innerHeight }; });
  check(bar.top >= 0 && bar.bottom <= bar.h, `scrolled to the last Slack tool, Save is off screen (${JSON.stringify(bar)})`);
  await axeCheck(page, 'agent builder open');
  await page.setViewportSize({ width: 1280, height: 900 });
  step('the agents list shows tools, keys, last use, copy and delete per row');
  await page.goto(`${BASE}/agents`);
  await page.waitForSelector('#agents-table tr[data-agent]');
  const agentRow = '#agents-table tr[data-agent]';
  check((await page.getAttribute(`${agentRow} [data-keys]`, 'data-keys')) === '1', `the agents list counts ${await page.getAttribute(`${agentRow} [data-keys]`, 'data-keys')} keys`);
  await page.click('button[aria-label="Copy the MCP URL of Triage bot"]');
  // The button says so once the clipboard's promise settles, not at the click.
  await waitUntil(page, () => document.querySelector('button[aria-label="Copy the MCP URL of Triage bot"]').textContent === 'Copied', null,
    'the copy button does not say Copied');
  check((await page.evaluate(() => navigator.clipboard.readText())) === agentURL, 'the agents list copied something else than the MCP URL');
  check(await page.isVisible('button[aria-label="Delete the agent Triage bot"]'), 'the agents list has no delete button on the row');
  await audit(page, 'agents list');

  }

  step('run a tool from Try it');
  await page.goto(`${BASE}/tools/github_create_issue`);
  await page.waitForSelector('#try-fields .field');
  await page.click('#try-run');
  await page.waitForSelector('#try-error:not([hidden])');
  check((await page.textContent('#try-error')).includes('owner'), `a missing argument was not named: ${await page.textContent('#try-error')}`);
  await page.fill('[data-path=owner] input', 'octo-org');
  await page.fill('[data-path=repo] input', 'hello-world');
  await page.fill('[data-path=title] input', 'Filed from Try it');
  await page.fill('[data-path=body] textarea, [data-path=body] input', 'Made in a browser');
  await page.click('[data-path=labels] button');
  await page.fill('[data-path="labels[0]"] input', 'bug');
  // A second item, removed again: focus stays in the list, not on the page body.
  await page.click('[data-path=labels] > button');
  await page.click('[data-path="labels[1]"] + button');
  check(await page.evaluate(() => document.activeElement && document.activeElement !== document.body && !!document.activeElement.closest('[data-path=labels]')),
    'removing an array item dropped focus to the page body');
  check((await page.$$('[data-path=labels] .item')).length === 1, 'removing the second label did not remove it alone');
  // Raw JSON mode carries the form's arguments across, and back.
  await page.check('#try-mode-json');
  const asJSON = JSON.parse(await page.inputValue('#try-json'));
  check(asJSON.owner === 'octo-org' && asJSON.labels[0] === 'bug', `the JSON mode holds ${JSON.stringify(asJSON)}`);
  await page.check('#try-mode-form');
  step('a write tool asks first, in the page, with its arguments; Cancel runs nothing');
  await page.click('#try-run');
  await page.waitForSelector('#confirm-dialog[open]');
  check((await page.textContent('#confirm-title')) === 'Run github_create_issue?' && (await page.textContent('#confirm-details')).includes('"Filed from Try it"'),
    `the confirmation before a write says ${await page.textContent('#confirm-dialog')}`);
  check(await page.evaluate(() => document.activeElement && document.activeElement.id === 'confirm-cancel'), 'the confirmation does not start on Cancel');
  await axeCheck(page, 'try it confirmation');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#confirm-dialog', { state: 'hidden' });
  await waitUntil(page, () => document.activeElement && document.activeElement.id === 'try-run', null, 'Escape on the confirmation did not return focus to Run');
  check(await page.isHidden('#try-result'), 'Escape on the confirmation ran the tool');
  await page.click('#try-run');
  await confirmInPage(page, 'cancel');
  check(await page.isHidden('#try-result'), 'a write tool ran after its confirmation was canceled');
  await page.click('#try-run');
  await confirmInPage(page);
  await page.waitForSelector('#try-result:not([hidden])');
  check(/^Took [\d,]+ ms\.$/.test(await page.textContent('#try-duration')), `the result has no duration: ${await page.textContent('#try-duration')}`);
  check((await page.$$('#try-links a[href^="https://"]')).length > 0, 'the result\'s links are not clickable');
  check(await page.isVisible('#try-result button[data-copy=try-output]'), 'the result has no Copy button');
  const out = JSON.parse(await page.textContent('#try-output'));
  check(out.title === 'Filed from Try it' && out.number > 0, `the result is ${JSON.stringify(out)}`);
  summary.try_result = { number: out.number, title: out.title };
  await page.check('#try-async');
  await page.click('#try-run');
  await confirmInPage(page);
  await page.waitForFunction(() => /"state": "(completed|failed|canceled)"/.test(document.querySelector('#try-output').textContent));
  const run = JSON.parse(await page.textContent('#try-output'));
  check(run.state === 'completed' && run.output && run.output.title === 'Filed from Try it', `the async run ended as ${JSON.stringify(run)}`);
  summary.run_id = run.run_id;
  await audit(page, 'try it');
  await shot(page, '04-try-it');

  step('Try it: a call that takes long shows it is busy, and Cancel really cancels it');
  await page.goto(`${BASE}/tools/github_search_repositories`);
  await page.waitForSelector('#try-fields .field');
  await page.fill('[data-path=q] input', 'hold-until-canceled');
  await page.click('#try-run');
  await page.waitForSelector('#try-cancel:not([hidden])');
  const busyState = await page.evaluate(() => ({ busy: document.querySelector('#try-form').getAttribute('aria-busy'), said: document.querySelector('#try-busy').textContent,
    run: document.querySelector('#try-run').disabled, focus: document.activeElement && document.activeElement.id }));
  check(busyState.busy === 'true' && busyState.said.startsWith('Running github_search_repositories') && busyState.run && busyState.focus === 'try-cancel',
    `while the call runs the form is ${JSON.stringify(busyState)}`);
  await axeCheck(page, 'try it busy');
  await page.click('#try-cancel');
  await page.waitForSelector('#try-error:not([hidden])');
  const canceledText = await page.textContent('#try-error');
  check(canceledText.startsWith('Canceled') && await page.isHidden('#try-cancel') && !(await page.isDisabled('#try-run')) && (await page.getAttribute('#try-form', 'aria-busy')) === 'false',
    `after Cancel the page says ${canceledText}`);
  // The hub gave up the upstream request and audited the call as canceled (the writer
  // batches: the event may land a moment later).
  let canceledEvents = [];
  for (let i = 0; i < 60 && !canceledEvents.length; i++) {
    canceledEvents = await page.evaluate(async () => (await (await fetch('/api/audit?tool=github_search_repositories&outcome=canceled')).json()).events || []);
    if (!canceledEvents.length) await page.waitForTimeout(250);
  }
  check(canceledEvents.length === 1, `the canceled call is audited ${canceledEvents.length} times as canceled`);
  summary.cancel = { text: canceledText, audited: canceledEvents.length ? canceledEvents[0].outcome : '' };

  step('see the call in Activity');
  await page.click('nav >> text=Activity');
  await page.waitForSelector('#audit-rows tr[data-event]');
  await page.fill('#f-tool', 'create_iss'); // a part of the name matches
  await page.selectOption('#f-outcome', 'ok');
  // The call and the async run, each audited; the audit writer batches, so a row may
  // land a moment after its call.
  let rows = [];
  for (let i = 0; i < 40 && rows.length < 2; i++) {
    await page.click('#audit-filters button[type=submit]');
    await page.waitForFunction(() => !document.querySelector('#audit-rows').textContent.includes('Loading'));
    await page.waitForTimeout(250);
    rows = await page.$$eval('#audit-rows tr[data-event]', (trs) => trs.map((t) => t.textContent));
  }
  check(rows.length === 2 && rows.every((r) => r.includes('ok') && r.includes('ms')), `Activity shows ${JSON.stringify(rows)}, want the call and the run`);
  const filtered = new URL(page.url());
  check(filtered.searchParams.get('tool') === 'create_iss' && filtered.searchParams.get('outcome') === 'ok', `the filters are not in the URL: ${page.url()}`);
  await page.reload();
  await page.waitForSelector('#audit-rows tr[data-event]');
  check((await page.inputValue('#f-tool')) === 'create_iss' && (await page.$$('#audit-rows tr[data-event]')).length === 2, 'a reload lost the filters');
  check(!/\b(agt|con|key|usr)_[A-Za-z0-9]/.test(await page.textContent('#audit-rows')), 'Activity shows raw ids instead of names');
  check((await page.$$eval('#f-kind option', (os) => os.length)) > 20, 'the event filter does not list every kind');
  await page.waitForSelector('#runs table');
  const runsText = await page.textContent('#runs');
  check(runsText.includes(summary.run_id) && runsText.includes('completed'), `Activity's runs show ${runsText}`);
  await page.click(`button[aria-label="Output of run ${summary.run_id}"]`);
  await page.waitForSelector('#audit-detail[open] #run-output');
  check((await page.textContent('#run-output')).includes('Filed from Try it'), 'the run\'s output is not shown');
  await axeCheck(page, 'activity run output');
  await page.keyboard.press('Escape');
  await page.click('#audit-rows tr[data-event] button');
  await page.waitForSelector('#audit-detail[open]');
  const detail = await page.textContent('#audit-detail-list');
  check(detail.includes('github_create_issue') && detail.includes('Latency'), `the detail view shows ${detail}`);
  await axeCheck(page, 'activity event detail');
  await shot(page, '05-activity');
  await page.keyboard.press('Escape');
  await audit(page, 'activity');

  step('Try it on a destructive tool the policy holds is one step; a call that would fail is named before anyone is asked');
  await page.click('nav >> text=Settings');
  // The defaults are enabled once the page has filled them with the saved values.
  await page.waitForSelector('#defaults-form:not([aria-busy]) #default-approval:enabled');
  await page.selectOption('#default-confirm', 'destructive');
  await page.selectOption('#default-approval', 'person');
  await page.click('#defaults-form button[type=submit]');
  await page.waitForFunction(() => document.querySelector('#flash').textContent.includes('Saved the defaults'));
  await page.goto(`${BASE}/tools/github_update_issue`);
  await page.waitForSelector('#try-fields .field');
  await page.fill('[data-path=owner] input', 'octo-org');
  await page.fill('[data-path=repo] input', 'hello-world');
  await page.fill('[data-path=issue_number] input', '1347');
  await page.click('#try-run');
  await page.waitForSelector('#try-error:not([hidden])');
  check((await page.textContent('#try-error')).includes('at least one field to change') && !(await page.$('#confirm-dialog[open]')),
    `an update that changes nothing said ${await page.textContent('#try-error')}, or asked for a confirmation first`);
  await page.selectOption('[data-path=state] select', '"closed"');
  await page.click('#try-run');
  const asked = await confirmInPage(page);
  check(!/con_[a-z0-9]/.test(asked.text) && asked.text.includes('"state": "closed"'), `the confirmation names the connection by id or leaves out the arguments: ${asked.text}`);
  await page.waitForFunction(() => /"state": "(completed|failed|canceled|input_required)"/.test(document.querySelector('#try-output').textContent));
  const oneStep = JSON.parse(await page.textContent('#try-output'));
  check(oneStep.state === 'completed' && oneStep.output && oneStep.output.state === 'closed' && (await page.isHidden('#try-error')),
    `after one confirmation the call is ${JSON.stringify(oneStep)}; the page says ${await page.textContent('#try-error')}`);
  check(!/tick "Run in the background"|waits for a person's confirmation/.test(await page.textContent('body')), 'Try it still sends the person to "Run in the background" or to an approval page');

  step('a person approves a run a script started on its approval page, which names the account and shows the arguments whole');
  const longBody = 'Steps to reproduce. '.repeat(120).trim();
  const waiting = await page.evaluate(async (body) => (await fetch('/api/runs', { method: 'POST', credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': document.querySelector('meta[name="csrf-token"]').content },
    body: JSON.stringify({ tool: 'github_update_issue', arguments: { owner: 'octo-org', repo: 'hello-world', issue_number: 1347, state: 'closed', body } }) })).json(), longBody);
  waiting.run_id = waiting.run_id || waiting.id;
  check(waiting.state === 'input_required' && waiting.approval_url === `${BASE}/approvals/${waiting.run_id}`, `the waiting run is ${JSON.stringify(waiting)}`);
  await page.click('nav >> text=Activity');
  await page.click(`#pending-approvals a[href="/approvals/${waiting.run_id}"]`);
  await page.waitForSelector('#approval-arguments');
  const shownArgs = JSON.parse(await page.textContent('#approval-arguments'));
  check(shownArgs.state === 'closed' && shownArgs.body === longBody, `the approval page shows the arguments ${JSON.stringify(shownArgs).slice(0, 200)}…, not whole`);
  check(!/con_[a-z0-9]/.test(await page.textContent('main')), `the approval page names the connection by id: ${await page.textContent('main')}`);
  await audit(page, 'approval');
  await shot(page, '05b-approval');
  await page.click('button[value=accept]');
  await page.waitForSelector('#approval-state');
  check((await page.textContent('#approval-state')).includes('Approved'), `after approving, the page says ${await page.textContent('#approval-state')}`);
  let approved = {};
  for (let i = 0; i < 40 && approved.state !== 'completed'; i++) {
    approved = await page.evaluate(async (id) => (await fetch(`/api/runs/${id}`, { credentials: 'same-origin' })).json(), waiting.run_id);
    if (approved.state !== 'completed') await page.waitForTimeout(100);
  }
  check(approved.state === 'completed' && approved.output && approved.output.state === 'closed', `the approved run is ${JSON.stringify(approved)}`);
  summary.approved_run_id = waiting.run_id;

  step("a person answers, on the approval page, the question a workflow run's step asks them");
  const api = (method, path, body) => pageAPI(page, method, path, body);
  const askDef = 'name: ask_person\nsteps:\n  - name: approval\n    input:\n      message: Approve the purchase of a laptop?\n' +
    '      schema: {type: object, properties: {approval_status: {type: string, enum: [approved, rejected], title: Decision}, comments: {type: string, title: Comments}}, required: [approval_status, comments]}\n' +
    'outputs: {approval_status: "${{ steps.approval.output.approval_status }}", comments: "${{ steps.approval.output.comments }}"}\n';
  const savedAsk = await api('POST', '/api/workflows', { definition: askDef });
  check(savedAsk.status === 201, `saving the asking workflow: ${JSON.stringify(savedAsk)}`);
  const askRun = await api('POST', '/api/workflows/ask_person/runs', { parameters: {} });
  const askID = askRun.body && (askRun.body.run_id || askRun.body.id);
  let asking = {};
  for (let i = 0; i < 100 && asking.state !== 'input_required'; i++) {
    asking = (await api('GET', `/api/runs/${askID}`)).body || {};
    if (asking.state !== 'input_required') await page.waitForTimeout(100);
  }
  check(asking.state === 'input_required', `the asking run is ${JSON.stringify(asking)}`);
  await page.goto(`${BASE}/approvals/${askID}`);
  await page.waitForSelector('#field-approval_status');
  await audit(page, 'flow question');
  await shot(page, '05c-flow-question');
  await page.selectOption('#field-approval_status', 'approved');
  await page.fill('#field-comments', 'Within budget');
  await page.click('button[value=accept]');
  let answered = {};
  for (let i = 0; i < 100 && answered.state !== 'completed'; i++) {
    answered = (await api('GET', `/api/runs/${askID}`)).body || {};
    if (answered.state !== 'completed') await page.waitForTimeout(100);
  }
  check(answered.state === 'completed' && answered.output && answered.output.outputs && answered.output.outputs.approval_status === 'approved' &&
    answered.output.outputs.comments === 'Within budget', `the answered run is ${JSON.stringify(answered)}`);
  await page.click('nav >> text=Settings');
  // The defaults are enabled once the page has filled them with the saved values.
  await page.waitForSelector('#defaults-form:not([aria-busy]) #default-approval:enabled');
  await page.selectOption('#default-confirm', 'never');
  await page.selectOption('#default-approval', 'relay');
  await page.click('#defaults-form button[type=submit]');
  await page.waitForFunction(() => document.querySelector('#flash').textContent.includes('Saved the defaults'));

  step('create and revoke an API key');
  await page.click('nav >> text=Settings');
  await page.fill('#key-name', 'e2e laptop');
  await page.click('#key-form button');
  await page.waitForSelector('#new-key-box:not([hidden])');
  const key = await page.inputValue('#new-key');
  check(key.startsWith('sbk_'), 'the new key was not shown');
  const before = await fetch(`${BASE}/api/tenant`, { headers: { Authorization: `Bearer ${key}` } });
  check(before.status === 200, `the new key was refused before revocation: ${before.status}`);
  const prefix = key.split('_')[1];
  const keyRow = await page.$eval(`#keys-table tr:has(th:text-is("e2e laptop"))`, (r) => ({ expires: r.querySelector('[data-expires]').dataset.expires, text: r.textContent }));
  check(keyRow.expires !== '' && keyRow.text.includes('you'), `the new key's row has no expiry or does not name its owner: ${JSON.stringify(keyRow)}`);
  check(!(await page.textContent('#keys-table')).includes('agt_') && !(await page.textContent('#keys-table')).includes('usr_'), 'the key table shows raw ids instead of names');
  await page.click(`button[aria-label^="Revoke key e2e laptop"]`);
  await confirmInPage(page);
  await page.waitForFunction((p) => [...document.querySelectorAll('#keys-table tr')].some((r) => r.textContent.includes(p) && r.textContent.includes('revoked')), prefix);
  const after = await fetch(`${BASE}/api/tenant`, { headers: { Authorization: `Bearer ${key}` } });
  check(after.status === 401, `the revoked key still answers ${after.status}`);
  summary.revoked_prefix = prefix;

  step('an MCP client connects by OAuth: the signed-in person allows it, it shows in Connected apps, revoking it refuses its token');
  {
    const redirect = MCP_CLIENT_REDIRECT; // nothing listens: the browser's redirect is caught below
    const reg = await (await fetch(`${BASE}/oauth/register`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: 'E2E desktop client', redirect_uris: [redirect], token_endpoint_auth_method: 'none' }) })).json();
    const verifier = crypto.randomBytes(32).toString('base64url');
    const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
    const mcpURL = `${BASE}/mcp/default`;
    const q = new URLSearchParams({ response_type: 'code', client_id: reg.client_id, redirect_uri: redirect, code_challenge: challenge,
      code_challenge_method: 'S256', state: 'e2e-state', scope: 'mcp', resource: mcpURL });
    let back;
    await page.route(`${redirect}**`, (route) => { back = new URL(route.request().url()); return route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the client' }); });
    await page.goto(`${BASE}/oauth/authorize?${q}`);
    check((await page.textContent('h1')).includes('Allow E2E desktop client to use Switchboard?'), 'the consent page does not name the client');
    check((await page.textContent('main')).includes('127.0.0.1:9'), 'the consent page does not say where the browser goes back to');
    await axeCheck(page, 'consent page');
    await page.click('button.allow');
    await page.waitForFunction(() => document.body.textContent.includes('back at the client'));
    check(back && back.searchParams.get('state') === 'e2e-state' && back.searchParams.get('code'), `the consent did not send a code back: ${back}`);
    const tok = await (await fetch(`${BASE}/oauth/token`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code'), redirect_uri: redirect, client_id: reg.client_id, code_verifier: verifier, resource: mcpURL }) })).json();
    const initialize = async () => (await fetch(mcpURL, { method: 'POST', headers: { Authorization: `Bearer ${tok.access_token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } }) })).status;
    check((await initialize()) === 200, 'the access token was refused at its MCP URL');
    await page.unroute(`${redirect}**`);
    await page.goto(`${BASE}/settings`);
    await page.waitForFunction(() => (document.querySelector('#apps-table') || {}).textContent?.includes('E2E desktop client'));
    await axeCheck(page, 'settings connected apps');
    await page.click(`button[aria-label="Revoke E2E desktop client's access"]`);
    await confirmInPage(page);
    await page.waitForFunction(() => document.querySelector('#flash').textContent.includes("Revoked E2E desktop client's access"));
    check((await initialize()) === 401, 'the revoked app\'s access token still works');
    summary.connected_app_revoked = true;
  }
  check((await page.inputValue('#tenant-mcp-url')) === `${BASE}/mcp/default`, 'Settings shows the wrong tenant MCP URL');
  check((await page.inputValue('#oauth-redirect')) === `${BASE}/oauth/callback`, 'Settings shows the wrong OAuth redirect URI');
  await page.selectOption('#oauth-provider', 'github');
  await page.fill('#oauth-client-id', 'Iv1.e2eclient');
  await page.fill('#oauth-client-secret', OAUTH_SECRET);
  await page.click('#oauth-form button[type=submit]');
  await page.waitForFunction(() => document.querySelector('#oauth-apps').textContent.includes('Iv1.e2eclient'));
  check((await page.inputValue('#oauth-client-secret')) === '', 'the OAuth client secret stayed in the form');
  await page.selectOption('#default-toolmode', 'search');
  await page.selectOption('#default-runtools', 'on');
  await page.selectOption('#default-catalog', 'all');
  await page.click('#defaults-form button[type=submit]');
  await page.waitForFunction(() => document.querySelector('#flash').textContent.includes('Saved the defaults'));
  await page.reload();
  await page.waitForFunction(() => document.querySelector('#default-toolmode').value === 'search');
  check((await page.inputValue('#default-runtools')) === 'on', 'the saved run-tools default did not come back');
  check((await page.inputValue('#default-catalog')) === 'all', 'the saved catalog default did not come back');
  await page.selectOption('#default-toolmode', 'all');
  await page.selectOption('#default-runtools', 'auto');
  await page.selectOption('#default-catalog', 'connected');
  await page.click('#defaults-form button[type=submit]');
  await page.waitForFunction(() => document.querySelector('#flash').textContent.includes('Saved the defaults'));
  step('change a member\'s role and remove them');
  const grace = await page.evaluate(async () => {
    const csrf = document.querySelector('meta[name="csrf-token"]').content;
    const r = await fetch('/api/users', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }, body: JSON.stringify({ email: 'grace@e2e.test', role: 'member' }) });
    const b = await r.json();
    return { status: r.status, id: b.id, key: b.api_key && b.api_key.key };
  });
  check(grace.status === 201 && grace.key, `creating a member answered ${grace.status}`);
  await page.reload();
  const graceRole = 'select[aria-label="Role of grace@e2e.test"]';
  await page.waitForSelector(graceRole);
  check((await page.inputValue(graceRole)) === 'member', 'the new member is not shown as a member');
  // The role change asks in the page, saying what it does; declining keeps the role.
  await page.selectOption(graceRole, 'admin');
  await page.waitForSelector('#confirm-dialog[open]');
  check((await page.textContent('#confirm-title')) === 'Make grace@e2e.test admin?' && (await page.textContent('#confirm-body')).includes('manage members'),
    `the role change's confirmation says ${await page.textContent('#confirm-dialog')}`);
  await axeCheck(page, 'role change confirmation');
  await confirmInPage(page, 'cancel');
  // The dialog's close event comes a moment after it is hidden: wait for its effects.
  await waitUntil(page, (sel) => document.querySelector(sel).value === 'member' && document.activeElement === document.querySelector(sel), graceRole,
    'declining the role change\'s confirmation did not keep the role, or focus left the select');
  step('a role change confirmed on a stale page changes nothing, and says so next to the members');
  // Someone else promotes grace meanwhile (another tab of the same admin).
  const behind = await page.evaluate(async (id) => (await fetch(`/api/users/${id}`, { method: 'PATCH', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': document.querySelector('meta[name="csrf-token"]').content },
    body: JSON.stringify({ role: 'admin', from: 'member' }) })).status, grace.id);
  check(behind === 200, `the change behind the page's back answered ${behind}`);
  // The API refuses a change of one's own role that does not carry the confirmation.
  const unconfirmed = await page.evaluate(async () => { const r = await fetch(`/api/users/${document.querySelector('meta[name="user-id"]').content}`, { method: 'PATCH',
    headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': document.querySelector('meta[name="csrf-token"]').content }, body: JSON.stringify({ role: 'admin' }) });
  return { status: r.status, field: ((await r.json()).error || {}).field }; });
  check(unconfirmed.status === 400 && unconfirmed.field === 'from', `an unconfirmed change of one's own role answered ${JSON.stringify(unconfirmed)}`);
  await page.selectOption(graceRole, 'admin'); // the page still shows member
  await confirmInPage(page);
  await page.waitForSelector('#member-error:not([hidden])');
  const stale = await page.textContent('#member-error');
  check(stale.startsWith('Nothing changed') && (await page.textContent('#alert')) === '', `the stale role change said ${stale} (alert: ${await page.textContent('#alert')})`);
  await waitUntil(page, (sel) => document.querySelector(sel) && document.querySelector(sel).value === 'admin', graceRole, 'after the stale change the members table does not show the role as it is');
  // Two changes in a row on the same select, the second before the members are shown
  // anew (their listing is held back here): the second starts from the role the first made.
  let releaseUsers;
  const usersHeld = new Promise((resolve) => { releaseUsers = resolve; });
  const handled = [];
  const holdUsers = (route) => { const done = (route.request().method() === 'GET' ? usersHeld : Promise.resolve()).then(() => route.continue()); handled.push(done); return done; };
  await page.route('**/api/users', holdUsers);
  await page.selectOption(graceRole, 'member');
  await confirmInPage(page);
  await page.waitForFunction(() => document.querySelector('#flash').textContent.includes('grace@e2e.test is now member'));
  check(await page.isHidden('#member-error'), 'the stale change\'s error stayed after a later success');
  await page.selectOption(graceRole, 'admin');
  const second = await confirmInPage(page);
  check(second.text.includes('from member to admin'), `the second change of the same select asked ${second.text}`);
  await waitUntil(page, () => document.querySelector('#flash').textContent.includes('grace@e2e.test is now admin') || !document.querySelector('#member-error').hidden, undefined,
    'the second change of the same select gave no answer');
  check(await page.isHidden('#member-error'), `the second change of the same select was refused: ${await page.textContent('#member-error')}`);
  releaseUsers();
  await Promise.all(handled);
  await page.unroute('**/api/users', holdUsers);
  summary.roles = { stale, unconfirmed };
  await page.reload();
  await page.waitForSelector(graceRole);
  check((await page.inputValue(graceRole)) === 'admin', 'after a reload the members table does not show the new role');
  const roleNow = await (await fetch(`${BASE}/api/users`, { headers: { Authorization: `Bearer ${grace.key}` } })).json();
  check((roleNow.users || []).length > 1, "the promoted member's key does not list every member, as an admin's does");
  await audit(page, 'settings');
  await shot(page, '06-settings');
  await page.click('button[aria-label="Remove grace@e2e.test"]');
  await confirmInPage(page);
  await page.waitForFunction(() => !document.querySelector('#members-table').textContent.includes('grace@e2e.test'));
  await page.waitForFunction((id) => !document.querySelector('#key-list').textContent.includes(id), grace.id);
  const removedKey = await fetch(`${BASE}/api/tenant`, { headers: { Authorization: `Bearer ${grace.key}` } });
  check(removedKey.status === 401, `the removed member's key still answers ${removedKey.status}`);
  summary.member = { promoted: 'admin', removed: true };
  step('invite someone, then revoke the invitation');
  await page.fill('#invite-form #invite-email', 'ada@e2e.test');
  await page.click('#invite-form button[type=submit]');
  await page.waitForSelector('button[aria-label="Revoke the invitation of ada@e2e.test"]');
  const firstURL = await page.inputValue('#invite-link');
  step('a second invitation is refused next to its form; resend makes a new link');
  await page.fill('#invite-form #invite-email', 'ada@e2e.test');
  await page.click('#invite-form button[type=submit]');
  await page.waitForSelector('#invite-error:not([hidden])');
  check((await page.textContent('#invite-error')).includes('resend') && (await page.textContent('#alert')) === '', `a duplicate invitation said ${await page.textContent('#invite-error')}`);
  check((await page.$$('#invitations-table tr[data-invitation]')).length === 1, 'a duplicate invitation was listed');
  await page.click('button[aria-label="Resend the invitation of ada@e2e.test"]');
  await confirmInPage(page);
  await waitUntil(page, (old) => document.querySelector('#invite-link').value !== old && document.querySelector('#invite-error').hidden, firstURL, 'resend gave no new link, or the error stayed');
  const inviteURL = await page.inputValue('#invite-link');
  const oldLink = await fetch(firstURL);
  check(oldLink.status === 404, `the resent invitation's old link still answers ${oldLink.status}`);
  await axeCheck(page, 'settings invitations');
  await page.click('button[aria-label="Revoke the invitation of ada@e2e.test"]');
  await confirmInPage(page);
  await page.waitForFunction(() => document.querySelector('#flash').textContent.includes('Revoked the invitation of ada@e2e.test'));
  // The flash comes before the page lists the invitations again: wait for that listing.
  await waitUntil(page, () => !document.querySelector('#invitation-list').textContent.includes('ada@e2e.test'), undefined, 'the revoked invitation is still listed');
  const revokedLink = await fetch(inviteURL);
  check(revokedLink.status === 404, `the revoked invitation's link still answers ${revokedLink.status}`);

  step('a member of the workspace sees only the controls they may use');
  {
    const before = await page.inputValue('#invite-link');
    await page.fill('#invite-form #invite-email', 'mel@e2e.test');
    await page.click('#invite-form button[type=submit]');
    await page.waitForFunction((old) => document.querySelector('#invite-link').value !== old, before);
    const melLink = await page.inputValue('#invite-link');
    const ctxM = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    const pageM = await newPage(ctxM);
    await pageM.goto(melLink);
    await pageM.fill('#password', BETA_PASSWORD);
    await pageM.fill('#confirm', BETA_PASSWORD);
    await pageM.click('button[type=submit]');
    await pageM.waitForURL(`${BASE}/`);
    await pageM.waitForSelector('#connections-table tbody tr');
    // The admin's shared GitHub connection: usable, not theirs to reconnect or disconnect.
    check(!(await pageM.$('#connections-table button')) && await pageM.$('#connections-table [data-shared-by-other]'),
      'a member is offered Reconnect or Disconnect on an admin\'s shared connection');
    await audit(pageM, 'member integrations');
    await pageM.goto(`${BASE}/agents`);
    await pageM.waitForSelector('#agents-table tr[data-agent]');
    check(!(await pageM.$('#agents-table button.danger')) && await pageM.isVisible('#agents-table button[data-copy]'), 'a member is offered Delete on the admin\'s agent, or no Copy');
    await audit(pageM, 'member agents');
    await pageM.click('#agents-table tr[data-agent] th a');
    await pageM.waitForSelector('#agent-readonly:not([hidden])');
    const shown = await pageM.evaluate(() => ['#agent-save', '#agent-delete', '#agent-new-key'].filter((id) => { const n = document.querySelector(id); return n && n.offsetParent !== null; }));
    check(shown.length === 0 && !(await pageM.$('#agent-keys button')), `a member sees ${shown.join(', ')} on the admin's agent`);
    await audit(pageM, 'member agent');
    await ctxM.close();
  }

  step('a narrow window');
  await page.setViewportSize({ width: 390, height: 844 });
  for (const p of ['/', '/agents', '/agents/new', '/activity', '/settings', '/tools/github_create_issue']) {
    await page.goto(BASE + p);
    await page.waitForLoadState('networkidle');
    await audit(page, `narrow ${p}`);
    // Every button of the page's tables can be reached: scrolled into view, it is
    // inside the window.
    const unreachable = await page.evaluate(() => [...document.querySelectorAll('main table button')].filter((b) => {
      b.scrollIntoView({ block: 'center', inline: 'center' });
      const r = b.getBoundingClientRect();
      return r.width === 0 || r.left < 0 || r.right > window.innerWidth || document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) !== b;
    }).map((b) => b.getAttribute('aria-label') || b.textContent));
    check(unreachable.length === 0, `narrow ${p}: table buttons out of reach: ${unreachable.join(', ')}`);
    // Tables read as cards there: none scrolls sideways.
    const sideways = await page.evaluate(() => [...document.querySelectorAll('main .tablewrap')].filter((w) => w.scrollWidth > w.clientWidth + 1).map((w) => w.getAttribute('aria-label')));
    check(sideways.length === 0, `narrow ${p}: tables that scroll sideways: ${sideways.join(', ')}`);
    if (p === '/settings') await shot(page, '09-narrow-settings');
  }
  step('unknown addresses, tools and agents say so on a page of their own');
  for (const [p, heading] of [['/no/such/page', 'Page not found'], ['/tools/github_no_such_tool', 'Tool not found'], ['/agents/agt_nosuchagent', 'Agent not found']]) {
    const res = await page.goto(BASE + p);
    await page.waitForSelector('main h1');
    await waitUntil(page, (h) => document.querySelector('main h1').textContent === h, heading, `${p} does not say ${heading}`);
    check(p !== '/no/such/page' || res.status() === 404, `${p} answered ${res.status()}, want 404`);
    check(await page.isVisible('nav >> text=Agents'), `${p} has no navigation back`);
    await audit(page, `not found ${p}`);
  }
  await page.goto(`${BASE}/`);
  await page.waitForSelector('#connections-table');
  await shot(page, '07-narrow-integrations');
  // Dark mode: axe-core on every main page with the dark palette.
  await page.emulateMedia({ colorScheme: 'dark' });
  for (const p of ['/', '/agents', '/activity', '/settings', '/tools/github_create_issue']) {
    await page.goto(BASE + p);
    await page.waitForLoadState('networkidle');
    await axeCheck(page, `dark ${p}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });

  step('Continue with OAuth sends the browser to GitHub with the workspace app');
  let authorizeURL = '';
  await page.route(`${GITHUB_AUTHORIZE}**`, (route) => { authorizeURL = route.request().url(); return route.fulfill({ status: 200, contentType: 'text/html', body: '<title>GitHub (fake)</title>' }); });
  await page.goto(`${BASE}/`);
  await page.waitForSelector('[data-connect=github]');
  await page.click('[data-connect=github]');
  await page.click('#connect-oauth-button');
  await page.waitForURL(`${GITHUB_AUTHORIZE}**`);
  const au = new URL(authorizeURL);
  check(au.searchParams.get('client_id') === 'Iv1.e2eclient' && au.searchParams.get('redirect_uri') === `${BASE}/oauth/callback` && au.searchParams.get('state'),
    `the authorization URL is ${authorizeURL}`);
  summary.oauth = { client_id: au.searchParams.get('client_id'), redirect_uri: au.searchParams.get('redirect_uri') };
  await page.unroute(`${GITHUB_AUTHORIZE}**`);
  // The OAuth result page, here the refusal of a denied authorization.
  await page.goto(`${BASE}/oauth/callback?state=${encodeURIComponent(au.searchParams.get('state'))}&error=access_denied`);
  check((await page.textContent('main h1')) === 'Not connected', 'the OAuth result page has no main landmark with its h1');
  check((await page.getAttribute('#oauth-back', 'href')) === `${BASE}/#connections` && await page.evaluate(() => getComputedStyle(document.querySelector('#oauth-back')).backgroundColor !== 'rgba(0, 0, 0, 0)'),
    'the OAuth result page is not styled like the UI, or has no way back');
  await axeCheck(page, 'oauth result');

  step('keyboard: the connect dialog opens, takes a token and closes without a mouse');
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${BASE}/`);
  await page.waitForSelector('[data-connect=github]');
  await page.focus('[data-connect=github]');
  await page.keyboard.press('Enter');
  check(await page.evaluate(() => document.activeElement && document.activeElement.id === 'connect-token-input'), 'the connect dialog did not focus the token field');
  await page.keyboard.press('Escape');
  check(!(await page.isVisible('#connect-dialog')), 'Escape did not close the connect dialog');

  step('another tenant\'s member sees none of it');
  const ctxB = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const pageB = await newPage(ctxB);
  await pageB.goto(BETA_LINK);
  await pageB.fill('#password', BETA_PASSWORD);
  await pageB.fill('#confirm', BETA_PASSWORD);
  await pageB.click('button[type=submit]');
  await pageB.waitForURL(`${BASE}/`);
  check((await pageB.textContent('#who-email')) === 'member@beta.test', `beta's header names ${await pageB.textContent('header .who')}`);
  await pageB.waitForSelector('#connection-list:not([aria-busy])');
  check((await pageB.textContent('#connection-list')).includes('No account connected'), 'beta sees connections');
  check(!(await pageB.content()).includes('octocat'), "beta's page mentions default's GitHub login");
  await pageB.goto(`${BASE}/agents`);
  await pageB.waitForSelector('#agent-list:not([aria-busy])');
  check(!(await pageB.textContent('#agent-list')).includes('Triage bot'), "beta sees default's agent");
  await pageB.goto(`${BASE}/activity`);
  await pageB.waitForSelector('#audit-rows tr');
  await pageB.waitForFunction(() => !document.querySelector('#audit-rows').textContent.includes('Loading'));
  check(!(await pageB.textContent('#audit-rows')).includes('github_create_issue'), "beta sees default's tool call");
  await pageB.goto(`${BASE}/settings`);
  await pageB.waitForSelector('#key-list:not([aria-busy])');
  check(!(await pageB.textContent('#key-list')).includes(prefix), "beta sees default's key");
  check(!(await pageB.textContent('#member-list')).includes('admin@localhost'), "beta sees default's members");
  await pageB.waitForSelector('#defaults-view');
  const inert = await pageB.evaluate(() => [...document.querySelectorAll('main select:disabled, main button:disabled, main input:disabled')].map((n) => n.id || n.name));
  check(inert.length === 0 && !(await pageB.$('#invite-form')) && !(await pageB.$('#oauth-form')), `a member sees controls they may not use: ${inert.join(', ')}`);
  check(!(await pageB.$('#members-table select')) && !(await pageB.$('#members-table button')) && !(await pageB.$('#defaults-form')),
    'a member sees the role selects, the remove buttons or the defaults form');
  await audit(pageB, 'member settings');
  {
  const agentID = agentURL.split('/').pop();
  const probes = await pageB.evaluate(async (id) => {
    const out = {};
    for (const p of ['/api/agents/' + id, '/api/connections']) {
      const r = await fetch(p);
      out[p] = { status: r.status, body: await r.text() };
    }
    return out;
  }, agentID);
  check(probes['/api/agents/' + agentID].status === 404, `beta's GET of default's agent answered ${probes['/api/agents/' + agentID].status}`);
  summary.beta.agent_status = probes['/api/agents/' + agentID].status;
  }
  const conn = await pageB.evaluate(async (id) => {
    const one = await fetch('/api/connections/' + id);
    const list = await fetch('/api/connections');
    const call = await fetch('/api/tools/github_create_issue/call', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': document.querySelector('meta[name=csrf-token]').content },
      body: JSON.stringify({ connection_id: id, arguments: { owner: 'octo-org', repo: 'hello-world', title: 'from beta' } }) });
    return { one: one.status, list: await list.text(), call: call.status };
  }, connectionID);
  check(conn.one === 404, `beta's GET of default's connection answered ${conn.one}`);
  check(!conn.list.includes('octocat'), "beta's connection list holds default's account");
  check(conn.call === 404, `beta's call on default's connection answered ${conn.call}`);
  summary.beta.connection_status = conn.one;
  summary.beta.call_status = conn.call;
  await pageB.goto(`${BASE}/tools/github_create_issue`);
  await pageB.waitForSelector('#try-connection .error');
  check((await pageB.textContent('#try-connection')).includes('Connect a GitHub account first'), 'beta may run GitHub tools without a connection');
  await shot(pageB, '08-beta-try-it');

  step('reconnect the GitHub connection in place; the agent still calls its tools');
  await page.goto(`${BASE}/#connections`);
  await page.waitForSelector(`#connections-table tr[data-connection="${connectionID}"]`);
  await page.click(`#connections-table tr[data-connection="${connectionID}"] button:has-text("Reconnect")`);
  check(await page.isVisible('#connect-dialog'), 'the reconnect dialog did not open');
  check((await page.textContent('#connect-title')).startsWith('Reconnect GitHub'), 'the reconnect dialog is not titled Reconnect');
  await page.fill('#connect-token-input', GITHUB_OTHER_TOKEN);
  await page.click('#connect-submit');
  await page.waitForSelector('#connect-error:not([hidden])');
  check((await page.textContent('#connect-error')).includes('hubot'), `another account's token was not refused by name: ${await page.textContent('#connect-error')}`);
  await page.fill('#connect-token-input', GITHUB_RENEWED_TOKEN);
  await page.click('#connect-submit');
  await page.waitForFunction(() => document.querySelector('#flash').textContent.startsWith('Reconnected GitHub'));
  await page.waitForSelector('#connections-table tbody tr');
  const ids = await page.$$eval('#connections-table tbody tr', (rows) => rows.map((r) => r.dataset.connection));
  summary.reconnect.connection_id = connectionID;
  summary.reconnect.after_id = ids.join(',');
  check(ids.length === 1 && ids[0] === connectionID, `after the reconnect the connections are ${ids.join(', ')}, want ${connectionID} alone`);
  const called = await mcpCall(agentURL, agentKeyForLater, 'github_get_issue', { owner: 'octo-org', repo: 'hello-world', issue_number: 1347 });
  summary.reconnect.call_text = JSON.stringify(called.result || called.error || called).slice(0, 2000);
  check(called.result && !called.result.isError, `the agent's call after the reconnect failed: ${summary.reconnect.call_text}`);
  await page.goto(`${BASE}/agents`);
  await page.waitForSelector('#agent-list:not([aria-busy])');
  check((await page.$$('#agent-list [data-missing]')).length === 0, 'the agents list says a tool lost its connection after a reconnect');

  step('the agent key works at the agent URL, then delete the agent');
  const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } });
  const mcpHeaders = { Authorization: `Bearer ${agentKeyForLater}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const live = await fetch(agentURL, { method: 'POST', headers: mcpHeaders, body: init });
  check(live.status === 200 && (await live.text()).includes('serverInfo'), `initialize at the agent URL with its key answered ${live.status}`);
  await page.goto(agentURL.replace(/\/mcp\/default\/agents\//, '/agents/'));
  await page.waitForSelector('#agent-connect:not([hidden])');
  await page.click('#agent-delete');
  await confirmInPage(page);
  await page.waitForURL(`${BASE}/agents`);
  await page.waitForSelector('#agent-list:not([aria-busy])');
  check(!(await page.textContent('#agent-list')).includes('Triage bot'), 'the deleted agent is still listed');
  const gone = await fetch(agentURL, { method: 'POST', headers: mcpHeaders, body: init });
  check(gone.status === 401 || gone.status === 404, `the deleted agent's URL with its key answered ${gone.status}`);

  await workflowsUI({ page, browser, ctx, BASE, step, check, audit, axeCheck, waitUntil, shot, summary, newPage, confirmInPage });

  step('page weights, cold (a new browser profile) and warm (a reload)');
  summary.weights = {};
  const state = await ctx.storageState();
  for (const p of ['/', '/agents', '/activity', '/settings', '/tools/github_create_issue']) {
    const wctx = await browser.newContext({ viewport: { width: 1366, height: 900 }, storageState: state });
    const wpage = await newPage(wctx);
    let bytes = 0;
    let ops = 0;
    const pending = [];
    wpage.on('requestfinished', (req) => pending.push(req.sizes().then((z) => { bytes += z.responseBodySize + z.responseHeadersSize; }).catch(() => {})));
    wpage.on('request', (req) => { if (/\/api\/providers\/[^/]+\/operations/.test(req.url())) ops++; });
    await wpage.goto(BASE + p);
    await wpage.waitForLoadState('networkidle');
    await Promise.all(pending.splice(0));
    const cold = bytes;
    const coldOps = ops;
    bytes = 0;
    await wpage.reload();
    await wpage.waitForLoadState('networkidle');
    await Promise.all(pending.splice(0));
    summary.weights[p] = { cold_bytes: cold, warm_bytes: bytes, operations_requests: coldOps };
    await wctx.close();
  }
  // Integrations and Settings show no operation until asked, and Try it one provider's.
  check(summary.weights['/'].operations_requests === 0 && summary.weights['/settings'].operations_requests === 0 && summary.weights['/tools/github_create_issue'].operations_requests === 1,
    `Settings and Try it fetch catalogs they do not show: ${JSON.stringify(summary.weights)}`);

  check(foreign.length === 0, `third-party requests: ${foreign.join(', ')}`);
  summary.ok = summary.failures.length === 0;
} catch (err) {
  if (!summary.failures.includes(err.message)) summary.failures.push(String(err && err.stack || err));
} finally {
  await browser.close();
}
console.log(JSON.stringify(summary));
process.exit(summary.ok ? 0 : 1);
