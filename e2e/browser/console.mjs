// Drives the agent console and the workflow editor's help in Chromium against a live
// `switchboard serve`: the console lists exactly what the agent's MCP URL lists to the
// agent's key, calls a tool, and shows the hub's confirmation, declined then accepted;
// the editor completes tool names, connection labels and argument names as they are
// typed, and a dry run names every problem of a definition at once, and the accounts
// of a good one. Each state is laid out and photographed at 1366 and 390 px and checked
// by axe-core in light and dark. Run by go test ./e2e/browser (TestBrowserConsole),
// which passes everything in the environment. The last line of stdout is a JSON
// summary; the exit code is 0 only if every check held.
import { env, summary, check, step, waitUntil, browser, newPage, axeCheck, settle, layout } from './checks.mjs';

const BASE = env('BASE_URL');
const ADMIN_LINK = env('ADMIN_LINK');
const AGENT_ID = env('AGENT_ID');
const AGENT_URL = env('AGENT_URL');
const AGENT_KEY = env('AGENT_KEY');
const ACCOUNT = env('ACCOUNT_LABEL');
const ISSUE_TITLE = env('ISSUE_TITLE');
const PASSWORD = 'e2e password for the console';
summary.console = {};
summary.editor = {};

// urlTools lists the tools the agent's URL serves to its key, every page of them, as an
// MCP client of the stateless version asks.
async function urlTools() {
  const tools = [];
  let cursor;
  do {
    const params = { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'e2e', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } };
    if (cursor) params.cursor = cursor;
    const res = await fetch(AGENT_URL, { method: 'POST', headers: { Authorization: `Bearer ${AGENT_KEY}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'Mcp-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/list' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params }) });
    const text = await res.text();
    const msg = [text, ...text.split('\n')].map((l) => l.trim().replace(/^data:\s*/, '')).filter((l) => l.startsWith('{')).map((l) => { try { return JSON.parse(l); } catch { return null; } }).find((m) => m && m.result);
    check(msg, `tools/list at the agent URL answered ${res.status} ${text.slice(0, 300)}`);
    tools.push(...msg.result.tools);
    cursor = msg.result.nextCursor;
  } while (cursor);
  return tools;
}

// both lays out, photographs and checks a state of the page at both widths, in light
// and dark.
async function both(page, name) {
  for (const width of [1366, 390]) {
    await page.setViewportSize({ width, height: width > 800 ? 900 : 844 });
    await layout(page, width, name);
    await page.emulateMedia({ colorScheme: 'dark' });
    await layout(page, width, `${name}-dark`);
    await page.emulateMedia({ colorScheme: 'light' });
  }
  await page.setViewportSize({ width: 1366, height: 900 });
  summary.pages.push(name);
}

try {
  const ctx = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await newPage(ctx);
  step('the admin sets a password with the link serve printed');
  await page.goto(ADMIN_LINK);
  await page.fill('#password', PASSWORD);
  await page.fill('#confirm', PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForURL(`${BASE}/`);

  step('the console lists the tools the agent URL lists, with the same names, descriptions and schemas');
  await page.goto(`${BASE}/agents/${AGENT_ID}`);
  await page.waitForSelector('#agent-console:not([hidden]) .console-tool');
  await settle(page);
  const listed = await page.$$eval('.console-tool', (ns) => ns.map((n) => JSON.parse(n.querySelector('details pre code').textContent)));
  const served = await urlTools();
  check(served.length >= 2 && JSON.stringify(listed) === JSON.stringify(served),
    `the console lists ${JSON.stringify(listed.map((t) => t.name))}, the agent URL ${JSON.stringify(served.map((t) => t.name))} (definitions equal: ${JSON.stringify(listed) === JSON.stringify(served)})`);
  const count = await page.textContent('#console-count');
  check(count.includes(`${served.length} tool`), `the console says "${count}"`);
  summary.console.listed = listed.map((t) => t.name);
  await both(page, 'agent-console');

  const tool = '.console-tool[data-tool=github_get_issue]';
  const fillIssue = async () => {
    await page.fill(`${tool} [data-path=owner] input`, 'octo-org');
    await page.fill(`${tool} [data-path=repo] input`, 'hello-world');
    await page.fill(`${tool} [data-path=issue_number] input`, '1347');
  };
  step('a call the agent\'s policy confirms shows the hub\'s form in the page: declined, nothing runs');
  await page.click(`${tool} > summary`);
  await fillIssue();
  await page.click('#console-call-github_get_issue');
  await page.waitForSelector(`${tool} .console-ask`);
  const asked = await page.textContent(`${tool} .console-ask`);
  check(asked.includes(ACCOUNT) && asked.includes('1347') && await page.isChecked(`${tool} .console-ask input[type=checkbox]`),
    `the confirmation reads "${asked}"`);
  check(await page.evaluate(() => document.activeElement && document.activeElement.closest('.console-ask') !== null), 'focus is not in the confirmation');
  await both(page, 'agent-console-confirm');
  await page.click(`${tool} .console-ask button[data-action=decline]`);
  await page.waitForSelector(`${tool} .console-result`);
  const declined = await page.$eval(`${tool} .console-result`, (n) => ({ error: n.dataset.isError, text: n.textContent }));
  check(declined.error === 'true' && declined.text.includes('declined'), `the declined call shows ${JSON.stringify(declined)}`);
  summary.console.declined = true;

  step('accepted, the call runs: its content, structuredContent and isError are shown');
  await page.click('#console-call-github_get_issue');
  await page.waitForSelector(`${tool} .console-ask`);
  await page.click(`${tool} .console-ask button[data-action=accept]`);
  await waitUntil(page, (sel) => { const r = document.querySelector(`${sel} .console-result`); return r && r.dataset.isError === 'false'; }, tool, 'the accepted call shows no successful result');
  const result = await page.textContent(`${tool} .console-result`);
  check(result.includes('isError: false') && result.includes('structuredContent') && result.includes(ISSUE_TITLE), `the result reads "${result.slice(0, 400)}"`);
  summary.console.accepted = true;
  await both(page, 'agent-console-result');

  step('the workflow editor completes tool names as they are typed');
  await page.goto(`${BASE}/workflows/new`);
  await settle(page);
  const def = '#wf-definition';
  await page.fill(def, 'name: auto_complete\nsteps:\n  - name: read\n    tool: github_get_iss');
  await page.focus(def);
  await page.keyboard.press('End');
  await page.keyboard.type('u');
  await page.waitForSelector('#wf-suggest:not([hidden]) li[data-value=github_get_issue]');
  check(await page.getAttribute(def, 'aria-controls') === 'wf-suggest', 'the definition does not name its suggestions');
  await both(page, 'workflow-autocomplete');
  await page.focus(def);
  await page.keyboard.press('End');
  await page.keyboard.press('ArrowDown');
  check(await page.getAttribute(def, 'aria-activedescendant') === 'wf-suggest-0', 'Down arrow did not choose the first suggestion');
  await page.keyboard.press('Enter');
  let text = await page.inputValue(def);
  check(text.endsWith('tool: github_get_issue') && await page.isHidden('#wf-suggest'), `after Enter the definition ends ${JSON.stringify(text.slice(-40))}`);

  step('then the labels of that tool\'s connections, and its arguments from its schema');
  await page.keyboard.type('\n    connection: ');
  await page.waitForSelector(`#wf-suggest:not([hidden]) li[data-value="${ACCOUNT}"]`);
  await page.click(`#wf-suggest li[data-value="${ACCOUNT}"]`);
  text = await page.inputValue(def);
  check(text.includes(`connection: ${ACCOUNT}`) || text.includes(`connection: ${JSON.stringify(ACCOUNT)}`), `picking the account wrote ${JSON.stringify(text.slice(-60))}`);
  await page.keyboard.type('\n    args:\n      ');
  await page.waitForSelector('#wf-suggest:not([hidden]) li[data-value=issue_number]');
  const args = await page.$$eval('#wf-suggest li', (ns) => ns.map((n) => n.dataset.value));
  check(['owner', 'repo', 'issue_number'].every((a) => args.includes(a)), `under args: the editor offers ${JSON.stringify(args)}`);
  await page.keyboard.type('iss');
  await waitUntil(page, () => [...document.querySelectorAll('#wf-suggest li')].map((n) => n.dataset.value).join() === 'issue_number', undefined, 'typing "iss" does not narrow the arguments to issue_number');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await page.keyboard.type('1347\n      ');
  await page.waitForSelector('#wf-suggest:not([hidden]) li[data-value=owner]');
  const left = await page.$$eval('#wf-suggest li', (ns) => ns.map((n) => n.dataset.value));
  check(!left.includes('issue_number'), `an argument already given is offered again: ${JSON.stringify(left)}`);
  await page.keyboard.press('Escape');
  check(await page.isHidden('#wf-suggest'), 'Escape did not close the suggestions');
  summary.editor.completed = true;

  step('a dry run names every problem of a definition at once, each at its step');
  await page.fill(def, [
    'name: Bad-Name',
    'steps:',
    '  - name: read',
    '    tool: github_get_issue',
    '    timout: 30s',
    '    args: {owner: octo-org, repo: hello-world, issue_number: "${{ params.n + }}"}',
    '  - name: misspelt',
    '    tool: github_get_isue',
    '  - name: missing',
    '    tool: github_get_issue',
    '    args: {owner: octo-org, repo: hello-world}',
    '',
  ].join('\n'));
  await page.click('#wf-dryrun');
  await page.waitForSelector('#wf-steps li[data-field]');
  const problems = await page.$$eval('#wf-steps li[data-field]', (ns) => ns.map((n) => `${(n.closest('[data-step]') || { dataset: {} }).dataset.step || ''} ${n.dataset.field}`));
  summary.editor.problems = problems;
  for (const want of [' name', 'read timout', 'read args.issue_number', 'misspelt tool', 'missing args.issue_number']) {
    check(problems.includes(want), `the dry run lists ${JSON.stringify(problems)}, without "${want}"`);
  }
  await both(page, 'workflow-problems');

  step('a dry run of a good definition names the account each step runs on');
  await page.fill(def, `name: auto_complete\nsteps:\n  - name: read\n    tool: github_get_issue\n    args: {owner: octo-org, repo: hello-world, issue_number: 1347}\n  - name: close\n    tool: github_update_issue\n    needs: [read]\n    args: {owner: octo-org, repo: hello-world, issue_number: 1347, state: closed}\n`);
  await page.click('#wf-dryrun');
  await page.waitForSelector('#wf-steps .plan-account');
  const accounts = await page.$$eval('#wf-steps .plan-account', (ns) => ns.map((n) => n.textContent));
  const said = await page.textContent('#wf-summary');
  check(accounts.length === 2 && accounts.every((a) => a.includes(ACCOUNT) && !/con_/.test(a)) && said.includes(`on ${ACCOUNT}`), `the plan names ${JSON.stringify(accounts)}; its summary: ${said}`);
  summary.editor.accounts = accounts;
  await axeCheck(page, 'workflow-plan');

  summary.ok = summary.failures.length === 0;
} catch (err) {
  if (!summary.failures.includes(err.message)) summary.failures.push(String(err && err.stack || err));
} finally {
  await browser.close();
}
console.log(JSON.stringify(summary));
process.exit(summary.ok ? 0 : 1);
