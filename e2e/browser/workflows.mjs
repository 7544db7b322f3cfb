// The Workflows section, driven by run.mjs (TestBrowser): a workflow written in the
// editor is refused with its problem at its step, dry-run, saved, drawn, run against
// the fake GitHub and followed on its run page; a second one waits for confirmation
// and is canceled there; an agent picks the first. axe-core checks every page.

const TRIAGE = (qField) => `name: triage_issue
description: Reads an issue and searches repositories for its title
parameters:
  type: object
  properties:
    number: {type: integer}
  required: [number]
steps:
  - name: read
    tool: github_get_issue
    args: {owner: octo-org, repo: hello-world, issue_number: "\${{ params.number }}"}
  - name: search
    tool: github_search_repositories
    needs: [read]
    args: {${qField}: "\${{ steps.read.output.title }}"}
outputs:
  title: "\${{ steps.read.output.title }}"
triggers:
  - schedule: "0 3 29 2 *"
    params: {number: 1347}
  - github: {events: [issues]}
`;
const HOOK_SECRET = 'e2e-webhook-secret-0123456789';

const CLOSE = `name: close_issue
description: Closes the issue
steps:
  - name: close
    tool: github_update_issue
    args: {owner: octo-org, repo: hello-world, issue_number: 1347, state: closed}
`;

export async function workflowsUI({ page, browser, ctx, BASE, step, check, audit, axeCheck, waitUntil, shot, summary, newPage, confirmInPage }) {
  const out = { weights: {} };
  summary.workflow = out;

  step('workflows: an empty list, then a new workflow refused with its problem at its step');
  await page.goto(`${BASE}/workflows`);
  await page.waitForSelector('#workflow-list:not([aria-busy])');
  await audit(page, 'workflows list empty');
  await page.click('#new-workflow');
  await page.waitForURL(`${BASE}/workflows/new`);
  await waitUntil(page, () => document.querySelector('#wf-definition').value.includes('steps:'), undefined, 'the editor did not start with a definition');
  step('workflows: the editor offers tool names, a tool\'s connection labels and its arguments, and adds a step');
  await waitUntil(page, () => [...document.querySelectorAll('#wf-helper-tools option')].some((o) => o.value === 'github_get_issue'), undefined, 'the editor does not offer github_get_issue');
  await page.fill('#wf-helper-tool', 'github_get_issue');
  await waitUntil(page, () => /owner \(required\)/.test(document.querySelector('#wf-helper-args').textContent), undefined, 'the editor does not list github_get_issue\'s arguments');
  const helped = await page.evaluate(() => ({ args: document.querySelector('#wf-helper-args').textContent,
    conns: [...document.querySelectorAll('#wf-helper-conns option')].map((o) => o.value) }));
  check(['owner (required)', 'repo (required)', 'issue_number (required)'].every((a) => helped.args.includes(a)) && helped.conns.length > 0 && helped.conns.every((c) => c && !/^con_/.test(c)),
    `the editor's help for github_get_issue: ${JSON.stringify(helped)}`);
  await page.click('#wf-helper-add');
  const added = await page.inputValue('#wf-definition');
  check(/- name: get_issue\n    tool: github_get_issue\n    args:\n      owner: ""\n      repo: ""\n      issue_number: ""\n/.test(added), `Add the step wrote ${added}`);
  await page.fill('#wf-definition', TRIAGE('qq'));
  await page.click('#wf-save');
  await page.waitForSelector('#wf-steps .wfstep.invalid[data-step=search]');
  const bad = await page.evaluate(() => ({
    problems: [...document.querySelectorAll('#wf-steps .wfstep[data-step=search] .problems li')].map((n) => ({ field: n.dataset.field, text: n.textContent })),
    readInvalid: document.querySelector('#wf-steps .wfstep[data-step=read]').classList.contains('invalid'),
    focused: document.activeElement && document.activeElement.closest('.wfstep') && document.activeElement.closest('.wfstep').dataset.step,
    summary: document.querySelector('#wf-summary').textContent,
  }));
  out.problems = bad.problems;
  check(bad.problems.some((p) => p.field.startsWith('args.') && p.text.includes('qq')) && !bad.readInvalid && bad.focused === 'search' && bad.summary.includes('at 1 step'),
    `the refused definition's problems are not shown at step search alone: ${JSON.stringify(bad)}`);
  await page.click('#wf-steps .wfstep[data-step=search] .problems li[data-field="args.qq"] button');
  const selected = await page.evaluate(() => { const t = document.querySelector('#wf-definition'); return t.value.slice(t.selectionStart, t.selectionEnd); });
  check(selected === 'qq', `"Show in the definition" selected ${JSON.stringify(selected)}, want qq`);
  // The refused draft is drawn all the same, by the server, as written.
  await waitUntil(page, () => { const i = document.querySelector('#wf-graph'); return !document.querySelector('#wf-graph-box').hidden && i.src.startsWith('data:image/svg+xml') && i.complete && i.naturalWidth > 0; }, undefined, 'the refused draft was not drawn');
  check(decodeURIComponent(await page.getAttribute('#wf-graph', 'src')).includes('data-from="read" data-to="search"') && (await page.textContent('#wf-graph-what')).includes('not saved'),
    'the draft\'s graph does not draw its needs, or does not say it is not saved');
    await audit(page, 'workflow editor problems');
  await shot(page, '09-workflow-problems');

  step('workflows: a bad name, a misspelt tool and a bad argument are reported in one pass');
  await page.fill('#wf-definition', TRIAGE('qq').replace('name: triage_issue', 'name: Triage-Issue').replace('tool: github_get_issue', 'tool: github_get_isue'));
  await page.click('#wf-save');
  await page.waitForSelector('#wf-steps .wfstep.invalid[data-step=read]');
  const allAtOnce = await page.$$eval('#wf-steps .wfstep.invalid .problems li', (ns) => ns.map((n) => `${n.closest('.wfstep').dataset.step || ''}:${n.dataset.field}`));
  check(allAtOnce.includes(':name') && allAtOnce.includes('read:tool') && allAtOnce.includes('search:args.qq'), `one Save reported ${JSON.stringify(allAtOnce)}, want the name, read's tool and search's qq`);

  step('workflows: a dry run, then save, and the graph the server draws');
  await page.fill('#wf-definition', TRIAGE('q'));
  await page.fill('#wf-params', '{"number": 1347}');
  await page.click('#wf-dryrun');
  await waitUntil(page, () => document.querySelector('#wf-summary').textContent.startsWith('Dry run passed'), undefined, 'the dry run did not pass');
  const planned = await page.$$eval('#wf-steps .wfstep', (ns) => ns.map((n) => `${n.dataset.step}:${n.querySelector('.badge') ? n.querySelector('.badge').textContent : ''}:${n.classList.contains('invalid')}`));
  check(planned.join(',') === 'read:reads:false,search:reads:false', `after the dry run the steps show ${planned.join(', ')}`);
  const accounts = await page.$$eval('#wf-steps .wfstep .plan-account', (ns) => ns.map((n) => n.textContent));
  check(accounts.length === 2 && accounts.every((a) => a.startsWith('on ') && !/con_[a-z0-9]/.test(a)), `the dry run's plan names the accounts ${JSON.stringify(accounts)}`);
  await audit(page, 'workflow editor dry run');
  await page.click('#wf-save');
  await page.waitForURL(`${BASE}/workflows/triage_issue`);
  await waitUntil(page, () => { const i = document.querySelector('#wf-graph'); return i && i.complete && i.naturalWidth > 0; }, undefined, 'the graph image did not load');
  const graph = await page.evaluate(async () => {
    const img = document.querySelector('#wf-graph');
    const r = await fetch(img.src, { credentials: 'same-origin' });
    return { status: r.status, type: r.headers.get('content-type'), svg: await r.text(), alt: img.alt };
  });
  check(graph.status === 200 && graph.type === 'image/svg+xml' && graph.svg.includes('data-from="read" data-to="search"') && graph.alt.includes('search (github_search_repositories) after read'),
    `the graph answered ${graph.status} ${graph.type}, alt ${JSON.stringify(graph.alt)}`);
  check(await page.isVisible('#wf-hooks [data-hook=github]') && !(await page.$('#wf-hooks [data-hook=slack]')), 'the GitHub trigger has no webhook form, or Slack has one');
  await page.fill('#wf-hook-github-secret', 'short');
  await page.click('#wf-hooks [data-hook=github] button[type=submit]');
  await page.waitForSelector('#wf-hook-github-error:not([hidden])');
  await page.fill('#wf-hook-github-secret', HOOK_SECRET);
  await page.click('#wf-hooks [data-hook=github] button[type=submit]');
  await waitUntil(page, () => document.querySelector('#flash').textContent.startsWith('Saved the GitHub secret'), undefined, 'the webhook secret was not saved');
  const hook = await page.evaluate(() => ({ url: document.querySelector('#wf-hook-github-url').value, secret: document.querySelector('#wf-hook-github-secret').value, html: document.documentElement.outerHTML }));
  check(hook.url === `${BASE}/hooks/workflows/default/triage_issue/github` && hook.secret === '' && !hook.html.includes(HOOK_SECRET), `after setting the webhook secret the page shows ${hook.url} and keeps the secret: ${hook.secret !== '' || hook.html.includes(HOOK_SECRET)}`);
  out.hook_url = hook.url;
  await audit(page, 'workflow editor saved');
  await shot(page, '10-workflow-saved');

  step('workflows: run it against the fake GitHub and follow its run page');
  await page.fill('#wf-params', '{"number": "seven"}');
  await page.click('#wf-run');
  await page.waitForSelector('#wf-params[aria-invalid=true]');
  const refusedRun = await page.textContent('#wf-summary');
  check(refusedRun.includes('parameters.number') && page.url() === `${BASE}/workflows/triage_issue`, `a run with a bad parameter said ${JSON.stringify(refusedRun)} at ${page.url()}`);
  await page.fill('#wf-params', '{"number": 1347}');
  await page.click('#wf-run');
  await page.waitForURL(/\/workflow-runs\//);
  out.run_id = page.url().split('/').pop();
  await page.waitForSelector('#run-step-list [data-step=search][data-state=completed]', { timeout: 60000 });
  await page.waitForSelector('#run-output-box:not([hidden])');
  await page.click('#run-step-list [data-step=read] details summary');
  const run = await page.evaluate(() => ({
    summary: document.querySelector('#run-summary').textContent,
    input: document.querySelector('#run-step-list [data-step=read] details pre').textContent,
    output: document.querySelector('#run-step-list [data-step=read] details pre:last-of-type').textContent,
    searchInput: document.querySelector('#run-step-list [data-step=search] details pre').textContent,
    cancel: !document.querySelector('#run-cancel').hidden,
    outputs: document.querySelector('#run-output').textContent,
  }));
  out.run = run;
  check(run.summary.includes('completed') && run.summary.includes('2 of 2') && /"issue_number": 1347/.test(run.input) && run.output.includes('Crash when the config file is empty') &&
    run.searchInput.includes('"q": "Crash when the config file is empty"') && !run.cancel && run.outputs.includes('"title"'), `the run page shows ${JSON.stringify(run)}`);
  await waitUntil(page, () => { const i = document.querySelector('#run-graph'); return i && i.complete && i.naturalWidth > 0; }, undefined, 'the run graph did not load');
  await audit(page, 'workflow run');
  await shot(page, '11-workflow-run');

  step('workflows: the list names the trigger and the last run');
  await page.click('nav >> text=Workflows');
  await page.waitForSelector('#workflows-table tr[data-workflow=triage_issue]');
  const row = await page.evaluate(() => {
    const r = document.querySelector('#workflows-table tr[data-workflow=triage_issue]');
    return { triggers: r.querySelector('.triggers').textContent, last: r.querySelector('.lastrun').textContent, href: r.querySelector('.lastrun a') && r.querySelector('.lastrun a').getAttribute('href') };
  });
  check(row.triggers.includes('schedule 0 3 29 2 *') && row.last.includes('completed') && row.href === `/workflow-runs/${out.run_id}`, `the list row is ${JSON.stringify(row)}`);
  await audit(page, 'workflows list');

  step('workflows: a run waiting for confirmation is canceled on its run page');
  const csrf = await page.getAttribute('meta[name=csrf-token]', 'content');
  const settings = async (body) => page.evaluate(async ([b, token]) => {
    const r = await fetch('/api/mcp-settings', b ? { method: 'PUT', credentials: 'same-origin', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': token }, body: JSON.stringify(b) } : { credentials: 'same-origin' });
    return { status: r.status, body: await r.json() };
  }, [body, csrf]);
  const before = await settings();
  check(before.status === 200, `GET /api/mcp-settings answered ${before.status}`);
  const pick = (b) => ({ confirm: b.confirm || '', approval: b.approval || '', tool_mode: b.tool_mode || '', run_tools: b.run_tools || '' });
  const put = await settings({ ...pick(before.body), confirm: 'destructive' });
  check(put.status === 200, `PUT /api/mcp-settings answered ${put.status}`);
  await page.goto(`${BASE}/workflows/new`);
  await waitUntil(page, () => document.querySelector('#wf-definition').value.includes('steps:'), undefined, 'the editor did not start');
  await page.fill('#wf-definition', CLOSE);
  await page.click('#wf-save');
  await page.waitForURL(`${BASE}/workflows/close_issue`);
  // The first run is canceled from elsewhere (the API): its page, left open, refreshes
  // itself to say so.
  await page.click('#wf-run');
  await page.waitForURL(/\/workflow-runs\//);
  await page.waitForSelector('#run-cancel:not([hidden])');
  const elsewhere = await page.evaluate(async ([id, token]) => {
    window.sameDocument = true;
    const r = await fetch(`/api/workflow-runs/${id}/cancel`, { method: 'POST', credentials: 'same-origin', headers: { 'X-CSRF-Token': token } });
    return r.status;
  }, [page.url().split('/').pop(), csrf]);
  check(elsewhere === 200, `canceling the run through the API answered ${elsewhere}`);
  await waitUntil(page, () => document.querySelector('#run-summary').textContent.includes('canceled') && document.querySelector('#run-cancel').hidden, undefined, 'the open run page did not refresh to the cancellation');
  check(await page.evaluate(() => window.sameDocument === true), 'the run page reloaded instead of refreshing itself');
  // The second is canceled with the page's own button.
  await page.goto(`${BASE}/workflows/close_issue`);
  await page.waitForSelector('#wf-run:not([hidden])');
  await page.click('#wf-run');
  await page.waitForURL(/\/workflow-runs\//);
  out.canceled_run_id = page.url().split('/').pop();
  await page.waitForSelector('#run-cancel:not([hidden])');
  await waitUntil(page, () => document.querySelector('#run-summary').textContent.includes('input required'), undefined, 'the destructive run does not wait for confirmation');
  await audit(page, 'workflow run waiting');
  await page.click('#run-cancel');
  // The page's own confirmation, as everywhere else in the UI (not the browser's).
  await page.waitForSelector('#confirm-dialog[open]');
  await axeCheck(page, 'workflow run cancel confirmation');
  const said = await confirmInPage(page);
  check(said.title === 'Cancel this run?' && said.text.includes('Keep it running'), `the cancel confirmation reads ${said.text}`);
  await waitUntil(page, () => document.querySelector('#run-summary').textContent.includes('canceled') && document.querySelector('#run-cancel').hidden, undefined, 'Cancel did not cancel the run');
  out.canceled = (await page.textContent('#run-step-list')).includes('not run');
  check(out.canceled, 'the canceled run\'s step is not shown as not run');
  const after = await settings(pick(before.body));
  check(after.status === 200, `restoring /api/mcp-settings answered ${after.status}`);

  step('workflows: an agent picks the workflow in the builder');
  await page.goto(`${BASE}/agents/new`);
  await page.waitForSelector('[data-provider=workflows]');
  await page.fill('#agent-name', 'Workflow bot');
  await page.click('[data-provider=workflows] > summary');
  await page.check('#pick-run_flow__triage_issue');
  check((await page.textContent('#selection')).includes('run_flow__triage_issue'), 'the selection does not name the picked workflow');
  await axeCheck(page, 'agent builder workflows');
  await page.click('#agent-save');
  await page.waitForURL(/\/agents\/agt_/);
  const agentID = page.url().split('/').pop();
  const agent = await page.evaluate(async (id) => (await fetch(`/api/agents/${id}`, { credentials: 'same-origin' })).json(), agentID);
  out.agent_tools = (agent.tools || []).map((t) => `${t.tool}@${t.connection_id || ''}`);
  check(out.agent_tools.join(',') === 'run_flow__triage_issue@', `the saved agent's tools are ${out.agent_tools.join(', ')}`);
  await page.reload();
  await page.waitForSelector('#pick-run_flow__triage_issue', { state: 'attached' });
  check(await page.isChecked('#pick-run_flow__triage_issue'), 'the saved workflow is not picked when the agent is opened again');

  step('workflows: narrow and dark');
  const pages = ['/workflows', '/workflows/triage_issue', `/workflow-runs/${out.run_id}`];
  await page.setViewportSize({ width: 390, height: 844 });
  for (const p of pages) {
    await page.goto(BASE + p);
    await page.waitForLoadState('networkidle');
    await audit(page, `narrow ${p.replace(out.run_id, 'run')}`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.emulateMedia({ colorScheme: 'dark' });
  for (const p of pages) {
    await page.goto(BASE + p);
    await page.waitForLoadState('networkidle');
    await axeCheck(page, `dark ${p.replace(out.run_id, 'run')}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });

  step('workflows: page weights, cold and warm');
  const state = await ctx.storageState();
  for (const p of pages) {
    const wctx = await browser.newContext({ viewport: { width: 1366, height: 900 }, storageState: state });
    const wpage = await newPage(wctx);
    let bytes = 0;
    const pending = [];
    wpage.on('requestfinished', (req) => pending.push(req.sizes().then((z) => { bytes += z.responseBodySize + z.responseHeadersSize; }).catch(() => {})));
    await wpage.goto(BASE + p);
    await wpage.waitForLoadState('networkidle');
    await Promise.all(pending.splice(0));
    const cold = bytes;
    bytes = 0;
    await wpage.reload();
    await wpage.waitForLoadState('networkidle');
    await Promise.all(pending.splice(0));
    out.weights[p.replace(out.run_id, 'run')] = { cold_bytes: cold, warm_bytes: bytes };
    await wctx.close();
  }
}
