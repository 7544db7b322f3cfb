// Opens every page of a live `switchboard serve` in Chromium (playwright-core) at a
// desktop and a phone width and checks how each is laid out; then walks what a
// newcomer does next. Run by go test ./e2e/browser (TestBrowserPages), which starts the server
// with data in every table and passes everything in the environment. The last line of
// stdout is a JSON summary; the exit code is 0 only if every check held.
import { env, summary, soft, check, step, waitUntil, browser, newPage, axeCheck, settle, layout } from './checks.mjs';

const BASE = env('BASE_URL');
const ADMIN_LINK = env('ADMIN_LINK');
const MEMBER_LINK = env('MEMBER_LINK');
const AGENT_ID = env('AGENT_ID');
const WORKFLOW_RUN_ID = env('WORKFLOW_RUN_ID');
const CONNECTION_ID = env('CONNECTION_ID');
const PASSWORD = 'e2e password for the pages';

const PAGES = [
  ['integrations', '/'], ['overview', '/overview?range=7d'], ['agents', '/agents'], ['agent-new', '/agents/new'], ['agent', `/agents/${AGENT_ID}`], ['tool', '/tools/github_create_issue'],
  ['activity', '/activity'], ['settings', '/settings'], ['workflows', '/workflows'], ['workflow-new', '/workflows/new'], ['workflow', '/workflows/triage_issue'],
  ['workflow-run', `/workflow-runs/${WORKFLOW_RUN_ID}`], ['not-found', '/no/such/page'],
];

try {
  const ctx = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await newPage(ctx);
  step('the admin sets a password with the link serve printed');
  await page.goto(ADMIN_LINK);
  await page.fill('#password', PASSWORD);
  await page.fill('#confirm', PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForURL(`${BASE}/`);

  for (const width of [1366, 390]) {
    step(`every page at ${width} px: headers over their columns, nothing past the sides, no short word broken`);
    await page.setViewportSize({ width, height: width > 800 ? 900 : 844 });
    for (const [name, p] of PAGES) {
      await page.goto(BASE + p);
      await layout(page, width, name);
      if (width === 1366) summary.pages.push(name);
    }
    const out = await browser.newContext({ viewport: { width, height: 900 } });
    const signedOut = await newPage(out);
    await signedOut.goto(`${BASE}/signin`);
    await layout(signedOut, width, 'signin');
    await signedOut.goto(MEMBER_LINK);
    await layout(signedOut, width, 'invite');
    await out.close();
  }
  summary.pages.push('signin', 'invite');
  await page.setViewportSize({ width: 1366, height: 900 });

  step('the agent picker: a search opens the groups it finds, clearing it folds them; select all per provider');
  await page.goto(`${BASE}/agents/new`);
  await page.waitForSelector('#pick-github_get_issue', { state: 'attached' });
  await page.fill('#agent-name', 'Layout bot');
  await page.fill('#tool-search', 'get issue');
  check(await page.isVisible('#pick-github_get_issue'), 'the search did not open the GitHub group');
  await page.check('#pick-github_get_issue');
  await page.fill('#tool-search', '');
  check(!(await page.evaluate(() => document.querySelector('[data-provider=github]').open)), 'clearing the search left the GitHub group open');
  await page.click('[data-provider=github] > summary');
  const groupState = () => page.evaluate(() => {
    const g = document.querySelector('[data-provider=github]');
    const all = g.querySelector('input.selectall');
    return { picked: g.querySelectorAll('.pick input:checked').length, tools: g.querySelectorAll('.pick input').length, checked: all.checked, mixed: all.indeterminate, count: g.querySelector('summary').textContent };
  });
  let gs = await groupState();
  check(gs.picked === 1 && !gs.checked && gs.mixed, `with one GitHub tool picked, the group's select all is ${JSON.stringify(gs)}`);
  await page.check('#all-github');
  gs = await groupState();
  check(gs.picked === gs.tools && gs.tools > 10 && gs.count.includes(`${gs.tools} of ${gs.tools}`), `select all picked ${JSON.stringify(gs)}`);
  await page.uncheck('#all-github');
  gs = await groupState();
  check(gs.picked === 0 && !gs.mixed, `clearing select all left ${JSON.stringify(gs)}`);
  check(await page.isDisabled('#all-slack'), 'select all is offered on Slack, which has no connection');
  await page.check('#pick-github_get_issue');

  step('the estimate counts in words: one tool is "1 tool"');
  await waitUntil(page, () => document.querySelector('#token-estimate').textContent.startsWith('1 selected') && document.querySelector('#token-estimate').dataset.served === '1', undefined,
    'the estimate did not count the one tool picked');
  const est = await page.textContent('#token-estimate');
  check(est.includes('serves 1 tool ·'), `the estimate for one tool reads ${est}`);

  step('saving a new agent brings its URL into view, focused, with Add to Cursor and Add to VS Code beside the snippets');
  await page.click('#agent-save');
  await page.waitForSelector('#agent-connect:not([hidden])');
  await waitUntil(page, () => document.activeElement && document.activeElement.id === 'agent-mcp-url', undefined, 'after Save, focus is not on the agent\'s MCP URL');
  const url = await page.inputValue('#agent-mcp-url');
  const inView = await page.evaluate(() => { const r = document.querySelector('#agent-mcp-url').getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight; });
  check(inView, 'after Save, the agent\'s MCP URL is out of view');
  check((await page.textContent('#agent-saved')).startsWith('Saved'), 'the save bar does not say the agent was saved');
  const cursor = new URL(await page.getAttribute('#snippets-install-cursor', 'href'));
  const cursorConfig = JSON.parse(Buffer.from(cursor.searchParams.get('config'), 'base64').toString('utf8'));
  check(cursor.protocol === 'cursor:' && cursor.host === 'anysphere.cursor-deeplink' && cursor.pathname === '/mcp/install' && cursor.searchParams.get('name') === 'layout-bot' &&
    cursorConfig.url === url && cursorConfig.headers.Authorization === 'Bearer YOUR_API_KEY', `Add to Cursor links ${cursor} (${JSON.stringify(cursorConfig)})`);
  const vscodeHref = await page.getAttribute('#snippets-install-vscode', 'href');
  check(vscodeHref.startsWith('vscode:mcp/install?'), `Add to VS Code links ${vscodeHref}`);
  const vs = JSON.parse(decodeURIComponent(vscodeHref.slice('vscode:mcp/install?'.length)));
  check(vs.name === 'layout-bot' && vs.type === 'http' && vs.url === url && vs.headers.Authorization === 'Bearer ${input:layout-bot-key}' && vs.inputs[0].password === true,
    `Add to VS Code installs ${JSON.stringify(vs)}`);
  await page.click('#agent-new-key');
  await page.waitForSelector('#agent-key-box:not([hidden])');
  const key = await page.inputValue('#agent-key');
  const withKey = JSON.parse(Buffer.from(new URL(await page.getAttribute('#snippets-install-cursor', 'href')).searchParams.get('config'), 'base64').toString('utf8'));
  check(withKey.headers.Authorization === `Bearer ${key}` && !(await page.getAttribute('#snippets-install-vscode', 'href')).includes(key),
    'with a key made, Add to Cursor does not carry it, or Add to VS Code does');
  await axeCheck(page, 'agent saved');

  step('Activity: a call from the browser names the session, a canceled call is not a failure, reconnects say so');
  await page.goto(`${BASE}/activity`);
  await settle(page);
  const made = await page.evaluate(async (conn) => {
    const headers = { 'Content-Type': 'application/json', 'X-CSRF-Token': document.querySelector('meta[name=csrf-token]').content };
    const ok = await fetch('/api/tools/github_get_issue/call', { method: 'POST', headers, body: JSON.stringify({ connection_id: conn, arguments: { owner: 'octo-org', repo: 'hello-world', issue_number: 1347 } }) });
    // A call the fake GitHub holds until the client gives up: given up after a second.
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 1000);
    let aborted = false;
    try { await fetch('/api/tools/github_search_repositories/call', { method: 'POST', headers, signal: ac.signal, body: JSON.stringify({ connection_id: conn, arguments: { q: 'hold-until-canceled' } }) }); } catch { aborted = true; }
    return { ok: ok.status, aborted };
  }, CONNECTION_ID);
  check(made.ok === 200 && made.aborted, `the browser's calls: ${JSON.stringify(made)}`);
  // The audit writer batches: the events may land a moment after the calls.
  let events = [];
  for (let i = 0; i < 60; i++) {
    events = await page.evaluate(async () => (await (await fetch('/api/audit?limit=100')).json()).events || []);
    if (events.some((e) => e.outcome === 'canceled') && events.some((e) => e.kind === 'tool_call' && (e.key_id || '').startsWith('ses_'))) break;
    await page.waitForTimeout(250);
  }
  const fromBrowser = events.find((e) => e.kind === 'tool_call' && e.outcome === 'ok' && (e.key_id || '').startsWith('ses_'));
  const canceled = events.find((e) => e.outcome === 'canceled');
  check(fromBrowser && canceled, `the audit holds no call from the browser session or no canceled call: ${JSON.stringify(events.map((e) => [e.kind, e.outcome, e.key_id]))}`);
  const reconnects = events.filter((e) => e.connection_id === CONNECTION_ID && e.kind === 'connection_reconnected').map((e) => e.outcome).sort();
  check(reconnects.length === 2 && reconnects.includes('ok') && !events.some((e) => e.kind === 'connection_created' && e.connection_id === CONNECTION_ID && e.detail && e.detail.includes('reconnect')),
    `the reconnects are audited as ${JSON.stringify(events.filter((e) => e.connection_id === CONNECTION_ID).map((e) => [e.kind, e.outcome]))}`);
  await page.reload();
  await settle(page);
  const detailOf = async (id) => {
    await page.click(`#audit-rows tr[data-event="${id}"] button`);
    await page.waitForSelector('#audit-detail[open]');
    const d = await page.evaluate(() => ({ text: document.querySelector('#audit-detail-list').textContent, red: document.querySelectorAll('#audit-detail-list .error').length }));
    await page.keyboard.press('Escape');
    await page.waitForSelector('#audit-detail', { state: 'hidden' });
    return d;
  };
  const sessionDetail = await detailOf(fromBrowser.id);
  check(sessionDetail.text.includes('Credentiala signed-in browser session') && !sessionDetail.text.includes('deleted key'), `a call from the browser reads ${sessionDetail.text}`);
  const canceledDetail = await detailOf(canceled.id);
  check(!canceledDetail.text.includes('Why it failed') && !canceledDetail.text.includes('no reason was recorded') && canceledDetail.red === 0 && canceledDetail.text.includes('canceled'),
    `a canceled call reads ${canceledDetail.text} (${canceledDetail.red} parts in red)`);
  const rowKinds = await page.$$eval('#audit-rows tr[data-event] td:nth-child(2)', (ns) => ns.map((n) => n.textContent));
  check(rowKinds.filter((k) => k === 'connection reconnected').length === 2, `Activity lists the events ${JSON.stringify(rowKinds)}`);
  await axeCheck(page, 'activity with a canceled call');

  step('back from a provider\'s sign-in, Integrations says what was connected, once');
  await page.goto(`${BASE}/?connected=${CONNECTION_ID}&renewed=1#connections`);
  await settle(page);
  await waitUntil(page, () => /already connected, as .+: that connection was renewed/.test(document.querySelector('#flash').textContent), undefined,
    'back from a sign-in that renewed a connection, Integrations does not say so');
  check(new URL(page.url()).search === '', `the page keeps ${page.url()}, so a reload would say it again`);
  const flashed = await page.textContent('#flash');
  check(!/con_[a-z0-9]/.test(flashed), `the page names the connection by id: ${flashed}`);

  step('the first-run checklist on Integrations: what is done is ticked, the next step is marked, linked and in view');
  for (const width of [1366, 390]) {
    await page.setViewportSize({ width, height: width > 800 ? 900 : 844 });
    await page.goto(`${BASE}/`);
    await settle(page);
    await page.waitForSelector('#first-run:not([hidden]) #first-run-steps li');
    const fr = await page.evaluate(() => {
      const items = [...document.querySelectorAll('#first-run-steps li')];
      const next = document.querySelector('#first-run-steps li[aria-current=step]');
      const r = next ? next.getBoundingClientRect() : null;
      return { steps: items.map((n) => `${n.dataset.step}:${n.className}`), next: next && next.dataset.step, href: next && next.querySelector('a') && next.querySelector('a').getAttribute('href'),
        inView: r && r.top >= 0 && r.bottom <= window.innerHeight };
    });
    // The workspace has an account, an agent and its key; the agent has made no call.
    check(fr.steps.join(',') === 'connect:done,agent:done,client:done,call:next' && fr.next === 'call' && fr.href === `/agents/${AGENT_ID}` && fr.inView,
      `at ${width} px the checklist reads ${JSON.stringify(fr)}`);
  }
  await axeCheck(page, 'first-run checklist');
  await page.setViewportSize({ width: 1366, height: 900 });

  step('an API added by its description is said to be added after the page loads again');
  await page.goto(`${BASE}/`);
  await settle(page);
  await page.click('#openapi-add');
  await page.fill('#openapi-name', 'petstore');
  await page.fill('#openapi-description', 'openapi: 3.0.3\ninfo: {title: Petstore, version: "1"}\npaths:\n  /pets:\n    get: {operationId: listPets, summary: List pets, responses: {"200": {description: The pets}}}\n');
  await page.fill('#openapi-base-url', env('GITHUB_URL'));
  await page.click('#openapi-form button[type=submit]');
  await page.waitForSelector('#openapi-list li[data-api=petstore]');
  await waitUntil(page, () => document.querySelector('#flash').textContent.startsWith('Added Petstore: 1 tool.'), undefined, 'after the page loaded again, "Added Petstore" is gone');
  check(new URL(page.url()).search === '', `the page keeps ${page.url()}, so a reload would say it again`);

  step('a signed-out deep link comes back with its query after sign-in');
  {
    const ctxD = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    const pageD = await newPage(ctxD);
    await pageD.goto(`${BASE}/activity?kind=tool_call`);
    await pageD.waitForURL(/\/signin\?next=/);
    const next = new URL(pageD.url()).searchParams.get('next');
    check(next === '/activity?kind=tool_call', `signing out sends the deep link to sign-in as next=${next}`);
    await ctxD.close();
  }

  step('dark mode: the workflow graph is dark like the page');
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.goto(`${BASE}/workflows/triage_issue`);
  await waitUntil(page, () => { const i = document.querySelector('#wf-graph'); return i && i.complete && i.naturalWidth > 0; }, undefined, 'the graph image did not load');
  // The graph as the screen shows it, measured pixel by pixel in a canvas.
  const png = (await page.locator('#wf-graph').screenshot()).toString('base64');
  const light = await page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.naturalWidth; c.height = img.naturalHeight;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let sum = 0;
    for (let i = 0; i < d.length; i += 4) sum += (d[i] + d[i + 1] + d[i + 2]) / 3;
    return sum / (d.length / 4) / 255;
  }, png);
  check(light < 0.4, `in dark mode the workflow graph is ${Math.round(light * 100)}% light`);
  await axeCheck(page, 'dark workflow');
  await page.emulateMedia({ colorScheme: 'light' });

  step('Overview: the calls made, in figures, two charts the server drew and the top tools; per connection from Integrations; an agent its week');
  {
    // The rollup passes every second: the calls made before the pages show once it has.
    let total = '0';
    for (let i = 0; i < 120 && total === '0'; i++) {
      if (i) await page.waitForTimeout(250);
      await page.goto(`${BASE}/overview?range=7d`);
      await settle(page);
      total = (await page.textContent('#usage-total-calls')) || '0';
    }
    check(Number(total) >= 2, `Overview counts ${total} calls over 7 days, want the calls made`);
    const ov = await page.evaluate(() => ({
      current: document.querySelector('#usage-ranges a[aria-current=page]')?.dataset.range,
      tools: [...document.querySelectorAll('#usage-tools-table tbody tr')].map((r) => r.dataset.tool),
      labelled: [...document.querySelectorAll('#usage-tools-table tbody td')].every((c) => c.dataset.label),
      p95: document.querySelector('#usage-p95').textContent,
      alts: [...document.querySelectorAll('img.chart')].map((i) => i.alt),
    }));
    check(ov.current === '7d' && ov.tools.includes('github_get_issue') && ov.labelled && /\d/.test(ov.p95) && ov.alts.length === 2 && ov.alts.every((a) => a.includes('over the last 7 days')),
      `Overview reads ${JSON.stringify(ov)}`);
    const drawn = async () => page.waitForFunction(() => [...document.querySelectorAll('main img.chart')].filter((i) => !i.closest('[hidden]')).every((i) => i.complete && i.naturalWidth === 720), undefined, { timeout: 15000 });
    await drawn();
    // The charts follow the page's colour scheme: dark in dark mode, light otherwise.
    const lightness = async (sel) => {
      const png = (await page.locator(sel).screenshot()).toString('base64');
      return page.evaluate(async (b64) => {
        const img = new Image();
        img.src = `data:image/png;base64,${b64}`;
        await img.decode();
        const c = document.createElement('canvas');
        c.width = img.naturalWidth; c.height = img.naturalHeight;
        const g = c.getContext('2d');
        g.drawImage(img, 0, 0);
        const d = g.getImageData(0, 0, c.width, c.height).data;
        let sum = 0;
        for (let i = 0; i < d.length; i += 4) sum += (d[i] + d[i + 1] + d[i + 2]) / 3;
        return sum / (d.length / 4) / 255;
      }, png);
    };
    const lightCalls = await lightness('#usage-calls');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.reload();
    await settle(page);
    await drawn();
    const darkCalls = await lightness('#usage-calls');
    check(lightCalls > 0.8 && darkCalls < 0.4, `the calls chart is ${Math.round(lightCalls * 100)}% light in light mode and ${Math.round(darkCalls * 100)}% in dark mode`);
    await axeCheck(page, 'dark overview');
    await page.emulateMedia({ colorScheme: 'light' });
    for (const range of ['24h', '30d']) {
      await page.click(`#usage-ranges a[data-range="${range}"]`);
      await page.waitForURL(new RegExp(`range=${range}`));
      await settle(page);
      await drawn();
      const buckets = range === '24h' ? 24 : 30;
      const got = await page.evaluate(async (q) => (await (await fetch(`/api/usage?range=${q}`)).json()).buckets.length, range);
      check(got === buckets && (await page.getAttribute('#usage-calls', 'alt')).includes(range === '24h' ? 'per hour' : 'per day'), `Overview over ${range}: ${got} buckets`);
    }

    await page.goto(`${BASE}/`);
    await settle(page);
    await page.click(`a[data-usage="${CONNECTION_ID}"]`);
    await page.waitForURL(new RegExp(`/overview\\?connection=${CONNECTION_ID}`));
    await settle(page);
    const subject = await page.textContent('#usage-subject');
    check(/github/i.test(subject) && !subject.includes(CONNECTION_ID) && (await page.$('#usage-subject a[href^="/overview"]')), `a connection's Overview says ${subject}`);
    await layout(page, 1366, 'overview-connection');

    await page.goto(`${BASE}/agents/${AGENT_ID}`);
    await settle(page);
    await page.waitForSelector('#agent-usage:not([hidden])');
    await drawn();
    const link = await page.getAttribute('#agent-usage-link', 'href');
    check(link === `/overview?range=7d&agent=${AGENT_ID}`, `the agent's usage links ${link}`);
    await page.click('#agent-usage-link');
    await settle(page);
    check((await page.textContent('#usage-subject')).includes('agent Issue reader'), `the agent's Overview says ${await page.textContent('#usage-subject')}`);
  }

  step('a member sees no admin button on Integrations, and a refusal does not ask for an API key');
  {
    const ctxM = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    const pageM = await newPage(ctxM);
    await pageM.goto(MEMBER_LINK);
    await pageM.fill('#password', PASSWORD);
    await pageM.fill('#confirm', PASSWORD);
    await pageM.click('button[type=submit]');
    await pageM.waitForURL(`${BASE}/`);
    await settle(pageM);
    await pageM.waitForSelector('#openapi-list li[data-api=notes]');
    check(!(await pageM.$('#openapi-list button[data-delete]')) && !(await pageM.$('#openapi-add')), 'a member is offered Delete on the workspace\'s API, or Add an API');
    const refused = await pageM.evaluate(async () => {
      const r = await fetch('/api/openapi-providers/notes', { method: 'DELETE', headers: { 'X-CSRF-Token': document.querySelector('meta[name=csrf-token]').content } });
      return { status: r.status, message: ((await r.json()).error || {}).message || '' };
    });
    check(refused.status === 403 && !/API key/i.test(refused.message) && /admin/.test(refused.message), `a member's delete was answered ${JSON.stringify(refused)}`);
    await axeCheck(pageM, 'member integrations');
    await ctxM.close();
  }

  summary.ok = summary.failures.length === 0;
} catch (err) {
  if (!summary.failures.includes(err.message)) summary.failures.push(String(err && err.stack || err));
} finally {
  await browser.close();
}
console.log(JSON.stringify(summary));
process.exit(summary.ok ? 0 : 1);
