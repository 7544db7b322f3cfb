// Switchboard builder UI: fills the server-rendered page shells from the REST API with
// the session cookie. Plain JavaScript, no build step, no third-party requests.
'use strict';
(() => {
  const $ = (sel, root = document) => root.querySelector(sel);
  const meta = (name) => (document.querySelector(`meta[name="${name}"]`) || {}).content || '';
  const CSRF = meta('csrf-token');
  const PUBLIC_URL = meta('public-url');
  const TENANT = meta('tenant');
  const ROLE = meta('role');
  const USER_ID = meta('user-id');
  const IS_ADMIN = ROLE === 'owner' || ROLE === 'admin';

  // el builds an element: attrs may hold text, class, on<event> handlers and attributes.
  // scrollBox wraps a table that may scroll sideways in a region keyboard users can
  // focus and scroll, named for screen readers.
  const scrollBox = (label, table) => el('div', { class: 'tablewrap', tabindex: '0', role: 'region', 'aria-label': label }, table);
  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'text') node.textContent = v;
      else if (k === 'class') node.className = v;
      else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
      else if (k === 'value') node.value = v;
      else if (v === true) node.setAttribute(k, '');
      else node.setAttribute(k, v);
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return node;
  }
  const fill = (node, ...kids) => { node.replaceChildren(...kids.flat(Infinity).filter((k) => k !== null && k !== undefined && k !== false)); node.removeAttribute('aria-busy'); };

  class APIError extends Error {
    constructor(status, body) {
      const e = (body && body.error) || {};
      super(e.message || `the server answered ${status}`);
      this.status = status;
      this.code = e.code || 'unknown';
      this.field = e.field || '';
      this.retry = e.retry_after_seconds || 0;
    }
  }

  // api calls the REST API with the session cookie and, for changes, the CSRF token.
  async function api(method, path, body) {
    const opts = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
    if (method !== 'GET') opts.headers['X-CSRF-Token'] = CSRF;
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(path, opts);
    } catch (err) {
      throw new APIError(0, { error: { code: 'network', message: 'the server did not answer; check that it is running and your network, then try again' } });
    }
    if (res.status === 204) return null;
    let data = null;
    try { data = await res.json(); } catch (err) { data = null; }
    if (!res.ok) {
      if (res.status === 401) {
        location.assign('/signin?next=' + encodeURIComponent(location.pathname));
      }
      throw new APIError(res.status, data);
    }
    return data;
  }

  // describe turns a failure into a sentence that says what to do.
  function describe(err) {
    if (err instanceof APIError) {
      let msg = err.message.charAt(0).toUpperCase() + err.message.slice(1);
      if (err.field) msg = `${err.field}: ${err.message}`;
      if (err.code === 'rate_limited' && err.retry) msg += ` Try again in ${err.retry} s.`;
      if (err.code === 'reconnect') msg += ' Reconnect the account under Integrations.';
      if (err.code === 'forbidden' && !/admin|owner|CSRF/.test(msg)) msg += ' Ask an admin of the workspace.';
      return msg;
    }
    return `The page failed (${err && err.message}). Reload it and try again.`;
  }
  function showError(target, err) {
    const node = typeof target === 'string' ? $(target) : target;
    node.textContent = describe(err);
    node.hidden = false;
  }
  function hideError(target) { const n = $(target); if (n) { n.hidden = true; n.textContent = ''; } }
  function alertPage(err) { showError('#alert', err); }
  function flash(text) { const f = $('#flash'); f.textContent = ''; setTimeout(() => { f.textContent = text; }, 10); }

  const fmtTime = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
  const kindOf = (ann) => (ann && ann.readOnlyHint ? 'reads' : ann && ann.destructiveHint ? 'destroys' : 'writes');
  const kindBadge = (ann) => { const k = kindOf(ann); return el('span', { class: `badge ${k}`, text: k }); };

  // Copy buttons copy the value of the element their data-copy names.
  document.addEventListener('click', async (ev) => {
    const b = ev.target.closest('[data-copy]');
    if (!b) return;
    const src = document.getElementById(b.dataset.copy);
    const text = 'value' in src ? src.value : src.textContent;
    try {
      await navigator.clipboard.writeText(text);
      flash('Copied to the clipboard.');
    } catch (err) {
      if (src.select) src.select();
      flash('Copying was refused by the browser: the text is selected, press Ctrl+C (or ⌘C).');
    }
  });

  // Catalog: providers with their operations, loaded once per page.
  let catalogPromise;
  function catalog() {
    if (!catalogPromise) {
      catalogPromise = api('GET', '/api/providers').then(async (res) => {
        const providers = res.providers || [];
        await Promise.all(providers.map(async (p) => {
          const ops = await api('GET', `/api/providers/${encodeURIComponent(p.name)}/operations`);
          p.ops = ops.operations || [];
        }));
        return providers;
      });
    }
    return catalogPromise;
  }
  const callableTools = () => api('GET', '/api/tools').then((r) => r.tools || []);
  const findTool = (providers, name) => {
    for (const p of providers) for (const op of p.ops) if (op.tool === name) return { provider: p, op };
    return null;
  };
  const scopesOf = (p) => [...new Set(p.ops.flatMap((o) => o.scopes || []))].sort();
  const logo = (p) => el('span', { class: 'logo', 'aria-hidden': 'true', text: (p.title || p.name).charAt(0).toUpperCase() });

  // params lists an input schema's parameters: name, type, required, description.
  function params(schema) {
    const props = (schema && schema.properties) || {};
    const req = new Set((schema && schema.required) || []);
    const names = Object.keys(props);
    if (!names.length) return el('p', { class: 'muted', text: 'No parameters.' });
    return el('ul', { class: 'params' }, names.map((n) => {
      const s = props[n];
      return el('li', {}, el('code', { text: n }), ' ', el('span', { class: 'muted', text: typeLabel(s) + (req.has(n) ? ', required' : ', optional') }),
        s.description ? ` — ${s.description}` : '');
    }));
  }
  function typeOf(s) {
    if (!s) return '';
    if (Array.isArray(s.type)) return s.type.find((t) => t !== 'null') || '';
    return s.type || '';
  }
  function typeLabel(s) {
    if (s.enum) return 'one of ' + s.enum.join(', ');
    const t = typeOf(s) || 'any';
    return t === 'array' && s.items ? `array of ${typeLabel(s.items)}` : t;
  }
  // tokens estimates what a tool definition costs in a model's context: about four
  // characters per token of its JSON.
  const tokens = (op) => Math.ceil(JSON.stringify({ name: op.tool, description: op.description, inputSchema: op.input_schema }).length / 4);

  // ---- Integrations -------------------------------------------------------------
  async function integrationsPage() {
    const dlg = $('#connect-dialog');
    let current = null; // { provider, replaces }
    const form = $('#connect-form');
    $('#connect-cancel').addEventListener('click', () => { $('#connect-token-input').value = ''; dlg.close(); });
    dlg.addEventListener('close', () => { $('#connect-token-input').value = ''; });

    function openConnect(p, replaces) {
      current = { provider: p, replaces };
      hideError('#connect-error');
      $('#connect-title').textContent = replaces ? `Reconnect ${p.title}: ${replaces.account_label}` : `Connect ${p.title}`;
      const kinds = p.auth_kinds || [];
      $('#connect-oauth').hidden = !kinds.includes('oauth2');
      $('#connect-token').hidden = !kinds.includes('api_key');
      $('#connect-submit').hidden = !kinds.includes('api_key');
      $('#connect-help').textContent = p.token_help || 'Paste an API token of the account.';
      const scopes = scopesOf(p);
      $('#connect-scopes').textContent = scopes.length ? `Scopes its tools need: ${scopes.join(', ')}.` : '';
      $('#connect-token-input').value = '';
      $('#connect-label').value = '';
      $('#connect-shared').checked = replaces ? !!replaces.shared : false;
      // A reconnect renews the same connection: its sharing and its agents stay.
      $('#connect-shared').closest('label').hidden = !!replaces;
      $('#connect-reconnect-note').hidden = !replaces;
      $('#connect-submit').textContent = replaces ? 'Reconnect' : 'Connect';
      dlg.showModal();
      (kinds.includes('api_key') ? $('#connect-token-input') : $('#connect-oauth-button')).focus();
    }

    $('#connect-oauth-button').addEventListener('click', async () => {
      hideError('#connect-error');
      try {
        const body = current.replaces ? { connection_id: current.replaces.id } : { shared: $('#connect-shared').checked };
        const label = $('#connect-label').value.trim();
        if (label) body.label = label;
        const res = await api('POST', `/api/connections/${encodeURIComponent(current.provider.name)}/authorize`, body);
        const url = res.authorization_url || res.url;
        if (!url) throw new Error('the server gave no authorization URL');
        location.assign(url);
      } catch (err) {
        if (err instanceof APIError && err.status === 404 && /no such API endpoint/.test(err.message)) {
          showError('#connect-error', new APIError(404, { error: { code: 'not_found', message: `OAuth is not set up for ${current.provider.title} on this server; paste a token instead, or ask the operator to configure the OAuth app.` } }));
        } else showError('#connect-error', err);
      }
    });

    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      hideError('#connect-error');
      const token = $('#connect-token-input').value.trim();
      $('#connect-token-input').value = ''; // the token never stays in the page
      if (!token) {
        showError('#connect-error', new APIError(400, { error: { code: 'invalid', field: 'token', message: 'is required: paste the token' } }));
        $('#connect-token-input').focus();
        return;
      }
      const body = current.replaces ? { token } : { provider: current.provider.name, token, shared: $('#connect-shared').checked };
      const label = $('#connect-label').value.trim();
      if (label) body.label = label;
      $('#connect-submit').disabled = true;
      try {
        // A reconnect renews the credentials of the same connection (same id), so the
        // agents bound to it keep their tools.
        const conn = current.replaces
          ? await api('POST', `/api/connections/${encodeURIComponent(current.replaces.id)}/reconnect`, body)
          : await api('POST', '/api/connections', body);
        dlg.close();
        flash(`${current.replaces ? 'Reconnected' : 'Connected'} ${current.provider.title} account ${conn.account_label}.`);
        await loadConnections();
      } catch (err) {
        showError('#connect-error', err);
        $('#connect-token-input').focus();
      } finally {
        $('#connect-submit').disabled = false;
      }
    });

    let providers = [];
    async function loadConnections() {
      const list = $('#connection-list');
      try {
        const res = await api('GET', '/api/connections');
        const conns = res.connections || [];
        if (!conns.length) {
          fill(list, el('p', { class: 'muted', text: 'No account connected yet. Pick a provider below and connect it.' }));
          return;
        }
        const byName = Object.fromEntries(providers.map((p) => [p.name, p]));
        fill(list, scrollBox('Connected accounts', el('table', { id: 'connections-table' },
          el('thead', {}, el('tr', {}, ['Provider', 'Account', 'Status', 'Scopes', 'Last used', 'Access', 'Actions'].map((h) => el('th', { scope: 'col', text: h })))),
          el('tbody', {}, conns.map((c) => {
            const p = byName[c.provider] || { name: c.provider, title: c.provider, auth_kinds: ['api_key'], ops: [] };
            const status = c.status === 'needs_reconnect' ? 'needs reconnect' : c.status;
            return el('tr', { 'data-connection': c.id },
              el('td', {}, logo(p), ' ', p.title),
              el('th', { scope: 'row', text: c.account_label }),
              el('td', {}, el('span', { class: `status ${c.status}`, text: status })),
              el('td', { class: 'scopes', text: (c.scopes || []).join(', ') || '—' }),
              el('td', { text: c.last_used_at ? fmtTime(c.last_used_at) : 'never' }),
              el('td', { text: c.shared ? 'shared' : 'private' }),
              el('td', { class: 'actions' },
                el('button', { type: 'button', class: 'secondary', 'aria-label': `Reconnect ${p.title} ${c.account_label}`, onclick: () => openConnect(p, c) }, 'Reconnect'),
                el('button', { type: 'button', class: 'danger', 'aria-label': `Disconnect ${p.title} ${c.account_label}`, onclick: () => disconnect(p, c) }, 'Disconnect')));
          })))));
      } catch (err) {
        fill(list, el('p', { class: 'error', text: describe(err) }));
      }
    }
    async function disconnect(p, c) {
      if (!confirm(`Disconnect ${p.title} account ${c.account_label}? Its tools disappear from your MCP URLs and agents bound to it stop working.`)) return;
      try {
        await api('DELETE', `/api/connections/${encodeURIComponent(c.id)}`);
        flash(`Disconnected ${c.account_label}.`);
        await loadConnections();
      } catch (err) { alertPage(err); }
    }

    function renderCatalog(filter) {
      const q = (filter || '').toLowerCase();
      const cards = providers.map((p) => {
        const ops = p.ops.filter((o) => !q || p.name.includes(q) || (p.title || '').toLowerCase().includes(q) ||
          o.tool.includes(q) || (o.description || '').toLowerCase().includes(q) || (o.title || '').toLowerCase().includes(q));
        if (!ops.length) return null;
        const kinds = (p.auth_kinds || []).map((k) => el('span', { class: 'badge', text: k === 'oauth2' ? 'OAuth' : 'token' }));
        return el('article', { class: 'card', 'data-provider': p.name },
          el('h3', {}, logo(p), ' ', p.title),
          el('p', { text: p.description }),
          el('p', {}, kinds, ' ', el('span', { class: 'muted', text: `${p.ops.length} tools` })),
          el('details', { open: q ? true : undefined }, el('summary', { text: `Tools (${ops.length})` }),
            el('ul', { class: 'tools' }, ops.map((o) => el('li', {}, el('a', { href: `/tools/${encodeURIComponent(o.tool)}` }, o.title || o.tool), ' ', kindBadge(o.annotations))))),
          el('button', { type: 'button', 'data-connect': p.name, onclick: () => openConnect(p, null) }, `Connect ${p.title}`));
      }).filter(Boolean);
      fill($('#catalog'), cards.length ? cards : el('p', { class: 'muted', text: 'No provider or tool matches.' }));
    }
    $('#catalog-search').addEventListener('input', (ev) => renderCatalog(ev.target.value));
    try {
      providers = await catalog();
      renderCatalog('');
    } catch (err) {
      fill($('#catalog'), el('p', { class: 'error', text: describe(err) }));
    }
    await loadConnections();
    if (location.hash === '#connections') $('#connections').scrollIntoView();
  }

  // ---- Agents ---------------------------------------------------------------------
  const agentURL = (a) => a.mcp_url || `${PUBLIC_URL}/mcp/${TENANT}/agents/${a.id}`;
  const agentsMissing = (err) => err instanceof APIError && err.status === 404 && /no such API endpoint/.test(err.message);

  // missingTools lists an agent's tools whose connection was disconnected.
  const missingTools = (a) => (a.tools || []).filter((t) => t.connection_missing);
  function toolsCell(a) {
    const n = (a.tools || []).length;
    const gone = missingTools(a).length;
    return el('td', {}, String(n), gone ? el('span', { class: 'status needs_reconnect', 'data-missing': String(gone) }, ` ${gone} on a disconnected account`) : '');
  }

  async function agentsPage() {
    const list = $('#agent-list');
    try {
      const res = await api('GET', '/api/agents');
      const agents = res.agents || [];
      if (!agents.length) { fill(list, el('p', { class: 'muted', text: 'No agent yet. Create one and pick its tools.' })); return; }
      fill(list, scrollBox('Agents', el('table', {},
        el('thead', {}, el('tr', {}, ['Name', 'Description', 'Tools', 'MCP URL'].map((h) => el('th', { scope: 'col', text: h })))),
        el('tbody', {}, agents.map((a) => el('tr', {},
          el('th', { scope: 'row' }, el('a', { href: `/agents/${encodeURIComponent(a.id)}` }, a.name)),
          el('td', { text: a.description || '' }),
          toolsCell(a),
          el('td', {}, el('code', { text: agentURL(a) }))))))));
    } catch (err) {
      fill(list, el('p', { class: 'error', text: agentsMissing(err) ? 'This server has no agents API yet; agents cannot be listed.' : describe(err) }));
    }
  }

  async function agentPage(id) {
    let providers = [];
    let callable = [];
    let agent = null;
    try {
      [providers, callable, agent] = await Promise.all([catalog(), callableTools(), id ? api('GET', `/api/agents/${encodeURIComponent(id)}`) : null]);
    } catch (err) {
      fill($('#tool-picker'), el('p', { class: 'error', text: describe(err) }));
      return;
    }
    const conns = Object.fromEntries(callable.map((t) => [t.tool, t.connections]));
    const bound = Object.fromEntries(((agent && agent.tools) || []).map((t) => [t.tool, t.connection_id]));
    const gone = new Set(((agent && agent.tools) || []).filter((t) => t.connection_missing).map((t) => t.tool));
    if (agent) {
      const gone = missingTools(agent);
      if (gone.length) {
        fill($('#agent-missing'), el('p', {}, el('strong', { text: `${gone.length} tool${gone.length === 1 ? ' is' : 's are'} not served: ` }),
          `the account ${gone.length === 1 ? 'it was' : 'they were'} bound to was disconnected (${gone.map((t) => t.tool).join(', ')}). `,
          'Pick another account under "Runs on" and save, or connect the account again under ', el('a', { href: '/#connections' }, 'Integrations'), '.'));
        $('#agent-missing').hidden = false;
      }
      $('#agent-title').textContent = `Agent: ${agent.name}`;
      $('#agent-name').value = agent.name || '';
      $('#agent-description').value = agent.description || '';
      $('#agent-instructions').value = agent.instructions || '';
      $('#agent-confirm').value = agent.confirm || '';
      $('#agent-approval').value = agent.approval || '';
      $('#agent-toolmode').value = agent.tool_mode || '';
      $('#agent-runtools').value = agent.run_tools || '';
    }
    const rows = [];
    const groups = providers.map((p) => {
      const items = p.ops.map((op) => {
        const cs = conns[op.tool] || [];
        const safe = op.tool.replace(/[^a-zA-Z0-9_-]/g, '');
        const box = el('input', { type: 'checkbox', id: `pick-${safe}`, value: op.tool, disabled: cs.length ? undefined : true, 'aria-describedby': `desc-${safe}` });
        // A tool whose connection is gone stays ticked only if another account can run it.
        box.checked = op.tool in bound && (!gone.has(op.tool) || cs.length > 0);
        const sel = el('select', { id: `bind-${safe}`, 'aria-label': `Connection for ${op.tool}` },
          cs.map((c) => el('option', { value: c.id, text: c.label })));
        if (bound[op.tool]) sel.value = bound[op.tool];
        const row = el('div', { class: 'pick', 'data-tool': op.tool },
          el('div', { class: 'pickhead' }, box, el('label', { for: `pick-${safe}` }, el('strong', { text: op.title || op.tool }), ' ', el('code', { text: op.tool })), kindBadge(op.annotations),
            el('a', { href: `/tools/${encodeURIComponent(op.tool)}`, class: 'small' }, 'Try it')),
          el('p', { id: `desc-${safe}`, class: 'small', text: op.description }),
          gone.has(op.tool) ? el('p', { class: 'small error', 'data-missing': op.tool, text: 'Its account was disconnected: it is not served until it runs on another account.' }) : '',
          el('details', {}, el('summary', { text: 'Parameters' }), params(op.input_schema)),
          cs.length ? el('div', { class: 'bind' }, el('label', { for: `bind-${safe}`, text: 'Runs on' }), sel)
            : el('p', { class: 'small muted' }, `Connect a ${p.title} account first: `, el('a', { href: '/#connections' }, 'Integrations'), '.'));
        rows.push({ op, box, sel, row, text: `${op.tool} ${op.title} ${op.description}`.toLowerCase() });
        return row;
      });
      const count = el('span', { class: 'muted small' });
      const g = el('details', { class: 'group', 'data-provider': p.name, open: p.ops.some((o) => o.tool in bound) ? true : undefined },
        el('summary', {}, logo(p), ' ', el('strong', { text: p.title }), ' ', count), items);
      g.count = count;
      g.provider = p;
      return g;
    });
    fill($('#tool-picker'), groups);

    function estimate() {
      for (const g of groups) {
        const n = g.querySelectorAll('.pick input[type=checkbox]:checked').length;
        g.count.textContent = `${n} of ${g.provider.ops.length} tools selected${(conns[g.provider.ops[0] && g.provider.ops[0].tool] || []).length ? '' : ' · not connected'}`;
      }
      const chosen = rows.filter((r) => r.box.checked);
      const n = chosen.reduce((sum, r) => sum + tokens(r.op), 0);
      $('#token-estimate').textContent = chosen.length
        ? `${chosen.length} tool${chosen.length === 1 ? '' : 's'} selected: about ${n.toLocaleString()} tokens of tool definitions in the model's context on every request.`
        : 'No tools selected.';
    }
    $('#tool-picker').addEventListener('change', estimate);
    estimate();
    $('#tool-search').addEventListener('input', (ev) => {
      const q = ev.target.value.toLowerCase().trim();
      for (const r of rows) r.row.hidden = !!q && !r.text.includes(q);
      for (const g of groups) {
        g.hidden = ![...g.querySelectorAll('.pick')].some((n) => !n.hidden);
        if (q && !g.hidden) g.open = true;
      }
    });

    if (agent) showConnect(agent);
    $('#agent-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      hideError('#agent-error');
      const body = {
        name: $('#agent-name').value.trim(),
        description: $('#agent-description').value.trim(),
        instructions: $('#agent-instructions').value,
        confirm: $('#agent-confirm').value,
        approval: $('#agent-approval').value,
        tool_mode: $('#agent-toolmode').value,
        run_tools: $('#agent-runtools').value,
        tools: rows.filter((r) => r.box.checked).map((r) => ({ tool: r.op.tool, connection_id: r.sel.value })),
      };
      if (agent) body.version = agent.version;
      if (!body.name) {
        showError('#agent-error', new APIError(400, { error: { code: 'invalid', field: 'name', message: 'is required: name the agent' } }));
        $('#agent-name').focus();
        return;
      }
      $('#agent-save').disabled = true;
      try {
        agent = agent ? await api('PUT', `/api/agents/${encodeURIComponent(agent.id)}`, body) : await api('POST', '/api/agents', body);
        history.replaceState(null, '', `/agents/${encodeURIComponent(agent.id)}`);
        $('#agent-title').textContent = `Agent: ${agent.name}`;
        flash(`Saved agent ${agent.name}.`);
        showConnect(agent);
      } catch (err) {
        showError('#agent-error', agentsMissing(err) ? new APIError(404, { error: { code: 'not_found', message: 'This server has no agents API yet; the agent cannot be saved.' } }) : err);
        const f = err.field && document.getElementById(`agent-${err.field}`);
        if (f) { f.setAttribute('aria-invalid', 'true'); f.focus(); }
      } finally {
        $('#agent-save').disabled = false;
      }
    });
  }

  async function loadAgentKeys(agent) {
    const box = $('#agent-keys');
    try {
      const res = await api('GET', `/api/agents/${encodeURIComponent(agent.id)}/keys`);
      const keys = (res.keys || []).filter((k) => !k.revoked_at);
      fill(box, keys.length ? el('ul', {}, keys.map((k) => el('li', {}, `${k.name} `, el('code', { text: `sbk_${k.prefix}_…` }),
        ` created ${fmtTime(k.created_at)}, last used ${k.last_used_at ? fmtTime(k.last_used_at) : 'never'} `,
        el('button', { type: 'button', class: 'danger small', 'aria-label': `Revoke agent key ${k.name}`, onclick: async () => {
          if (!confirm(`Revoke the key ${k.name}? Clients using it are refused at once.`)) return;
          try { await api('DELETE', `/api/keys/${encodeURIComponent(k.id)}`); flash(`Revoked key ${k.name}.`); await loadAgentKeys(agent); } catch (err) { alertPage(err); }
        } }, 'Revoke'))))
        : el('p', { class: 'muted', text: 'No active key: create one above.' }));
    } catch (err) { fill(box, el('p', { class: 'error', text: describe(err) })); }
  }

  function showConnect(agent) {
    $('#agent-connect').hidden = false;
    $('#agent-mcp-url').value = agentURL(agent);
    renderSnippets(agent, '');
    loadAgentKeys(agent);
    $('#agent-delete').onclick = async () => {
      if (!confirm(`Delete the agent ${agent.name}? Its keys are revoked and its URL stops answering.`)) return;
      try {
        await api('DELETE', `/api/agents/${encodeURIComponent(agent.id)}`);
        location.assign('/agents');
      } catch (err) { alertPage(err); }
    };
    const btn = $('#agent-new-key');
    btn.onclick = async () => {
      try {
        const res = await api('POST', `/api/agents/${encodeURIComponent(agent.id)}/keys`, { name: `${agent.name} key` });
        const key = res.key || (res.api_key && res.api_key.key);
        $('#agent-key').value = key;
        $('#agent-key-box').hidden = false;
        renderSnippets(agent, key);
        flash('API key created: copy it now, it is shown only once.');
        loadAgentKeys(agent);
      } catch (err) { alertPage(err); }
    };
  }

  function renderSnippets(agent, key) {
    const url = agentURL(agent);
    const k = key || 'YOUR_AGENT_API_KEY';
    const name = (agent.name || 'switchboard').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'switchboard';
    const json = (v) => JSON.stringify(v, null, 2);
    const snippets = [
      ['claude', 'Claude Desktop (claude_desktop_config.json)', json({ mcpServers: { [name]: { command: 'npx', args: ['-y', 'mcp-remote', url, '--header', 'Authorization:${SWITCHBOARD_AUTH}'], env: { SWITCHBOARD_AUTH: `Bearer ${k}` } } } })],
      ['cursor', 'Cursor (~/.cursor/mcp.json)', json({ mcpServers: { [name]: { url, headers: { Authorization: `Bearer ${k}` } } } })],
      ['vscode', 'VS Code (.vscode/mcp.json)', json({ servers: { [name]: { type: 'http', url, headers: { Authorization: `Bearer ${k}` } } } })],
      ['curl', 'curl', `curl -sS -X POST '${url}' \\\n  -H 'Authorization: Bearer ${k}' \\\n  -H 'Content-Type: application/json' \\\n  -H 'Accept: application/json, text/event-stream' \\\n  -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1.0"}}}'`],
    ];
    fill($('#snippets'), el('h3', { text: 'Client configuration' }),
      key ? null : el('p', { class: 'muted', text: 'Create an API key above to have it filled in.' }),
      snippets.map(([id, title, text]) => el('div', { class: 'snippet' },
        el('div', { class: 'snippethead' }, el('h4', { id: `snippet-${id}-title`, text: title }), el('button', { type: 'button', 'data-copy': `snippet-${id}`, 'aria-label': `Copy the ${title} configuration` }, 'Copy')),
        el('pre', { tabindex: '0', role: 'region', 'aria-labelledby': `snippet-${id}-title` }, el('code', { id: `snippet-${id}`, text })))));
  }

  // ---- Try it -----------------------------------------------------------------------
  let fieldSeq = 0;
  // field renders an input for a schema and returns it with a reader of its value
  // (undefined when left empty) that throws on a value the schema's type cannot hold.
  function field(schema, name, required, path) {
    const id = `arg-${path.replace(/[^a-zA-Z0-9_-]/g, '-')}-${++fieldSeq}`;
    const t = typeOf(schema);
    const helpId = `${id}-help`;
    const label = el('label', { for: id }, name, required ? el('span', { class: 'req', text: ' (required)' }) : el('span', { class: 'muted', text: ' (optional)' }));
    const help = schema.description ? el('p', { id: helpId, class: 'small muted', text: schema.description }) : null;
    const desc = help ? helpId : undefined;
    const wrap = (input, read) => ({ node: el('div', { class: 'field', 'data-path': path }, label, input, help), read, input });
    const fail = (msg) => { const e = new Error(msg); e.field = path; throw e; };
    if (schema.enum) {
      const sel = el('select', { id, name: path, 'aria-describedby': desc }, required ? null : el('option', { value: '', text: '— not set —' }),
        schema.enum.map((v) => el('option', { value: JSON.stringify(v), text: String(v) })));
      if (schema.default !== undefined) sel.value = JSON.stringify(schema.default);
      return wrap(sel, () => (sel.value === '' ? undefined : JSON.parse(sel.value)));
    }
    if (t === 'boolean') {
      const sel = el('select', { id, name: path, 'aria-describedby': desc }, el('option', { value: '', text: '— not set —' }), el('option', { value: 'true', text: 'true' }), el('option', { value: 'false', text: 'false' }));
      return wrap(sel, () => (sel.value === '' ? undefined : sel.value === 'true'));
    }
    if (t === 'integer' || t === 'number') {
      const input = el('input', { id, name: path, type: 'number', step: t === 'integer' ? '1' : 'any', min: schema.minimum, max: schema.maximum, 'aria-describedby': desc });
      return wrap(input, () => {
        if (input.value.trim() === '') return undefined;
        const n = Number(input.value);
        if (!Number.isFinite(n) || (t === 'integer' && !Number.isInteger(n))) fail(t === 'integer' ? 'must be a whole number' : 'must be a number');
        return n;
      });
    }
    if (t === 'string') {
      const long = !schema.maxLength || schema.maxLength > 300;
      const input = long && /body|text|content|description|message/.test(name)
        ? el('textarea', { id, name: path, rows: '3', 'aria-describedby': desc, maxlength: schema.maxLength })
        : el('input', { id, name: path, 'aria-describedby': desc, maxlength: schema.maxLength, placeholder: schema.examples ? String(schema.examples[0]) : undefined });
      return wrap(input, () => (input.value === '' ? undefined : input.value));
    }
    if (t === 'array' && schema.items) {
      const items = [];
      const list = el('div', { class: 'items' });
      const add = () => {
        const f = field(schema.items, `${name} item`, true, `${path}[${items.length}]`);
        const entry = { f };
        const rm = el('button', { type: 'button', class: 'secondary small', onclick: () => { items.splice(items.indexOf(entry), 1); entry.node.remove(); } }, 'Remove');
        entry.node = el('div', { class: 'item' }, f.node, rm);
        items.push(entry);
        list.append(entry.node);
        const first = entry.node.querySelector('input,select,textarea');
        if (first) first.focus();
      };
      const fs = el('fieldset', { class: 'field', 'data-path': path, 'aria-describedby': desc },
        el('legend', {}, name, required ? el('span', { class: 'req', text: ' (required)' }) : el('span', { class: 'muted', text: ' (optional)' })), help, list,
        el('button', { type: 'button', class: 'secondary small', id, onclick: add }, `Add ${name} item`));
      return {
        node: fs,
        input: fs,
        read: () => {
          const vals = items.map((e) => e.f.read()).filter((v) => v !== undefined);
          return vals.length ? vals : undefined;
        },
      };
    }
    if (t === 'object' && schema.properties) {
      const sub = objectFields(schema, path);
      const fs = el('fieldset', { class: 'field', 'data-path': path }, el('legend', {}, name, required ? el('span', { class: 'req', text: ' (required)' }) : el('span', { class: 'muted', text: ' (optional)' })), help, sub.nodes);
      return { node: fs, input: fs, read: () => { const v = sub.read(); return Object.keys(v).length ? v : undefined; } };
    }
    // Anything else (free-form objects, unions) is typed as JSON.
    const ta = el('textarea', { id, name: path, rows: '3', class: 'mono', placeholder: 'JSON', 'aria-describedby': desc });
    return wrap(ta, () => {
      if (ta.value.trim() === '') return undefined;
      try { return JSON.parse(ta.value); } catch (err) { return fail('is not valid JSON'); }
    });
  }
  function objectFields(schema, prefix) {
    const req = new Set(schema.required || []);
    const fields = Object.entries(schema.properties || {}).map(([n, s]) => [n, field(s, n, req.has(n), prefix ? `${prefix}.${n}` : n)]);
    return {
      nodes: fields.map(([, f]) => f.node),
      fields,
      read: () => {
        const out = {};
        for (const [n, f] of fields) { const v = f.read(); if (v !== undefined) out[n] = v; }
        return out;
      },
    };
  }

  async function toolPage(name) {
    let providers;
    let callable;
    try {
      [providers, callable] = await Promise.all([catalog(), callableTools()]);
    } catch (err) {
      fill($('#tool-info'), el('p', { class: 'error', text: describe(err) }));
      return;
    }
    const found = findTool(providers, name);
    if (!found) {
      fill($('#tool-info'), el('p', { class: 'error', text: `There is no tool named ${name}. Pick one from the catalog under Integrations.` }));
      $('#try-form').hidden = true;
      return;
    }
    const { provider: p, op } = found;
    document.title = `${op.title || op.tool} · Switchboard`;
    $('#tool-title').textContent = op.title || op.tool;
    fill($('#tool-info'),
      el('p', {}, logo(p), ' ', p.title, ' · ', el('code', { text: op.tool }), ' ', kindBadge(op.annotations)),
      el('p', { text: op.description }),
      op.scopes && op.scopes.length ? el('p', { class: 'small muted', text: `Scopes: ${op.scopes.join(', ')}` }) : null,
      op.docs_url ? el('p', { class: 'small' }, el('a', { href: op.docs_url, rel: 'noreferrer' }, 'Upstream API documentation')) : null,
      el('p', { class: 'small muted', text: `About ${tokens(op).toLocaleString()} tokens in a model's context.` }));
    const binding = callable.find((t) => t.tool === name);
    const cs = (binding && binding.connections) || [];
    if (!cs.length) {
      fill($('#try-connection'), el('p', { class: 'error' }, `Connect a ${p.title} account first, under `, el('a', { href: '/#connections' }, 'Integrations'), ', then come back.'));
    } else {
      fill($('#try-connection'), el('label', { for: 'try-conn', text: 'Connection' }),
        el('select', { id: 'try-conn' }, cs.map((c) => el('option', { value: c.id, text: c.label }))));
    }
    const form = objectFields(op.input_schema || {}, '');
    fill($('#try-fields'), form.nodes.length ? form.nodes : el('p', { class: 'muted', text: 'This tool takes no arguments.' }));
    $('#try-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      hideError('#try-error');
      for (const n of document.querySelectorAll('[aria-invalid]')) n.removeAttribute('aria-invalid');
      let args;
      try {
        args = form.read();
      } catch (err) {
        markField(err.field, `${err.field}: ${err.message}`);
        return;
      }
      const body = { arguments: args };
      if ($('#try-conn')) body.connection_id = $('#try-conn').value;
      $('#try-run').disabled = true;
      $('#try-result').hidden = true;
      try {
        if ($('#try-async').checked) {
          await runAsync(name, body);
          return;
        }
        const res = await api('POST', `/api/tools/${encodeURIComponent(name)}/call`, body);
        $('#try-output').textContent = JSON.stringify(res.result, null, 2);
        $('#try-result').hidden = false;
        flash('The tool ran. Its call is in Activity.');
      } catch (err) {
        if (err.code === 'confirmation_required') {
          const n = $('#try-error');
          n.textContent = 'This tool needs a person\'s confirmation under your confirm policy: tick "Run in the background" and run it again, then approve it on the page its run links to.';
          n.hidden = false;
        } else if (err.field && err.field !== 'arguments') markField(err.field, describe(err));
        else showError('#try-error', err);
      } finally {
        $('#try-run').disabled = false;
      }
    });
  }
  // runAsync starts the call as an async run and follows its state until it ends.
  async function runAsync(name, body) {
    let run = await api('POST', '/api/runs', { tool: name, ...body });
    const id = run.run_id || run.id;
    const show = () => {
      const shown = { run_id: id, state: run.state };
      if (run.output !== undefined) shown.output = run.output;
      if (run.error) shown.error = run.error;
      if (run.approval_url) shown.approval_url = run.approval_url;
      $('#try-output').textContent = JSON.stringify(shown, null, 2);
      $('#try-result').hidden = false;
    };
    show();
    for (let i = 0; i < 120 && ['working', 'queued', 'pending'].includes(run.state); i++) {
      await new Promise((r) => setTimeout(r, 500));
      run = await api('GET', `/api/runs/${encodeURIComponent(id)}`);
      show();
    }
    if (run.state === 'input_required' && run.approval_url) {
      flash(`Run ${id} waits for a person's confirmation: approve or decline it at ${run.approval_url} (also listed under Activity).`);
      return;
    }
    flash(`Run ${id} is ${String(run.state).replace(/_/g, ' ')}. Runs are listed under Activity.`);
  }

  function markField(path, text) {
    const e = $('#try-error');
    e.textContent = text;
    e.hidden = false;
    const top = String(path || '').split(/[.[]/)[0];
    const wrap = document.querySelector(`.field[data-path="${CSS.escape(path)}"]`) || document.querySelector(`.field[data-path="${CSS.escape(top)}"]`);
    const input = wrap && wrap.querySelector('input,select,textarea,button');
    if (input) { input.setAttribute('aria-invalid', 'true'); input.focus(); }
  }

  // ---- Activity ---------------------------------------------------------------------
  async function activityPage() {
    let agents = [];
    let conns = [];
    const [a, c, t] = await Promise.allSettled([api('GET', '/api/agents'), api('GET', '/api/connections'), callableTools()]);
    if (a.status === 'fulfilled') agents = a.value.agents || [];
    if (c.status === 'fulfilled') conns = c.value.connections || [];
    const agentName = Object.fromEntries(agents.map((x) => [`agent:${x.id}`, x.name]));
    const connName = Object.fromEntries(conns.map((x) => [x.id, `${x.provider}: ${x.account_label}`]));
    $('#f-agent').append(...agents.map((x) => el('option', { value: `agent:${x.id}`, text: x.name })));
    if (!agents.length) $('#f-agent').disabled = true;
    $('#f-connection').append(...conns.map((x) => el('option', { value: x.id, text: connName[x.id] })));
    if (t.status === 'fulfilled') $('#tool-names').append(...t.value.map((x) => el('option', { value: x.tool })));

    const who = (p) => agentName[p] ? `agent ${agentName[p]}` : p === `user:${USER_ID}` ? 'you' : p;
    let cursor = '';
    let query = '';
    const rows = $('#audit-rows');
    function detail(e) {
      const dl = $('#audit-detail-list');
      const entries = [['Time', fmtTime(e.at)], ['Event', e.kind], ['Who', who(e.principal)], ['Credential', e.key_id], ['Tool', e.tool], ['Connection', connName[e.connection_id] || e.connection_id],
        ['Outcome', e.outcome], ['Upstream status', e.upstream_status], ['Latency', e.latency_us ? `${(e.latency_us / 1000).toFixed(1)} ms` : ''], ['Arguments (keyed hash)', e.args_sha256], ['Detail', e.detail], ['Event ID', e.id]];
      fill(dl, entries.filter(([, v]) => v !== undefined && v !== '' && v !== 0).map(([k, v]) => [el('dt', { text: k }), el('dd', { text: String(v) })]));
      $('#audit-detail').showModal();
    }
    async function load(more) {
      try {
        const res = await api('GET', `/api/audit?limit=50${query}${more && cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        const trs = (res.events || []).map((e) => el('tr', { 'data-event': e.id },
          el('td', { text: fmtTime(e.at) }), el('td', { text: e.kind.replace(/_/g, ' ') }), el('td', { text: who(e.principal) }),
          el('td', {}, e.tool ? el('a', { href: `/tools/${encodeURIComponent(e.tool)}` }, e.tool) : ''),
          el('td', { text: connName[e.connection_id] || e.connection_id || '' }),
          el('td', {}, el('span', { class: `outcome ${e.outcome === 'ok' ? 'ok' : 'bad'}`, text: e.outcome })),
          el('td', { class: 'num', text: e.latency_us ? `${(e.latency_us / 1000).toFixed(1)} ms` : '' }),
          el('td', {}, el('button', { type: 'button', class: 'secondary small', 'aria-label': `Details of the ${e.kind.replace(/_/g, ' ')} at ${fmtTime(e.at)}`, onclick: () => detail(e) }, 'Details'))));
        if (more) rows.append(...trs);
        else fill(rows, trs.length ? trs : el('tr', {}, el('td', { colspan: '8', class: 'muted', text: 'No events match. Widen the filters, or run a tool.' })));
        cursor = res.next_cursor || '';
        $('#audit-more').hidden = !cursor;
      } catch (err) {
        fill(rows, el('tr', {}, el('td', { colspan: '8', class: 'error', text: describe(err) })));
      }
    }
    $('#audit-filters').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const f = new FormData(ev.target);
      const q = new URLSearchParams();
      for (const [k, v] of f.entries()) {
        if (!v) continue;
        if (k === 'agent') q.set('principal', v);
        else if (k === 'since' || k === 'until') q.set(k, new Date(v).toISOString());
        else q.set(k, v.trim());
      }
      query = q.toString() ? `&${q}` : '';
      load(false);
    });
    $('#audit-more').addEventListener('click', () => load(true));
    await load(false);

    const runs = $('#runs');
    try {
      const res = await api('GET', '/api/runs');
      const list = res.runs || [];
      fill(runs, list.length ? scrollBox('Runs', el('table', {},
        el('thead', {}, el('tr', {}, ['Run', 'Tool', 'State', 'Started', 'Updated'].map((h) => el('th', { scope: 'col', text: h })))),
        el('tbody', {}, list.map((r) => el('tr', {}, el('td', {}, el('code', { text: r.run_id || r.id })), el('td', { text: r.tool || '' }),
          el('td', {}, el('span', { class: `status ${r.state}`, text: (r.state || '').replace(/_/g, ' ') })), el('td', { text: fmtTime(r.created_at) }), el('td', { text: fmtTime(r.updated_at) }))))))
        : el('p', { class: 'muted', text: 'No async runs yet. Clients start one by calling a tool as a task.' }));
    } catch (err) {
      fill(runs, el('p', { class: err.status === 404 ? 'muted' : 'error', text: err.status === 404 ? 'This server does not run async tool calls yet.' : describe(err) }));
    }
  }

  // ---- Settings -------------------------------------------------------------------
  async function settingsPage() {
    async function loadKeys() {
      const box = $('#key-list');
      try {
        const res = await api('GET', '/api/keys');
        const keys = res.keys || [];
        fill(box, keys.length ? scrollBox('API keys', el('table', { id: 'keys-table' },
          el('thead', {}, el('tr', {}, ['Name', 'Key', 'For', 'Created', 'Last used', 'Status', 'Actions'].map((h) => el('th', { scope: 'col', text: h })))),
          el('tbody', {}, keys.map((k) => el('tr', { 'data-key': k.id },
            el('th', { scope: 'row', text: k.name }), el('td', {}, el('code', { text: `sbk_${k.prefix}_…` })),
            el('td', { text: k.agent_id ? `agent ${k.agent_id}` : k.user_id === USER_ID ? 'you' : `user ${k.user_id}` }),
            el('td', { text: fmtTime(k.created_at) }), el('td', { text: k.last_used_at ? fmtTime(k.last_used_at) : 'never' }),
            el('td', {}, el('span', { class: `status ${k.revoked_at ? 'revoked' : 'active'}`, text: k.revoked_at ? 'revoked' : 'active' })),
            el('td', {}, k.revoked_at ? '' : el('button', { type: 'button', class: 'danger', 'aria-label': `Revoke key ${k.name} (sbk_${k.prefix})`, onclick: () => revoke(k) }, 'Revoke')))))))
          : el('p', { class: 'muted', text: 'No API keys.' }));
      } catch (err) { fill(box, el('p', { class: 'error', text: describe(err) })); }
    }
    async function revoke(k) {
      if (!confirm(`Revoke the key ${k.name} (sbk_${k.prefix}_…)? Clients using it are refused at once.`)) return;
      try {
        await api('DELETE', `/api/keys/${encodeURIComponent(k.id)}`);
        flash(`Revoked key ${k.name}.`);
        await loadKeys();
      } catch (err) { alertPage(err); }
    }
    $('#key-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const name = $('#key-name').value.trim();
      if (!name) { alertPage(new APIError(400, { error: { code: 'invalid', field: 'name', message: 'is required: name the key after where it is used' } })); $('#key-name').focus(); return; }
      try {
        const res = await api('POST', '/api/keys', { name });
        $('#new-key').value = res.key;
        $('#new-key-box').hidden = false;
        $('#key-name').value = '';
        $('#new-key').focus();
        flash('API key created: copy it now, it is shown only once.');
        await loadKeys();
      } catch (err) { alertPage(err); }
    });

    async function loadApps() {
      const box = $('#app-list');
      try {
        const res = await api('GET', '/api/connected-apps');
        const apps = res.connected_apps || [];
        fill(box, apps.length ? scrollBox('Connected apps', el('table', { id: 'apps-table' },
          el('thead', {}, el('tr', {}, ['App', 'MCP URL', 'Acts as', 'Allowed', 'Last used', 'Actions'].map((h) => el('th', { scope: 'col', text: h })))),
          el('tbody', {}, apps.map((g) => el('tr', { 'data-grant': g.id },
            el('th', { scope: 'row', text: g.client_name }), el('td', {}, el('code', { text: g.resource })),
            el('td', { text: g.agent_id ? `agent ${g.agent_id}` : g.user_id === USER_ID ? 'you' : `user ${g.user_id}` }),
            el('td', { text: `${fmtTime(g.created_at)}${g.consented_by === USER_ID ? '' : ` by user ${g.consented_by}`}` }),
            el('td', { text: g.last_used_at ? fmtTime(g.last_used_at) : 'never' }),
            el('td', {}, el('button', { type: 'button', class: 'danger', 'aria-label': `Revoke ${g.client_name}'s access`, onclick: () => revokeApp(g) }, 'Revoke')))))))
          : el('p', { class: 'muted', text: 'No connected apps. An MCP client that supports sign-in connects with only the MCP URL.' }));
      } catch (err) { fill(box, el('p', { class: 'error', text: describe(err) })); }
    }
    async function revokeApp(g) {
      if (!confirm(`Revoke ${g.client_name}'s access? It is refused at once and must be allowed again to connect.`)) return;
      try {
        await api('DELETE', `/api/connected-apps/${encodeURIComponent(g.id)}`);
        flash(`Revoked ${g.client_name}'s access.`);
        await loadApps();
      } catch (err) { alertPage(err); }
    }

    async function loadMembers() {
      try {
        const res = await api('GET', '/api/users');
        const heads = ['Email', 'Role', 'Since'].concat(IS_ADMIN ? ['Actions'] : []);
        fill($('#member-list'), scrollBox('Members', el('table', { id: 'members-table' },
          el('thead', {}, el('tr', {}, heads.map((h) => el('th', { scope: 'col', text: h })))),
          el('tbody', {}, (res.users || []).map((u) => el('tr', { 'data-user': u.id }, el('th', { scope: 'row', text: u.email + (u.id === USER_ID ? ' (you)' : '') }),
            el('td', {}, IS_ADMIN ? roleSelect(u) : u.role), el('td', { text: fmtTime(u.created_at) }),
            IS_ADMIN ? el('td', {}, memberActions(u)) : null))))));
      } catch (err) { fill($('#member-list'), el('p', { class: 'error', text: describe(err) })); }
      if (!IS_ADMIN) return;
      try {
        const res = await api('GET', '/api/invitations');
        const inv = res.invitations || [];
        fill($('#invitation-list'), inv.length ? [el('h3', { text: 'Pending invitations' }), el('ul', {}, inv.map((i) => el('li', { 'data-invitation': i.id }, `${i.email} as ${i.role}, until ${fmtTime(i.expires_at)} `,
          el('button', { type: 'button', class: 'danger small', 'aria-label': `Revoke the invitation of ${i.email}`, onclick: async () => {
            if (!confirm(`Revoke the invitation of ${i.email}? Its link stops working at once.`)) return;
            try { await api('DELETE', `/api/invitations/${encodeURIComponent(i.id)}`); flash(`Revoked the invitation of ${i.email}.`); await loadMembers(); } catch (err) { alertPage(err); }
          } }, 'Revoke'))))] : []);
      } catch (err) { fill($('#invitation-list'), el('p', { class: 'error', text: describe(err) })); }
    }
    // roleSelect changes a member's role; only an owner grants or takes away owner.
    function roleSelect(u) {
      const roles = ['member', 'admin'].concat(ROLE === 'owner' || u.role === 'owner' ? ['owner'] : []);
      const sel = el('select', { 'aria-label': `Role of ${u.email}`, 'data-role-of': u.id, disabled: u.role === 'owner' && ROLE !== 'owner',
        onchange: async () => {
          const role = sel.value;
          if (u.id === USER_ID && !confirm(`Change your own role to ${role}? You may lose the right to manage the workspace.`)) { sel.value = u.role; return; }
          try {
            await api('PATCH', `/api/users/${encodeURIComponent(u.id)}`, { role });
            flash(`${u.email} is now ${role}.`);
            if (u.id === USER_ID) { location.reload(); return; }
            await loadMembers();
          } catch (err) { sel.value = u.role; alertPage(err); }
        } }, roles.map((r) => el('option', { value: r, text: r })));
      sel.value = u.role;
      return sel;
    }
    // memberActions removes a member, after a confirmation; nobody removes themselves.
    function memberActions(u) {
      if (u.id === USER_ID || (u.role === 'owner' && ROLE !== 'owner')) return '';
      return el('button', { type: 'button', class: 'danger small', 'aria-label': `Remove ${u.email}`, onclick: async () => {
        if (!confirm(`Remove ${u.email} from the workspace? Their API keys are revoked, their sessions end and the agents they created are deleted.`)) return;
        try {
          await api('DELETE', `/api/users/${encodeURIComponent(u.id)}`);
          flash(`Removed ${u.email}.`);
          await Promise.all([loadMembers(), loadKeys()]);
        } catch (err) { alertPage(err); }
      } }, 'Remove');
    }
    const inviteForm = $('#invite-form');
    if (inviteForm) {
      inviteForm.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        try {
          const res = await api('POST', '/api/invitations', { email: $('#invite-email').value.trim(), role: $('#invite-role').value });
          $('#invite-link').value = res.url;
          $('#invite-link-box').hidden = false;
          $('#invite-email').value = '';
          flash(`Invitation made for ${res.email}: copy the link and send it.`);
          await loadMembers();
        } catch (err) {
          alertPage(err);
          if (err.field === 'email') $('#invite-email').focus();
        }
      });
    }
    async function loadDefaults() {
      try {
        const st = await api('GET', '/api/mcp-settings');
        $('#default-confirm').value = st.confirm;
        $('#default-approval').value = st.approval || 'relay';
        $('#default-toolmode').value = st.tool_mode;
        $('#default-runtools').value = st.run_tools || 'auto';
        // Only now may an admin change them: before, the saved values would overwrite the choice.
        const form = $('#defaults-form');
        if (IS_ADMIN) for (const c of form.elements) c.disabled = false;
        form.removeAttribute('aria-busy');
      } catch (err) {
        $('#defaults-form').replaceChildren(el('p', { class: err.status === 404 ? 'muted' : 'error', text: err.status === 404 ? 'This server has no MCP settings.' : describe(err) }));
      }
    }
    $('#defaults-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      try {
        await api('PUT', '/api/mcp-settings', { confirm: $('#default-confirm').value, approval: $('#default-approval').value, tool_mode: $('#default-toolmode').value, run_tools: $('#default-runtools').value });
        flash('Saved the defaults. Live MCP sessions pick them up.');
      } catch (err) { alertPage(err); }
    });
    async function loadOAuthApps() {
      if (!$('#oauth-form')) return;
      try {
        const [res, providers] = await Promise.all([api('GET', '/api/oauth-apps'), catalog()]);
        $('#oauth-redirect').value = res.redirect_uri || '';
        const oauth = providers.filter((p) => (p.auth_kinds || []).includes('oauth2'));
        const sel = $('#oauth-provider');
        if (!sel.options.length) sel.append(...oauth.map((p) => el('option', { value: p.name, text: p.title })));
        const apps = res.oauth_apps || [];
        const title = Object.fromEntries(providers.map((p) => [p.name, p.title]));
        fill($('#oauth-apps'), apps.length ? el('ul', {}, apps.map((a) => el('li', {}, `${title[a.provider] || a.provider}: client `, el('code', { text: a.client_id }), ` (since ${fmtTime(a.created_at)}) `,
          el('button', { type: 'button', class: 'danger small', 'aria-label': `Remove the ${a.provider} OAuth app`, onclick: async () => {
            if (!confirm(`Remove the workspace's ${title[a.provider] || a.provider} OAuth app? Connecting falls back to the deployment's app, if there is one.`)) return;
            try { await api('DELETE', `/api/oauth-apps/${encodeURIComponent(a.provider)}`); flash('Removed the OAuth app.'); await loadOAuthApps(); } catch (err) { alertPage(err); }
          } }, 'Remove'))))
          : el('p', { class: 'muted', text: 'No workspace OAuth app: connecting with OAuth uses the deployment\'s apps, where the operator set them.' }));
      } catch (err) {
        fill($('#oauth-apps'), el('p', { class: err.status === 404 ? 'muted' : 'error', text: err.status === 404 ? 'This server has no OAuth apps.' : describe(err) }));
      }
    }
    const oauthForm = $('#oauth-form');
    if (oauthForm) {
      oauthForm.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        const secret = $('#oauth-client-secret').value;
        $('#oauth-client-secret').value = ''; // the secret never stays in the page
        try {
          await api('PUT', `/api/oauth-apps/${encodeURIComponent($('#oauth-provider').value)}`, { client_id: $('#oauth-client-id').value.trim(), client_secret: secret });
          $('#oauth-client-id').value = '';
          flash('Saved the OAuth app. "Continue with OAuth" uses it now.');
          await loadOAuthApps();
        } catch (err) {
          alertPage(err);
          const f = err.field && document.getElementById(`oauth-${err.field.replace('_', '-')}`);
          if (f) { f.setAttribute('aria-invalid', 'true'); f.focus(); }
        }
      });
    }
    await Promise.all([loadKeys(), loadApps(), loadMembers(), loadDefaults(), loadOAuthApps()]);
  }

  const pages = {
    integrations: integrationsPage,
    agents: agentsPage,
    agent: () => agentPage(document.body.dataset.param),
    tool: () => toolPage(document.body.dataset.param),
    activity: activityPage,
    settings: settingsPage,
  };
  const run = pages[document.body.dataset.page];
  if (run) run().catch(alertPage);
})();
