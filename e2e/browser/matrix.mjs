// The browser cells of the surface matrix (TestSurfaceMatrix): signed in as the owner,
// each tool of TOOLS (one of every kind) is pickable in the agent builder and runs
// from its Try it page. Run by go test ./e2e, which starts the server with every kind
// of tool set up and passes everything in the environment. The last line of stdout is
// a JSON summary: per tool, whether the builder offers it and what Try it answered.
import { chromium } from 'playwright-core';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const BASE = env('BASE_URL');
const EMAIL = env('EMAIL');
const PASSWORD = env('PASSWORD');
// TOOLS is a JSON object: tool name → the arguments to fill in Try it's form.
const TOOLS = JSON.parse(env('TOOLS'));
// AGENT_ID is an agent made through the API; the builder saves it unchanged.
const AGENT_ID = env('AGENT_ID');

const summary = { tools: {}, failures: [], resaved: { before: [], after: [], error: '' } };
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
});
try {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  page.setDefaultTimeout(15000);
  page.on('dialog', (d) => d.accept());
  await page.goto(`${BASE}/signin`);
  await page.fill('#email', EMAIL);
  await page.fill('#password', PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForURL(`${BASE}/`);

  await page.goto(`${BASE}/agents/new`);
  await page.waitForSelector('#tool-picker');
  for (const tool of Object.keys(TOOLS)) {
    summary.tools[tool] = { pickable: false, answer: '', error: '' };
    try {
      await page.waitForSelector(`#pick-${tool}`, { state: 'attached', timeout: 5000 });
      summary.tools[tool].pickable = true;
    } catch { /* not offered */ }
  }

  // The agent made through the API, opened and saved in the builder as it is.
  try {
    const toolsOf = async () => page.evaluate(async (id) => ((await (await fetch(`/api/agents/${id}`)).json()).tools || []).map((t) => t.tool), AGENT_ID);
    summary.resaved.before = await toolsOf();
    await page.goto(`${BASE}/agents/${AGENT_ID}`);
    await page.waitForSelector('#agent-save');
    await page.waitForSelector('#tool-picker input[type=checkbox]', { state: 'attached' });
    await page.evaluate(() => { document.querySelector('#flash').textContent = ''; });
    await page.click('#agent-save');
    await page.waitForFunction(() => document.querySelector('#flash').textContent.startsWith('Saved agent'));
    summary.resaved.after = await toolsOf();
  } catch (err) {
    summary.resaved.error = err.message.split('\n')[0];
  }

  for (const [tool, args] of Object.entries(TOOLS)) {
    const cell = summary.tools[tool];
    try {
      await page.goto(`${BASE}/tools/${tool}`);
      // The form is the page's once the tool is found and its fields drawn (the run
      // button is in the page before that, without its handler).
      await page.waitForFunction(() => document.querySelector('#not-found') || (document.querySelector('#try-fields') || {}).childElementCount > 0);
      if (await page.$('#not-found')) {
        cell.error = `the page says: ${(await page.textContent('#main')).trim().slice(0, 200)}`;
        continue;
      }
      for (const [field, value] of Object.entries(args)) await page.fill(`[data-path=${field}] input`, String(value));
      await page.click('#try-run');
      // A tool that may write asks first, in the page's own dialog.
      const shown = await Promise.race([
        page.waitForSelector('#confirm-dialog[open]').then(() => 'confirm'),
        page.waitForSelector('#try-result:not([hidden])').then(() => 'result'),
        page.waitForSelector('#try-error:not([hidden])').then(() => 'error'),
      ]);
      if (shown === 'confirm') {
        await page.click('#confirm-ok');
        await Promise.race([page.waitForSelector('#try-result:not([hidden])'), page.waitForSelector('#try-error:not([hidden])')]);
      }
      if (await page.isVisible('#try-error')) cell.error = (await page.textContent('#try-error')).trim();
      else cell.answer = (await page.textContent('#try-output')).trim();
    } catch (err) {
      cell.error = `the page failed: ${err.message.split('\n')[0]}`;
    }
  }
} catch (err) {
  summary.failures.push(err.message.split('\n')[0]);
} finally {
  await browser.close();
}
console.log(JSON.stringify(summary));
