// Switchboard's Overview page: the figures of the tool calls the signed-in person may
// see over 24 hours, 7 days or 30 days (of the workspace, or of one agent or connection
// with ?agent= or ?connection=), from /api/usage, with the charts the server draws
// (/api/usage/chart.svg). Loaded after app.js, whose helpers it uses; plain JavaScript.
'use strict';
(() => {
  const SB = window.Switchboard;
  if (!SB) return;
  const { $, el, fill, api, describe } = SB;
  const enc = encodeURIComponent;
  const RANGES = { '24h': '24 hours', '7d': '7 days', '30d': '30 days' };
  const ms = (v) => (v === undefined || v === null ? '—' : v < 1000 ? `${Math.round(v)} ms` : `${(v / 1000).toFixed(v < 10000 ? 2 : 1)} s`);
  const pct = (v) => `${(100 * v).toFixed(1)}%`;
  const count = (n) => n.toLocaleString('en-US');

  async function overviewPage() {
    const params = new URLSearchParams(location.search);
    const range = RANGES[params.get('range')] ? params.get('range') : '24h';
    const agent = params.get('agent') || '';
    const conn = params.get('connection') || '';
    // The query the API and the charts take, and the one the range links keep.
    const q = new URLSearchParams({ range });
    const keep = new URLSearchParams();
    if (agent) { q.set('agent_id', agent); keep.set('agent', agent); }
    if (conn) { q.set('connection_id', conn); keep.set('connection', conn); }
    for (const a of document.querySelectorAll('#usage-ranges a')) {
      const k = new URLSearchParams(keep);
      k.set('range', a.dataset.range);
      a.href = `/overview?${k}`;
      if (a.dataset.range === range) a.setAttribute('aria-current', 'page');
    }
    let subject = SB.IS_ADMIN ? 'the workspace' : 'you and your agents';
    try {
      if (agent) subject = `agent ${(await api('GET', `/api/agents/${enc(agent)}`)).name}`;
      if (conn) {
        const c = await api('GET', `/api/connections/${enc(conn)}`);
        subject = `${agent ? subject + ' on ' : ''}${c.provider} ${c.account_label}`;
      }
    } catch (err) {
      fill($('#usage-figures'), el('div', {}, el('dt', { text: 'Figures' }), el('dd', { class: 'error', text: describe(err) })));
      fill($('#usage-tools'), el('p', { class: 'muted', text: 'No figures.' }));
      return;
    }
    fill($('#usage-subject'), `Tool calls of ${subject} over the last ${RANGES[range]}.`,
      agent || conn ? [' ', el('a', { href: `/overview?range=${range}`, text: 'All calls' })] : null);
    let o;
    try {
      o = await api('GET', `/api/usage?${q}`);
    } catch (err) {
      fill($('#usage-figures'), el('div', {}, el('dt', { text: 'Figures' }), el('dd', { class: 'error', text: describe(err) })));
      fill($('#usage-tools'), el('p', { class: 'muted', text: 'No figures.' }));
      return;
    }
    const t = o.total;
    fill($('#usage-figures'),
      el('div', {}, el('dt', { text: 'Calls' }), el('dd', { id: 'usage-total-calls', text: count(t.calls) })),
      el('div', {}, el('dt', { text: 'Errors' }), el('dd', { id: 'usage-total-errors', text: t.calls ? `${count(t.errors)} (${pct(t.error_share)})` : '—' })),
      el('div', {}, el('dt', { text: 'p50 latency' }), el('dd', { id: 'usage-p50', text: ms(t.p50_ms) })),
      el('div', {}, el('dt', { text: 'p95 latency' }), el('dd', { id: 'usage-p95', text: ms(t.p95_ms) })));
    const words = t.calls ? `${count(t.calls)} calls, ${count(t.errors)} errors (${pct(t.error_share)})` : 'no calls';
    const per = o.step === 'hour' ? 'hour' : 'day';
    const calls = $('#usage-calls');
    calls.alt = `Calls per ${per} of ${subject} over the last ${RANGES[range]}: ${words}.`;
    calls.src = `/api/usage/chart.svg?chart=calls&${q}`;
    const lat = $('#usage-latency');
    lat.alt = `p50 and p95 latency per ${per} of ${subject} over the last ${RANGES[range]}: ${t.calls ? `p50 ${ms(t.p50_ms)}, p95 ${ms(t.p95_ms)}` : 'no calls'}.`;
    lat.src = `/api/usage/chart.svg?chart=latency&${q}`;
    if (!o.top_tools.length) {
      fill($('#usage-tools'), el('p', { class: 'muted', text: `No calls in the last ${RANGES[range]}.` }));
      return;
    }
    fill($('#usage-tools'), SB.scrollBox('Top tools', el('table', { id: 'usage-tools-table' },
      el('thead', {}, el('tr', {}, ['Tool', 'Calls', 'Errors', 'p50', 'p95'].map((h, i) => el('th', { scope: 'col', class: i ? 'num' : null, text: h })))),
      el('tbody', {}, o.top_tools.map((tl) => el('tr', { 'data-tool': tl.tool },
        el('th', { scope: 'row' }, el('a', { href: `/tools/${enc(tl.tool)}`, text: tl.tool })),
        el('td', { class: 'num', text: count(tl.calls) }),
        el('td', { class: 'num', text: tl.errors ? `${count(tl.errors)} (${pct(tl.error_share)})` : '0' }),
        el('td', { class: 'num', text: ms(tl.p50_ms) }),
        el('td', { class: 'num', text: ms(tl.p95_ms) })))))));
  }

  if (document.body.dataset.page === 'overview') overviewPage();
})();
