// Switchboard's workflow pages: the list, the editor (the definition as text, Save and
// Dry run, each problem shown at its step, the graph the server draws) and a run's page
// (each step's state, timing, input and output, refreshed while it runs, Cancel).
// Loaded after app.js, whose helpers it uses; plain JavaScript, no build step.
'use strict';
(() => {
  const SB = window.Switchboard;
  if (!SB) return;
  const { $, el, fill, api, describe, alertPage, flash, fmtTime, scrollBox, ask } = SB;
  const enc = encodeURIComponent;
  const FINAL = new Set(['completed', 'failed', 'canceled']);
  const stateBadge = (s) => el('span', { class: `status ${s}`, text: String(s).replace('_', ' ') });
  // took renders a step's duration, given in seconds.
  const took = (s) => (s < 1 ? `${Math.round(s * 1000)} ms` : `${s.toFixed(s < 10 ? 2 : 1)} s`);
  const pretty = (v) => JSON.stringify(v, null, 2);
  // jsonBlock shows a JSON value in a block keyboard users can focus and scroll.
  const jsonBlock = (label, v) => el('pre', { tabindex: '0', role: 'region', 'aria-label': label }, el('code', { text: v === undefined ? '—' : pretty(v) }));

  // ---- The list --------------------------------------------------------------------
  async function listPage() {
    const list = $('#workflow-list');
    try {
      const wfs = (await api('GET', '/api/workflows')).workflows || [];
      if (!wfs.length) { fill(list, el('p', { class: 'muted', text: 'No workflow yet. Create one: write its steps, dry-run it, save it.' })); return; }
      fill(list, scrollBox('Workflows', el('table', { id: 'workflows-table' },
        el('thead', {}, el('tr', {}, ['Name', 'Description', 'Triggers', 'Last run', 'Tool'].map((h) => el('th', { scope: 'col', text: h })))),
        el('tbody', {}, wfs.map((w) => el('tr', { 'data-workflow': w.name },
          el('th', { scope: 'row' }, el('a', { href: `/workflows/${enc(w.name)}`, text: w.name })),
          el('td', { text: w.description || '—' }),
          el('td', { class: 'triggers' }, (w.triggers || []).length
            ? el('ul', { class: 'tools' }, w.triggers.map((t) => el('li', {}, el('code', { text: t }))))
            : el('span', { class: 'muted', text: 'when called' })),
          el('td', { class: 'lastrun' }, w.last_run
            ? [el('a', { href: `/workflow-runs/${enc(w.last_run.run_id)}` }, stateBadge(w.last_run.state), el('span', { class: 'sr', text: ` run of ${w.name}` })), ' ', el('span', { class: 'small muted', text: fmtTime(w.last_run.created_at) })]
            : el('span', { class: 'muted', text: 'never' })),
          el('td', {}, el('code', { text: w.tool }))))))));
    } catch (err) { fill(list, el('p', { class: 'error', text: describe(err) })); }
  }

  // ---- The editor ------------------------------------------------------------------
  const STARTER = `name: my_workflow
description: What the workflow does
parameters:
  type: object
  properties:
    number: {type: integer}
  required: [number]
steps:
  - name: read
    tool: github_get_issue
    args: {owner: octo-org, repo: hello-world, issue_number: "\${{ params.number }}"}
outputs:
  title: "\${{ steps.read.output.title }}"
`;
  const outlineOf = (def) => ((def && def.steps) || []).map((s) => ({ name: s.name, tool: s.tool, needs: s.needs || [], if: s.if || '', foreach: s.foreach || '' }));
  const graphAlt = (steps) => `The steps as a graph: ${steps.map((s) => `${s.name} (${s.tool})${s.needs.length ? ` after ${s.needs.join(' and ')}` : ''}`).join('; ')}.`;

  // toolCatalog is what the editor's helpers offer: the tools the person may call
  // (each with its connections) and, fetched once per provider, a tool's input schema.
  async function toolCatalog() {
    const tools = (await api('GET', '/api/tools')).tools || [];
    const ops = new Map(); // provider → its operations, fetched once
    return {
      tools,
      find: (name) => tools.find((t) => t.tool === name),
      async schemaOf(t) {
        if (!ops.has(t.provider)) {
          ops.set(t.provider, api('GET', `/api/providers/${enc(t.provider)}/operations`).then((r) => r.operations || [])
            .catch((err) => { ops.delete(t.provider); throw err; })); // asked again next time
        }
        const op = (await ops.get(t.provider)).find((o) => o.tool === t.tool);
        return (op && op.input_schema) || { properties: {} };
      },
    };
  }

  // stepHelper offers, beside the definition, the tools the person may call, the
  // labels of a tool's connections and its arguments (from its input schema), and adds
  // a step that uses them to the definition.
  async function stepHelper(text, cat) {
    const toolIn = $('#wf-helper-tool');
    const connIn = $('#wf-helper-conn');
    const said = $('#wf-helper-args');
    const tools = cat.tools;
    fill($('#wf-helper-tools'), tools.map((t) => el('option', { value: t.tool })));
    let schema = null;
    const chosen = () => cat.find(toolIn.value.trim());
    toolIn.addEventListener('input', async () => {
      const t = chosen();
      schema = null;
      fill($('#wf-helper-conns'), t ? t.connections.map((c) => el('option', { value: c.label })) : []);
      if (!t) { said.textContent = 'Type or pick a tool: its arguments are listed here.'; return; }
      if (t.connections.length === 1) connIn.value = t.connections[0].label;
      try { schema = await cat.schemaOf(t); } catch (err) { said.textContent = describe(err); return; }
      const req = new Set(schema.required || []);
      const names = Object.keys(schema.properties || {});
      said.textContent = names.length ? `Arguments of ${t.tool}: ${names.map((n) => (req.has(n) ? `${n} (required)` : n)).join(', ')}.` : `${t.tool} takes no arguments.`;
    });
    $('#wf-helper-add').addEventListener('click', () => {
      const t = chosen();
      if (!t) { said.textContent = 'Pick one of the tools listed first.'; toolIn.focus(); return; }
      const base = t.tool.startsWith(`${t.provider}_`) ? t.tool.slice(t.provider.length + 1) : t.tool;
      let name = base;
      for (let i = 2; new RegExp(`^\\s*- name: ${name}\\s*$`, 'm').test(text.value); i++) name = `${base}_${i}`;
      const lines = [`  - name: ${name}`, `    tool: ${t.tool}`];
      if (connIn.value.trim() && t.connections.length > 1) lines.push(`    connection: ${JSON.stringify(connIn.value.trim())}`);
      const req = (schema && schema.required) || [];
      if (req.length) lines.push('    args:', ...req.map((n) => `      ${n}: ""`));
      const at = text.value.search(/^outputs:/m);
      const block = `${lines.join('\n')}\n`;
      text.value = at >= 0 ? `${text.value.slice(0, at)}${block}${text.value.slice(at)}` : `${text.value.replace(/\n*$/, '\n')}${block}`;
      text.dispatchEvent(new Event('input'));
      said.textContent = `Added the step ${name}${req.length ? `: fill in ${req.join(', ')}` : ''}.`;
    });
  }

  // stepAt returns the lines of the step the line starting at offset belongs to: from
  // its "- name:" (or "- tool:") line to the next step or top-level field.
  function stepAt(value, offset) {
    const lines = value.split('\n');
    let row = value.slice(0, offset).split('\n').length - 1;
    const starts = (l) => /^\s*-\s+(name|tool):/.test(l);
    let from = row;
    while (from > 0 && !starts(lines[from]) && !/^\S/.test(lines[from])) from--;
    if (!starts(lines[from])) return null;
    let to = row + 1;
    while (to < lines.length && !starts(lines[to]) && !/^\S/.test(lines[to])) to++;
    const block = lines.slice(from, to);
    const tool = block.map((l) => /^\s*(?:-\s+)?tool:\s*["']?([\w.@-]+)/.exec(l)).find(Boolean);
    return { lines: block, tool: tool ? tool[1] : '' };
  }

  // completionAt says what the text before the caret is completing: a tool's name after
  // "tool:", a connection's label after "connection:", or an argument's name on a line
  // under a step's "args:".
  function completionAt(value, caret) {
    const lineStart = value.lastIndexOf('\n', caret - 1) + 1;
    const before = value.slice(lineStart, caret);
    let m = /^\s*(?:-\s+)?tool:\s*["']?([\w.@-]*)$/.exec(before);
    if (m) return { kind: 'tool', prefix: m[1], from: caret - m[1].length };
    m = /^\s*(?:-\s+)?connection:\s*(["']?)([^"'\n]*)$/.exec(before);
    if (m) return { kind: 'connection', prefix: m[2], from: caret - m[2].length - m[1].length, step: stepAt(value, lineStart) };
    m = /^(\s+)([A-Za-z_]\w*)?$/.exec(before);
    if (!m) return null;
    const lines = value.slice(0, lineStart).split('\n');
    for (let i = lines.length - 2; i >= 0; i--) {
      const l = lines[i];
      if (!l.trim()) continue;
      const indent = /^\s*/.exec(l)[0].length;
      if (indent >= m[1].length) continue;
      if (!/^\s*(?:-\s+)?args:\s*$/.test(l)) return null;
      const prefix = m[2] || '';
      return { kind: 'arg', prefix, from: caret - prefix.length, indent: m[1].length, step: stepAt(value, lineStart) };
    }
    return null;
  }

  // definitionAutocomplete offers, in the definition's text area, the tools one may
  // call after "tool:", the labels of the step's tool's connections after
  // "connection:", and the step's tool's arguments (from its input schema) under
  // "args:". Up and Down choose, Enter inserts, Escape closes; a click inserts too.
  function definitionAutocomplete(text, cat) {
    const list = $('#wf-suggest');
    const status = $('#wf-suggest-status');
    let items = [];
    let active = -1;
    let at = null;
    let seq = 0;
    let told = '';
    text.setAttribute('aria-autocomplete', 'list');
    text.setAttribute('aria-controls', 'wf-suggest');
    const say = (msg) => { if (msg !== told) { told = msg; status.textContent = msg; } };
    const close = () => {
      items = []; active = -1; at = null;
      fill(list);
      list.hidden = true;
      text.removeAttribute('aria-activedescendant');
    };
    const mark = (i) => {
      active = i;
      for (const [j, li] of [...list.children].entries()) li.setAttribute('aria-selected', j === i ? 'true' : 'false');
      if (i >= 0) { text.setAttribute('aria-activedescendant', `wf-suggest-${i}`); list.children[i].scrollIntoView({ block: 'nearest' }); } else text.removeAttribute('aria-activedescendant');
    };
    const insert = (i) => {
      const it = items[i];
      if (!it || !at) return;
      const caret = text.selectionStart;
      text.value = text.value.slice(0, at.from) + it.insert + text.value.slice(caret);
      const pos = at.from + it.insert.length;
      text.setSelectionRange(pos, pos);
      say(`Inserted ${it.value}.`);
      close();
      text.focus();
      text.dispatchEvent(new Event('input'));
    };
    const suggestions = async (c) => {
      const p = c.prefix.toLowerCase();
      const rank = (v) => (v.toLowerCase().startsWith(p) ? 0 : 1);
      const match = (vs) => vs.filter((v) => v.value.toLowerCase().includes(p)).sort((a, b) => rank(a.value) - rank(b.value) || a.value.localeCompare(b.value)).slice(0, 12);
      if (c.kind === 'tool') {
        return match(cat.tools.map((t) => ({ value: t.tool, insert: t.tool, note: t.connections.length ? t.connections.map((x) => x.label).join(', ') : 'no connection' })));
      }
      const t = c.step && cat.find(c.step.tool);
      if (c.kind === 'connection') {
        const conns = t ? t.connections : [...new Map(cat.tools.flatMap((x) => x.connections).map((x) => [x.label, x])).values()];
        return match(conns.map((x) => ({ value: x.label, insert: /^[\w.@-]+$/.test(x.label) ? x.label : JSON.stringify(x.label), note: x.owner ? `${x.owner}'s` : (t ? t.provider : '') })));
      }
      if (!t) return [];
      const schema = await cat.schemaOf(t);
      const req = new Set(schema.required || []);
      const given = new Set(c.step.lines.map((l) => new RegExp(`^\\s{${c.indent}}(\\w+):`).exec(l)).filter(Boolean).map((x) => x[1]));
      return match(Object.entries(schema.properties || {}).filter(([n]) => !given.has(n) || n === c.prefix)
        .map(([n, sc]) => ({ value: n, insert: `${n}: `, note: [req.has(n) ? 'required' : '', sc.type ? String(sc.type) : '', sc.description || ''].filter(Boolean).join(' · ') })));
    };
    const update = async () => {
      const c = completionAt(text.value, text.selectionStart);
      const mine = ++seq;
      if (!c || text.selectionStart !== text.selectionEnd) { close(); return; }
      let found = [];
      try { found = await suggestions(c); } catch (err) { found = []; }
      if (mine !== seq) return;
      if (!found.length || (found.length === 1 && found[0].value === c.prefix)) { close(); return; }
      at = c;
      items = found;
      const what = { tool: 'tools', connection: 'connections', arg: 'arguments' }[c.kind];
      fill(list, found.map((it, i) => el('li', { id: `wf-suggest-${i}`, role: 'option', 'aria-selected': 'false', 'data-value': it.value,
        onmousedown: (ev) => ev.preventDefault(), onclick: () => insert(i) }, el('code', { text: it.value }), it.note ? el('span', { class: 'small muted', text: ` ${it.note}` }) : null)));
      list.setAttribute('aria-label', `Matching ${what}`);
      list.hidden = false;
      mark(-1);
      say(`${found.length} matching ${what}: Down arrow to choose, Enter to insert, Escape to close.`);
    };
    text.addEventListener('input', update);
    text.addEventListener('click', update);
    text.addEventListener('keyup', (ev) => { if (['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(ev.key)) update(); });
    text.addEventListener('blur', () => setTimeout(() => { if (document.activeElement !== text) close(); }, 0));
    text.addEventListener('keydown', (ev) => {
      if (list.hidden || !items.length) return;
      if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
        ev.preventDefault();
        const n = items.length;
        mark(ev.key === 'ArrowDown' ? (active + 1) % n : (active - 1 + n) % n);
      } else if (ev.key === 'Enter' && active >= 0) {
        ev.preventDefault();
        insert(active);
      } else if (ev.key === 'Escape') {
        ev.preventDefault();
        close();
      } else if (ev.key === 'Tab') close();
    });
  }

  async function editorPage(name) {
    const text = $('#wf-definition');
    const paramsBox = $('#wf-params');
    paramsBox.addEventListener('input', () => paramsBox.removeAttribute('aria-invalid'));
    let saved = null; // the workflow as last saved
    let outline = [];
    if (name) {
      try { saved = await api('GET', `/api/workflows/${enc(name)}`); } catch (err) { alertPage(err); return; }
      text.value = saved.source || pretty(saved.definition);
      outline = outlineOf(saved.definition);
      showSaved();
    } else {
      text.value = STARTER;
    }
    toolCatalog().then((cat) => { stepHelper(text, cat); definitionAutocomplete(text, cat); })
      .catch((err) => { $('#wf-helper-args').textContent = describe(err); });
    let savedText = saved ? text.value : '';
    window.addEventListener('beforeunload', (ev) => {
      if (text.value === savedText || (!saved && text.value === STARTER)) return;
      ev.preventDefault();
      ev.returnValue = '';
    });
    if (outline.length) renderSteps([], null);

    function summary(msg, bad) {
      const s = $('#wf-summary');
      s.textContent = msg;
      s.className = `wfsummary${bad ? ' error' : ''}`;
    }

    // renderSteps lists the steps, each with the problems that name it and, after a dry
    // run, what it will do; problems naming no step come first, under "The workflow".
    function renderSteps(problems, plan) {
      const byStep = new Map();
      for (const p of problems) {
        const k = p.step || '';
        if (!byStep.has(k)) byStep.set(k, []);
        byStep.get(k).push(p);
      }
      const steps = [...outline];
      for (const k of byStep.keys()) if (k && !steps.some((s) => s.name === k)) steps.push({ name: k, tool: '', needs: [] });
      const planned = new Map(((plan && plan.steps) || []).map((s) => [s.name, s]));
      const items = [];
      if (byStep.has('')) items.push(stepItem({ name: '', tool: '', needs: [] }, byStep.get(''), null, 'wf'));
      steps.forEach((s, i) => items.push(stepItem(s, byStep.get(s.name) || [], planned.get(s.name), `s${i}`)));
      fill($('#wf-steps'), items.length ? items : el('li', { class: 'muted', text: 'No steps.' }));
    }
    function stepItem(s, problems, planned, id) {
      const head = s.name ? [el('code', { text: s.name })] : ['The workflow'];
      const facts = [];
      if (s.tool) facts.push(el('span', {}, 'calls ', el('code', { text: s.tool })));
      if (s.needs && s.needs.length) facts.push(`after ${s.needs.join(', ')}`);
      if (s.if) facts.push(el('span', {}, 'only if ', el('code', { text: s.if })));
      if (s.foreach) facts.push(el('span', {}, 'for each of ', el('code', { text: s.foreach })));
      if (planned) {
        facts.push(el('span', { class: `badge ${planned.read_only ? 'reads' : planned.destructive ? 'destroys' : 'writes'}`, text: planned.read_only ? 'reads' : planned.destructive ? 'destroys' : 'writes' }));
        if (planned.account || planned.connection_id) facts.push(el('span', { class: 'plan-account' }, 'on ', el('strong', { text: planned.account || planned.connection_id })));
      }
      return el('li', { class: `wfstep${problems.length ? ' invalid' : ''}`, 'data-step': s.name, 'aria-labelledby': `${id}-name` },
        el('h3', { id: `${id}-name`, tabindex: '-1' }, head, problems.length ? el('span', { class: 'sr', text: `, ${problems.length} problem${problems.length === 1 ? '' : 's'}` }) : ''),
        facts.length ? el('p', { class: 'small' }, facts.map((f, i) => [i ? ' · ' : '', f])) : '',
        problems.length ? el('ul', { class: 'problems' }, problems.map((p) => el('li', { 'data-field': p.field },
          el('span', { class: 'error' }, el('code', { text: p.field || 'definition' }), `: ${p.message}`), ' ',
          el('button', { type: 'button', class: 'link small', onclick: () => showInText(s.name, p.field) }, 'Show in the definition', el('span', { class: 'sr', text: ` (${s.name || 'workflow'} ${p.field})` }))))) : '');
    }

    // showInText selects, in the definition, the step's name or the field's key after it.
    function showInText(step, field) {
      const src = text.value;
      let at = 0;
      if (step) {
        const esc = step.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        const m = new RegExp(`(?:^|[\\s{,-])"?name"?\\s*:\\s*["']?${esc}["']?\\s*(?:[,}\\n]|$)`, 'm').exec(src);
        if (m) at = m.index + m[0].indexOf(step);
      }
      let len = step ? step.length : 0;
      const key = String(field || '').split('.').pop().replace(/\[\d+\]$/, '');
      if (key) {
        const k = src.indexOf(key, at);
        if (k >= 0) { at = k; len = key.length; }
      }
      text.focus();
      text.setSelectionRange(at, at + len);
      const line = src.slice(0, at).split('\n').length - 1;
      const lh = parseFloat(getComputedStyle(text).lineHeight) || 20;
      text.scrollTop = Math.max(0, (line - 3) * lh);
    }

    // failed shows a refused definition's problems at their steps, or another failure.
    function failed(err, what) {
      const problems = err && err.body && err.body.problems;
      if (err && err.status === 400 && Array.isArray(problems) && problems.length) {
        if (Array.isArray(err.body.steps)) outline = err.body.steps.map((s) => ({ name: s.name, tool: s.tool, needs: s.needs || [], if: s.if || '', foreach: s.foreach || '' }));
        renderSteps(problems, null);
        text.setAttribute('aria-invalid', 'true');
        const atSteps = new Set(problems.map((p) => p.step).filter(Boolean)).size;
        summary(`${what} refused: ${problems.length} problem${problems.length === 1 ? '' : 's'}${atSteps ? `, at ${atSteps} step${atSteps === 1 ? '' : 's'}` : ''}. Each is listed at its step under Steps.`, true);
        const first = document.querySelector('#wf-steps .wfstep.invalid h3');
        if (first) first.focus();
        return;
      }
      summary(`${what} failed: ${describe(err)}`, true);
      // Parameters that do not fit the workflow's schema are the run's, not the definition's.
      if (err && /^parameters\b/.test(err.field || '')) { paramsBox.setAttribute('aria-invalid', 'true'); paramsBox.focus(); }
    }
    function params() {
      try {
        const v = JSON.parse(paramsBox.value.trim() || '{}');
        if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
        return v;
      } catch (err) {
        paramsBox.setAttribute('aria-invalid', 'true');
        summary('Parameters: write a JSON object, like {"number": 7}.', true);
        paramsBox.focus();
        return undefined;
      }
    }
    function busy(on) { for (const b of ['#wf-save', '#wf-dryrun', '#wf-run']) $(b).disabled = on; }

    $('#wf-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      busy(true);
      try {
        const body = { definition: text.value };
        const w = saved ? await api('PUT', `/api/workflows/${enc(saved.name)}`, body) : await api('POST', '/api/workflows', body);
        saved = w;
        savedText = text.value;
        outline = outlineOf(w.definition);
        text.removeAttribute('aria-invalid');
        renderSteps([], null);
        summary(`Saved ${w.name}, version ${w.version}. Agents can select it as ${w.tool}.`);
        history.replaceState(null, '', `/workflows/${enc(w.name)}`);
        showSaved();
        flash(`Saved workflow ${w.name}.`);
      } catch (err) { failed(err, 'Save'); drawDraft(); } finally { busy(false); }
    });
    $('#wf-dryrun').addEventListener('click', async () => {
      const p = params();
      if (p === undefined) return;
      busy(true);
      try {
        const plan = await api('POST', '/api/workflows/dry-run', { definition: text.value, parameters: p });
        const known = new Map(outline.map((s) => [s.name, s]));
        outline = (plan.steps || []).map((s) => ({ ...(known.get(s.name) || {}), name: s.name, tool: s.tool, needs: s.needs || [] }));
        text.removeAttribute('aria-invalid');
        renderSteps([], plan);
        drawDraft();
        const changes = plan.changes || [];
        summary(`Dry run passed: ${plan.steps.length} step${plan.steps.length === 1 ? '' : 's'} would run; ${changes.length ? `${changes.length} would change data (${changes.join('; ')})` : 'none changes data'}${plan.needs_confirm ? '; a run asks for confirmation first' : ''}. Nothing ran.`);
      } catch (err) { failed(err, 'Dry run'); drawDraft(); } finally { busy(false); }
    });
    $('#wf-run').addEventListener('click', async () => {
      const p = params();
      if (p === undefined || !saved) return;
      busy(true);
      try {
        const run = await api('POST', `/api/workflows/${enc(saved.name)}/runs`, { parameters: p });
        savedText = text.value; // leaving for the run page is not losing work
        location.assign(`/workflow-runs/${enc(run.run_id)}`);
      } catch (err) { failed(err, 'Run'); busy(false); }
    });

    // drawDraft shows the graph of the definition as written (the server draws it; a
    // draft with problems is drawn too), until the next save shows the saved one.
    async function drawDraft() {
      try {
        const res = await fetch('/api/workflows/graph.svg', { method: 'POST', credentials: 'same-origin',
          headers: { 'Content-Type': 'application/json', Accept: 'image/svg+xml', 'X-CSRF-Token': (document.querySelector('meta[name=csrf-token]') || {}).content || '' },
          body: JSON.stringify({ definition: text.value }) });
        if (!res.ok) return; // it does not parse: the problems say why
        const svg = await res.text();
        const img = $('#wf-graph');
        img.alt = graphAlt(outline);
        img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
        $('#wf-graph-what').textContent = 'As written above, not saved.';
        $('#wf-graph-box').hidden = false;
      } catch (err) { /* the graph is a help; the summary says what failed */ }
    }
    function showSaved() {
      $('#wf-title').textContent = `Workflow ${saved.name}`;
      $('#wf-run').hidden = false;
      $('#wf-graph-box').hidden = false;
      const img = $('#wf-graph');
      img.alt = graphAlt(outlineOf(saved.definition));
      img.src = `/api/workflows/${enc(saved.name)}/graph.svg?v=${saved.version}`;
      $('#wf-graph-what').textContent = 'As saved.';
      showHooks();
      $('#wf-runs-box').hidden = false;
      $('#wf-delete-box').hidden = false;
      $('#wf-delete').onclick = async () => {
        if (!(await ask({ title: `Delete the workflow ${saved.name}?`, body: 'Agents that select it stop listing it.', ok: 'Delete', danger: true }))) return;
        try {
          await api('DELETE', `/api/workflows/${enc(saved.name)}`);
          savedText = text.value;
          location.assign('/workflows');
        } catch (err) { alertPage(err); }
      };
      loadRuns();
    }
    // showHooks offers, for each webhook trigger, its payload URL and a form that sets
    // its signing secret (never shown again, and cleared from the page once sent).
    function showHooks() {
      const triggers = (saved.definition && saved.definition.triggers) || [];
      const kinds = ['github', 'slack'].filter((k) => triggers.some((t) => t[k]));
      $('#wf-hooks-box').hidden = !kinds.length;
      const tenant = (document.querySelector('meta[name=tenant]') || {}).content || '';
      const origin = (document.querySelector('meta[name=public-url]') || {}).content || location.origin;
      fill($('#wf-hooks'), kinds.map((k) => {
        const title = k === 'github' ? 'GitHub' : 'Slack';
        const id = `wf-hook-${k}`;
        const secret = el('input', { id: `${id}-secret`, type: 'password', autocomplete: 'off', spellcheck: 'false' });
        const error = el('p', { id: `${id}-error`, class: 'error', role: 'alert', hidden: true });
        const form = el('form', { class: 'stack', 'data-hook': k, novalidate: true },
          el('h3', { text: title }),
          el('label', { for: `${id}-url` }, 'Payload URL ', el('span', { class: 'muted', text: `(give it to ${title})` })),
          el('div', { class: 'copyrow' }, el('input', { id: `${id}-url`, readonly: true, value: `${origin}/hooks/workflows/${tenant}/${saved.name}/${k}` }),
            el('button', { type: 'button', 'data-copy': `${id}-url` }, 'Copy', el('span', { class: 'sr', text: ` the ${title} payload URL` }))),
          el('label', { for: `${id}-secret` }, k === 'github' ? 'Webhook secret ' : 'Signing secret ', el('span', { class: 'muted', text: k === 'github' ? '(16 to 256 characters, the one you type into GitHub\'s webhook form)' : '(16 to 256 characters, from Basic Information of your Slack app)' })),
          secret,
          el('div', { class: 'row' }, el('button', { type: 'submit' }, `Set the ${title} secret`)),
          error);
        form.addEventListener('submit', async (ev) => {
          ev.preventDefault();
          const value = secret.value;
          secret.value = ''; // the secret never stays in the page
          error.hidden = true;
          try {
            const res = await api('PUT', `/api/workflows/${enc(saved.name)}/webhooks/${k}`, { secret: value });
            secret.removeAttribute('aria-invalid');
            if (res && res.url) $(`#${id}-url`).value = res.url;
            flash(`Saved the ${title} secret of ${saved.name}. Deliveries signed with it start runs.`);
          } catch (err) {
            error.textContent = describe(err);
            error.hidden = false;
            secret.setAttribute('aria-invalid', 'true');
            secret.focus();
          }
        });
        return form;
      }));
    }
    async function loadRuns() {
      const box = $('#wf-runs');
      try {
        const list = (await api('GET', `/api/workflows/${enc(saved.name)}/runs`)).runs || [];
        fill(box, list.length ? scrollBox('Your runs', el('table', {},
          el('thead', {}, el('tr', {}, ['Run', 'State', 'Started', 'Finished'].map((h) => el('th', { scope: 'col', text: h })))),
          el('tbody', {}, list.map((r) => el('tr', {},
            el('th', { scope: 'row' }, el('a', { href: `/workflow-runs/${enc(r.run_id)}` }, el('code', { text: r.run_id }))),
            el('td', {}, stateBadge(r.state)),
            el('td', { text: fmtTime(r.started_at || r.created_at) }),
            el('td', { text: fmtTime(r.finished_at) }))))))
          : el('p', { class: 'muted', text: 'No run yet: Run starts one with the parameters above.' }));
      } catch (err) { fill(box, el('p', { class: 'error', text: describe(err) })); }
    }
  }

  // ---- A run -----------------------------------------------------------------------
  async function runPage(id) {
    let steps = null; // the workflow's steps, in order
    let workflow = '';
    let timer = 0;
    let said = '';
    let graphKey = '';
    let stepsDrawn = '';
    const open = new Set(); // the steps whose input and output are shown
    async function load() {
      let st;
      try {
        st = await api('GET', `/api/workflow-runs/${enc(id)}`);
      } catch (err) {
        fill($('#run-summary'), el('p', { class: 'error', text: describe(err) }));
        return;
      }
      const run = st.run;
      if (steps === null) {
        workflow = st.workflow;
        try { steps = outlineOf((await api('GET', `/api/workflows/${enc(workflow)}`)).definition); } catch (err) { steps = []; }
        $('#run-title').textContent = `Run of ${workflow}`;
        fill($('#run-workflow'), 'Workflow ', el('a', { href: `/workflows/${enc(workflow)}`, text: workflow }), ' · run ', el('code', { text: run.run_id }));
        if (steps.length) { $('#run-graph-box').hidden = false; $('#run-graph').alt = graphAlt(steps); }
      }
      const results = new Map((st.step_results || []).map((r) => [r.step_name, r]));
      const done = FINAL.has(run.state);
      // The summary changes (and is read out) only when the run's state or count does.
      const line = `${run.state} ${st.steps_completed}/${st.steps_total}`;
      if (line !== said) {
        said = line;
        fill($('#run-summary'), el('p', {}, stateBadge(run.state), ` ${st.steps_completed} of ${st.steps_total} steps done`,
          run.started_at ? ` · started ${fmtTime(run.started_at)}` : '', run.finished_at ? ` · finished ${fmtTime(run.finished_at)}` : ''),
        run.error ? el('p', { class: 'error', text: `${run.error.message}` }) : '',
        run.state === 'input_required' && run.approval_url ? el('p', {}, 'It waits for a person\'s confirmation: ', el('a', { href: run.approval_url }, 'approve or decline it'), '.') : '');
      }
      const names = [...steps.map((s) => s.name), ...[...results.keys()].filter((n) => !steps.some((s) => s.name === n))];
      // The steps are drawn again only when something in them changed, so focus and
      // the open input and output stay put while the page refreshes.
      const drawn = JSON.stringify([done, st.step_results]);
      if (drawn !== stepsDrawn) {
        stepsDrawn = drawn;
        fill($('#run-steps'), el('ol', { class: 'wfsteps', id: 'run-step-list' }, names.map((n, i) => {
        const r = results.get(n);
        const def = steps.find((s) => s.name === n) || {};
        const state = r ? r.status : done ? 'not run' : 'waiting';
        const io = el('details', { 'data-io': n, open: open.has(n), ontoggle: (ev) => { if (ev.target.open) open.add(n); else open.delete(n); } },
          el('summary', {}, 'Input and output', el('span', { class: 'sr', text: ` of ${n}` })),
          el('h4', { text: 'Input' }), jsonBlock(`Input of ${n}`, r && r.input),
          el('h4', { text: 'Output' }), jsonBlock(`Output of ${n}`, r && r.output));
        return el('li', { class: 'wfstep', 'data-step': n, 'data-state': state, 'aria-labelledby': `rs${i}` },
          el('h3', { id: `rs${i}` }, el('code', { text: n }), ' ', el('span', { class: `status ${state.replace(' ', '_')}`, text: state })),
          el('p', { class: 'small' }, (r && r.tool) || def.tool ? ['calls ', el('code', { text: (r && r.tool) || def.tool })] : '',
            r && r.started_at ? ` · started ${fmtTime(r.started_at)}` : '',
            r && r.finished_at ? ` · took ${took(r.duration)}` : r && r.status === 'running' ? ' · running' : '',
            r && r.attempts > 1 ? ` · ${r.attempts} attempts` : ''),
          r && r.error_message ? el('p', { class: 'error small', text: r.error_message }) : '',
          r ? io : '');
        })));
      }
      const key = names.map((n) => (results.get(n) || {}).status || '').join(',');
      if (steps.length && key !== graphKey) {
        graphKey = key;
        $('#run-graph').src = `/api/workflows/${enc(workflow)}/graph.svg?run=${enc(id)}&s=${enc(key)}`;
      }
      $('#run-cancel').hidden = done;
      if (done && run.output) {
        let out = run.output;
        if (out && out.outputs) out = out.outputs;
        $('#run-output').textContent = pretty(out);
        $('#run-output-box').hidden = false;
      }
      clearTimeout(timer);
      if (!done) timer = setTimeout(load, 1000);
    }
    $('#run-cancel').addEventListener('click', async () => {
      if (!(await ask({ title: 'Cancel this run?', body: 'The steps in flight stop and no more start.', ok: 'Cancel the run', cancel: 'Keep it running', danger: true }))) return;
      $('#run-cancel').disabled = true;
      try {
        await api('POST', `/api/workflow-runs/${enc(id)}/cancel`);
        flash('Canceled the run.');
        await load();
      } catch (err) { alertPage(err); } finally { $('#run-cancel').disabled = false; }
    });
    await load();
  }

  const pages = {
    workflows: listPage,
    workflow: () => editorPage(document.body.dataset.param),
    workflow_run: () => runPage(document.body.dataset.param),
  };
  const run = pages[document.body.dataset.page];
  if (run) run().catch(alertPage);
})();
