// What the page scripts of go test ./e2e/browser share: the run's summary and its
// checks, Chromium, and how a page is judged: laid out (table headers over their
// columns, nothing past the window's sides, no short word broken, checkboxes their own
// size), photographed into $SCREENSHOT_DIR, and checked by axe-core.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
export const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const SHOTS = env('SCREENSHOT_DIR');

export const summary = { ok: false, failures: [], steps: [], pages: [], screenshots: [], axe: {} };
// soft records a failed check and goes on, so one run reports every layout problem.
export const soft = (cond, msg) => { if (!cond) summary.failures.push(msg); return cond; };
export const check = (cond, msg) => { if (!cond) { summary.failures.push(msg); throw new Error(msg); } };
export const step = (name) => { summary.steps.push(name); console.error(`-- ${name}`); };
export const waitUntil = async (page, fn, arg, msg) => {
  try { await page.waitForFunction(fn, arg, { timeout: 30000 }); } catch (err) { check(false, `${msg} (${err.message.split('\n')[0]})`); }
};

fs.mkdirSync(SHOTS, { recursive: true });
export const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
});

export async function newPage(ctx) {
  const page = await ctx.newPage();
  page.setDefaultTimeout(15000);
  page.on('pageerror', (err) => summary.failures.push(`page error on ${page.url()}: ${err.message}`));
  page.on('dialog', (d) => d.accept());
  return page;
}

export async function axeCheck(page, what) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(AXE_SOURCE + '\n;true');
  const bad = await page.evaluate(async () => {
    const r = await window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] });
    return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}, ${v.nodes.length}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
  });
  summary.axe[what] = bad.length;
  soft(bad.length === 0, `${what}: axe-core found serious or critical violations: ${bad.join('; ')}`);
}

// layoutProblems measures the page as laid out: table headers off their columns (or,
// where a narrow window shows rows as cards, cells without their heading), elements
// reaching past the window's sides, and short words broken across two lines.
export function layoutProblems() {
  const out = { columns: [], overflow: [], wraps: [] };
  const name = (n) => n.tagName.toLowerCase() + (n.id ? '#' + n.id : '') + (n.className && typeof n.className === 'string' ? '.' + n.className.trim().split(/\s+/).join('.') : '');
  const shown = (n) => { const r = n.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(n).visibility !== 'hidden'; };
  // A cell's column, counting the colspans before it.
  const columnOf = (cell) => { let c = 0; for (let s = cell.previousElementSibling; s; s = s.previousElementSibling) c += s.colSpan || 1; return c; };
  for (const table of document.querySelectorAll('main table')) {
    if (!shown(table) || !table.tHead) continue;
    const heads = [...table.tHead.rows[0].cells];
    // A narrow window hides the header row (1 px, clipped) and labels each cell instead.
    const headShown = table.tHead.getBoundingClientRect().width > 2;
    const where = table.id || (table.closest('[aria-label]') || table).getAttribute('aria-label') || name(table);
    for (const row of table.tBodies[0] ? table.tBodies[0].rows : []) {
      for (const cell of row.cells) {
        if ((cell.colSpan || 1) > 1 || !shown(cell)) continue;
        const head = heads[columnOf(cell)];
        if (!head) continue;
        if (headShown) {
          const h = head.getBoundingClientRect(), c = cell.getBoundingClientRect();
          if (Math.abs(h.left - c.left) > 1 || Math.abs(h.right - c.right) > 1) {
            out.columns.push(`${where}: "${head.textContent.trim()}" spans ${Math.round(h.left)}–${Math.round(h.right)} px, its cell "${cell.textContent.trim().slice(0, 30)}" ${Math.round(c.left)}–${Math.round(c.right)} px`);
          }
        } else if (cell.tagName === 'TD' && head.textContent.trim() && cell.textContent.trim() && cell.dataset.label !== head.textContent.trim()) {
          out.columns.push(`${where}: a card's cell "${cell.textContent.trim().slice(0, 30)}" is not labelled "${head.textContent.trim()}"`);
        }
      }
    }
  }
  // Nothing past the window's sides, unless a scrolling or clipping box holds it in
  // (then that box is what must fit), or it is hidden for screen readers only.
  const W = document.documentElement.clientWidth;
  const clipped = (n) => { for (let p = n.parentElement; p && p !== document.body; p = p.parentElement) { const o = getComputedStyle(p).overflowX; if (o !== 'visible') return true; } return false; };
  for (const n of document.querySelectorAll('body *')) {
    if (n.closest('.sr, .skip, dialog:not([open]), [hidden]') || !shown(n)) continue;
    const r = n.getBoundingClientRect();
    if ((r.right > W + 1 || r.left < -1) && !clipped(n)) out.overflow.push(`${name(n)} spans ${Math.round(r.left)}–${Math.round(r.right)} px of ${W}`);
  }
  if (document.documentElement.scrollWidth > W + 1) out.overflow.push(`the page is ${document.documentElement.scrollWidth} px wide in a ${W} px window`);
  // A word of fewer than 12 characters laid out on more than one line. A word is what
  // lies between spaces, or after a hyphen, where a line may rightly break.
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    if (!t.data.trim() || !t.parentElement || t.parentElement.closest('.sr, script, style, textarea, option')) continue;
    range.selectNodeContents(t);
    if (range.getClientRects().length < 2) continue;
    const re = /[^\s-]+-*/g;
    for (let m = re.exec(t.data); m; m = re.exec(t.data)) {
      if (m[0].length >= 12) continue;
      range.setStart(t, m.index);
      range.setEnd(t, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top / 4)));
      if (tops.size > 1) out.wraps.push(`"${m[0]}" in ${name(t.parentElement)}`);
    }
  }
  // A checkbox or radio button is its own size, beside its label's text.
  out.controls = [...document.querySelectorAll('input[type=radio], input[type=checkbox]')].filter((n) => shown(n) && n.getBoundingClientRect().width > 40)
    .map((n) => `${name(n)} is ${Math.round(n.getBoundingClientRect().width)} px wide`).slice(0, 8);
  out.overflow = out.overflow.slice(0, 8);
  out.wraps = [...new Set(out.wraps)].slice(0, 8);
  out.columns = out.columns.slice(0, 8);
  return out;
}

// settle waits until the page's script has filled every part it loads.
export async function settle(page) {
  await page.waitForLoadState('networkidle');
  await waitUntil(page, () => !document.querySelector('[aria-busy=true]') && !/Loading/.test(document.querySelector('main').textContent), undefined, `${page.url()} did not finish loading`);
}

// layout checks and photographs one page at the window's width.
export async function layout(page, width, name) {
  await settle(page);
  const res = await page.evaluate(layoutProblems);
  soft(res.columns.length === 0, `${width} px ${name}: table headers off their columns: ${res.columns.join('; ')}`);
  soft(res.overflow.length === 0, `${width} px ${name}: past the window's sides: ${res.overflow.join('; ')}`);
  soft(res.wraps.length === 0, `${width} px ${name}: short words broken across lines: ${res.wraps.join('; ')}`);
  soft(res.controls.length === 0, `${width} px ${name}: checkboxes or radio buttons stretched: ${res.controls.join('; ')}`);
  const file = path.join(SHOTS, `${width}-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  summary.screenshots.push(file);
  await axeCheck(page, `${width} ${name}`);
}
