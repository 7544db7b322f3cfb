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
  // Who may change what: the pages show only the controls the API would allow.
  const mayManageConnection = (c) => IS_ADMIN || c.owner_user_id === USER_ID;
  const mayManageAgent = (a) => IS_ADMIN || a.created_by === USER_ID;

  // el builds an element: attrs may hold text, class, on<event> handlers and attributes.
  // scrollBox wraps a table that may scroll sideways in a region keyboard users can
  // focus and scroll, named for screen readers.
  const scrollBox = (label, table) => el('div', { class: 'tablewrap', tabindex: '0', role: 'region', 'aria-label': label }, stack(table));
  // stack lets a table become a list of cards in a narrow window (the stylesheet does it
  // below 40rem): every cell is labelled with its column's heading, and every part keeps
  // its table role for screen readers, which a change of display would drop.
  function stack(table) {
    table.classList.add('rowcards'); // not .stack, the forms' column layout
    table.setAttribute('role', 'table');
    for (const g of table.querySelectorAll(':scope > thead, :scope > tbody')) g.setAttribute('role', 'rowgroup');
    for (const tr of table.querySelectorAll(':scope > thead > tr')) tr.setAttribute('role', 'row');
    for (const th of table.querySelectorAll(':scope > thead th')) th.setAttribute('role', 'columnheader');
    labelRows(table, table.querySelectorAll(':scope > tbody > tr'));
    return table;
  }
  function labelRows(table, rows) {
    const heads = [...table.querySelectorAll(':scope > thead th')].map((th) => th.textContent.trim());
    for (const tr of rows) {
      tr.setAttribute('role', 'row');
      [...tr.children].forEach((c, i) => {
        c.setAttribute('role', c.tagName === 'TH' ? 'rowheader' : 'cell');
        if (c.tagName === 'TD' && heads[i] && !c.hasAttribute('colspan')) c.dataset.label = heads[i];
      });
    }
  }
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
      this.body = body; // the whole answer: a refused workflow's problems, by step
    }
  }

  // api calls the REST API with the session cookie and, for changes, the CSRF token.
  async function api(method, path, body, signal) {
    const opts = { method, credentials: 'same-origin', headers: { Accept: 'application/json' }, signal };
    if (method !== 'GET') opts.headers['X-CSRF-Token'] = CSRF;
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(path, opts);
    } catch (err) {
      if (err && err.name === 'AbortError') throw new APIError(0, { error: { code: 'aborted', message: 'canceled' } });
      throw new APIError(0, { error: { code: 'network', message: 'the server did not answer; check that it is running and your network, then try again' } });
    }
    if (res.status === 204) return null;
    let data = null;
    try { data = await res.json(); } catch (err) { data = null; }
    if (!res.ok) {
      if (res.status === 401) {
        location.assign('/signin?next=' + encodeURIComponent(location.pathname + location.search));
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

  // ask shows a confirmation in the page (a modal dialog: focus starts on Cancel,
  // Escape cancels, focus returns to where it was) and resolves to whether the person
  // confirmed. body is what the change does, details an optional block (arguments).
  let askDialog = null;
  let settle = null; // answers the confirmation on screen
  // answer closes the confirmation at once (not on the dialog's close event, which comes
  // a task later and could answer the next one), returns focus, then resolves.
  const answer = (yes) => {
    if (!settle) return;
    const s = settle;
    settle = null;
    askDialog.close();
    s(yes);
  };
  function ask({ title, body, details, ok, cancel, danger, opener }) {
    if (!askDialog) {
      askDialog = el('dialog', { id: 'confirm-dialog', 'aria-labelledby': 'confirm-title', 'aria-describedby': 'confirm-body',
        oncancel: (ev) => { ev.preventDefault(); answer(false); } }, // Escape
      el('form', { class: 'stack', onsubmit: (ev) => { ev.preventDefault(); answer(!!ev.submitter && ev.submitter.value === 'ok'); } },
        el('h2', { id: 'confirm-title' }), el('div', { id: 'confirm-body' }), el('div', { id: 'confirm-details' }),
        el('div', { class: 'row buttons' }, el('button', { type: 'submit', value: 'cancel', class: 'secondary', id: 'confirm-cancel' }, 'Cancel'),
          el('button', { type: 'submit', value: 'ok', id: 'confirm-ok' }, 'OK'))));
      document.body.append(askDialog);
    }
    answer(false); // one confirmation at a time: an unanswered one is declined
    const from = opener || document.activeElement;
    $('#confirm-title').textContent = title;
    fill($('#confirm-body'), [].concat(body).map((t) => el('p', { text: t })));
    fill($('#confirm-details'), details ? el('pre', { tabindex: '0', role: 'region', 'aria-label': details.label }, el('code', { text: details.text })) : []);
    $('#confirm-ok').textContent = ok || 'OK';
    $('#confirm-cancel').textContent = cancel || 'Cancel';
    $('#confirm-ok').className = danger ? 'danger' : '';
    askDialog.showModal();
    $('#confirm-cancel').focus();
    return new Promise((resolve) => {
      settle = (yes) => {
        if (from && from.isConnected) from.focus();
        resolve(yes);
      };
    });
  }

  const fmtTime = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
  // A connection as a picker names it: its label, and whose it is when someone else
  // shared it (two people's connections may carry labels that read alike).
  const connLabel = (c) => (c.owner ? `${c.label} · ${c.owner}` : c.label);
  // Under a listed connection's label: whose it is, when it is someone else's.
  const ownerLine = (c) => (c.owner ? el('div', { class: 'small muted', 'data-owner': c.owner_user_id, text: `${c.shared ? 'Shared by' : 'Owned by'} ${c.owner}` }) : null);
  const kindOf = (ann) => (ann && ann.readOnlyHint ? 'reads' : ann && ann.destructiveHint ? 'destroys' : 'writes');
  const kindBadge = (ann) => { const k = kindOf(ann); return el('span', { class: `badge ${k}`, text: k }); };

  // Copy buttons copy the value of the element their data-copy names, and say so on
  // the button itself for a moment (and to screen readers through the status line).
  document.addEventListener('click', async (ev) => {
    const b = ev.target.closest('[data-copy]');
    if (!b) return;
    const src = document.getElementById(b.dataset.copy);
    const text = 'value' in src ? src.value : src.textContent;
    const said = (label) => {
      if (!b.dataset.label) b.dataset.label = b.textContent;
      b.textContent = label;
      clearTimeout(b.copiedTimer);
      b.copiedTimer = setTimeout(() => { b.textContent = b.dataset.label; }, 2000);
    };
    try {
      await navigator.clipboard.writeText(text);
      said('Copied');
      flash('Copied to the clipboard.');
    } catch (err) {
      if (src.select) src.select();
      said('Press Ctrl+C');
      flash('Copying was refused by the browser: the text is selected, press Ctrl+C (or ⌘C).');
    }
  });

  // Catalog: providers, and the operations of those a page asks for (all by default),
  // loaded once per page: Settings and Try it fetch only what they show.
  let providersPromise;
  const providerList = () => (providersPromise ||= api('GET', '/api/providers').then((res) => res.providers || []));
  const opsOf = async (p) => { p.ops ||= (await api('GET', `/api/providers/${encodeURIComponent(p.name)}/operations`)).operations || []; return p; };
  async function catalog(only) {
    const providers = await providerList();
    await Promise.all(providers.filter((p) => !only || only(p)).map(opsOf));
    return only ? providers.filter((p) => p.ops) : providers;
  }
  const callableTools = () => api('GET', '/api/tools').then((r) => r.tools || []);
  const findTool = (providers, name) => {
    for (const p of providers) for (const op of p.ops) if (op.tool === name) return { provider: p, op };
    return null;
  };
  const scopesOf = (p) => [...new Set((p.ops || []).flatMap((o) => o.scopes || []))].sort();
  // logo is a provider's mark (vendored SVGs, see static/logos/README.md), or its
  // initial where there is none.
  const MARKS = new Set(['github', 'slack', 'jira', 'notion', 'hubspot', 'airtable', 'linear']);
  const logo = (p) => (MARKS.has(p.name) ? el('span', { class: `logo mark mark-${p.name}`, 'aria-hidden': 'true', 'data-logo': p.name })
    : el('span', { class: 'logo', 'aria-hidden': 'true', text: (p.title || p.name).charAt(0).toUpperCase() }));

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

  // notFoundView replaces the page's content with a not-found page: what is missing
  // and where to go instead (an unknown tool or agent, whose page the server cannot tell).
  function notFoundView(heading, text, href, where) {
    document.title = 'Not found · Switchboard';
    const main = $('#main');
    for (const n of [...main.children]) if (n.id !== 'flash' && n.id !== 'alert') n.remove();
    main.append(el('h1', { id: 'not-found', tabindex: '-1', text: heading }), el('p', { text }), el('p', {}, el('a', { href }, where)));
    $('#not-found').focus();
  }

  // ---- Integrations -------------------------------------------------------------
  // steps renders a provider's token help (one step a line) as a numbered list, with
  // its https:// addresses as links.
  function steps(text) {
    const lines = String(text || '').split('\n').map((l) => l.trim()).filter(Boolean);
    const linked = (line) => line.split(/(https:\/\/[^\s,;()]+[^\s,;().])/).map((part) =>
      /^https:\/\/[a-z0-9-]+\.[a-z0-9.-]+/i.test(part) ? el('a', { href: part, target: '_blank', rel: 'noopener noreferrer' }, part) : part);
    return lines.length > 1 ? el('ol', { class: 'steps' }, lines.map((l) => el('li', {}, linked(l)))) : el('p', {}, linked(lines[0] || 'Paste an API token of the account.'));
  }

  async function integrationsPage() {
    const dlg = $('#connect-dialog');
    let current = null; // { provider, replaces }
    let opener = null; // the button that opened a dialog: focus goes back to it
    const form = $('#connect-form');
    $('#connect-cancel').addEventListener('click', () => dlg.close());
    dlg.addEventListener('close', () => {
      $('#connect-token-input').value = '';
      $('#connect-token-input').removeAttribute('aria-invalid');
      if (opener && opener.isConnected) opener.focus();
    });

    function openConnect(p, replaces, from) {
      current = { provider: p, replaces };
      opener = from || document.activeElement;
      hideError('#connect-error');
      $('#connect-title').textContent = replaces ? `Reconnect ${p.title}: ${replaces.account_label}` : `Connect ${p.title}`;
      const kinds = p.auth_kinds || [];
      const oauth = kinds.includes('oauth2');
      const token = kinds.includes('api_key');
      // "Continue with OAuth" only where an OAuth app is configured; else where to set one.
      $('#connect-oauth').hidden = !(oauth && p.oauth_ready);
      $('#connect-or-token').hidden = !token;
      const missing = $('#connect-oauth-missing');
      missing.hidden = !(oauth && !p.oauth_ready);
      if (!missing.hidden) {
        fill(missing, el('p', {}, `OAuth is not set up for ${p.title} in this workspace${token ? ': paste a token below, or ' : '. '}`,
          IS_ADMIN ? [token ? 'add' : 'Add', ' the workspace\'s OAuth app under ', el('a', { href: '/settings#oauth-title', id: 'connect-oauth-settings' }, 'Settings → OAuth apps'), '.']
            : [token ? 'ask' : 'Ask', ` an admin of the workspace to add its OAuth app under Settings → OAuth apps, or the operator to set the deployment's (SWITCHBOARD_OAUTH_${p.name.toUpperCase()}_CLIENT_ID).`]));
      }
      $('#connect-token').hidden = !token;
      $('#connect-submit').hidden = !token;
      fill($('#connect-help'), steps(p.token_help));
      const scopes = p.scopes || scopesOf(p);
      $('#connect-scopes').textContent = scopes.length ? `Scopes its tools need: ${scopes.join(', ')}.` : '';
      $('#connect-token-input').value = '';
      $('#connect-label').value = '';
      $('#connect-shared').checked = replaces ? !!replaces.shared : false;
      // A reconnect renews the same connection: its sharing and its agents stay.
      $('#connect-shared').closest('label').hidden = !!replaces;
      $('#connect-reconnect-note').hidden = !replaces;
      $('#connect-submit').textContent = replaces ? 'Reconnect' : 'Connect';
      dlg.showModal();
      (token ? $('#connect-token-input') : !$('#connect-oauth').hidden ? $('#connect-oauth-button') : $('#connect-cancel')).focus();
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
      } catch (err) { showError('#connect-error', err); }
    });

    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      hideError('#connect-error');
      const input = $('#connect-token-input');
      input.removeAttribute('aria-invalid');
      const token = input.value.trim();
      if (!token) {
        showError('#connect-error', new APIError(400, { error: { code: 'invalid', message: 'Paste the token first.' } }));
        input.setAttribute('aria-invalid', 'true');
        input.focus();
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
        input.value = ''; // the token never stays in the page once used
        const all = await loadConnections();
        const twin = all.find((c) => c.id !== conn.id && c.provider === conn.provider && c.account_id === conn.account_id);
        let said = `${current.replaces ? 'Reconnected' : 'Connected'} ${current.provider.title} account ${conn.account_label}.`;
        if (twin) said += ` This account was already connected (${twin.account_label}): its tools now run on either; disconnect one unless you meant it.`;
        if ((conn.failing_tools || []).length) said += ` It lacks the scopes ${conn.missing_scopes.join(', ')}: ${conn.failing_tools.length} tools will fail (listed under Connected accounts).`;
        opener = document.querySelector(`#connections-table tr[data-connection="${CSS.escape(conn.id)}"] button`) || opener;
        dlg.close();
        flash(said);
      } catch (err) {
        // What was typed stays, so a typo can be fixed; the message says who refused it.
        const e = err instanceof APIError && err.field === 'token' ? new APIError(err.status, { error: { code: err.code, message: err.message } }) : err;
        showError('#connect-error', e);
        if (err.field === 'token' || err.field === '') input.setAttribute('aria-invalid', 'true');
        input.focus();
      } finally {
        $('#connect-submit').disabled = false;
      }
    });

    let providers = [];
    let conns = [];
    let tools = [];
    // firstRun shows the first-run checklist until every step is done: connect an
    // account, build an agent, paste its URL into a client (a key made for it), its
    // first call. The next step is marked and linked.
    async function firstRun() {
      let agents = [];
      try { agents = (await api('GET', '/api/agents')).agents || []; } catch (err) { return; }
      const withKey = agents.find((a) => (a.active_keys || 0) > 0);
      const used = agents.find((a) => a.last_used_at);
      const first = withKey || agents[0];
      const steps = [
        { id: 'connect', done: conns.length > 0, text: 'Connect an account', href: '#catalog-title', how: 'pick a provider in the catalog below' },
        { id: 'agent', done: agents.length > 0, text: 'Build an agent', href: '/agents/new', how: 'pick the tools it may call' },
        { id: 'client', done: !!withKey, text: 'Paste it into an MCP client', href: first ? `/agents/${encodeURIComponent(first.id)}#agent-connect` : '/agents', how: 'make a key on the agent\'s page and add it to Claude, Cursor or VS Code' },
        { id: 'call', done: !!used, text: 'Make a first call', href: first ? `/agents/${encodeURIComponent(first.id)}` : '/agents', how: 'ask your client to use one of the agent\'s tools' },
      ];
      const next = steps.find((st) => !st.done);
      $('#first-run').hidden = !next;
      if (!next) return;
      fill($('#first-run-steps'), steps.map((st) => el('li', { 'data-step': st.id, class: st.done ? 'done' : st === next ? 'next' : '', 'aria-current': st === next ? 'step' : undefined },
        st.done ? el('span', {}, el('span', { class: 'sr', text: 'Done: ' }), st.text)
          : st === next ? el('span', {}, el('strong', { text: 'Next: ' }), el('a', { href: st.href, text: st.text }), ` (${st.how})`) : el('span', { text: st.text }))));
    }

    async function loadConnections() {
      const list = $('#connection-list');
      try {
        const [res, t] = await Promise.all([api('GET', '/api/connections'), callableTools().catch(() => [])]);
        conns = res.connections || [];
        tools = t;
      } catch (err) {
        fill(list, el('p', { class: 'error', text: describe(err) }));
        return conns;
      }
      renderCatalog($('#catalog-search').value);
      renderRemote();
      firstRun();
      const accounts = conns.filter((c) => !c.remote);
      if (!accounts.length) {
        fill(list, el('p', { class: 'muted', text: 'No account connected yet. Pick a provider below and connect it.' }));
        return conns;
      }
      const byName = Object.fromEntries(providers.map((p) => [p.name, p]));
      fill(list, scrollBox('Connected accounts', el('table', { id: 'connections-table' },
        el('thead', {}, el('tr', {}, ['Provider', 'Account', 'Status', 'Scopes', 'Last used', 'Access', 'Actions'].map((h) => el('th', { scope: 'col', text: h })))),
        el('tbody', {}, accounts.map((c) => {
          const p = byName[c.provider] || { name: c.provider, title: c.provider, auth_kinds: ['api_key'], ops: [] };
          const status = c.status === 'needs_reconnect' ? 'needs reconnect' : c.status;
          const twins = accounts.filter((o) => o.id !== c.id && o.provider === c.provider && o.account_id === c.account_id);
          const failing = c.failing_tools || [];
          return el('tr', { 'data-connection': c.id },
            el('td', {}, logo(p), ' ', p.title),
            el('th', { scope: 'row' }, c.account_label,
              ownerLine(c),
              twins.length ? el('div', { class: 'small warn', 'data-duplicate': twins.map((o) => o.id).join(' ') }, `Same account as ${twins.map((o) => o.account_label).join(', ')}: connected twice.`) : null),
            el('td', {}, el('span', { class: `status ${c.status}`, text: status })),
            el('td', { class: 'scopes' }, (c.scopes || []).join(', ') || '—',
              failing.length ? el('div', { class: 'small warn', 'data-scope-gap': c.missing_scopes.join(' ') },
                `Missing ${c.missing_scopes.join(', ')}: ${failing.length} tool${failing.length === 1 ? '' : 's'} will fail (${failing.slice(0, 6).join(', ')}${failing.length > 6 ? ', …' : ''}).`) : null),
            el('td', { text: c.last_used_at ? fmtTime(c.last_used_at) : 'never' }),
            el('td', {}, c.shared ? 'shared' : 'private', rateLine(c)),
            el('td', { class: 'actions' }, el('a', { href: `/overview?connection=${encodeURIComponent(c.id)}`, 'data-usage': c.id, 'aria-label': `Usage of ${p.title} ${c.account_label}` }, 'Usage'), ' ', mayManageConnection(c) ? [
              el('button', { type: 'button', class: 'secondary', 'aria-label': `Reconnect ${p.title} ${c.account_label}`, onclick: (ev) => openConnect(p, c, ev.currentTarget) }, 'Reconnect'),
              el('button', { type: 'button', class: 'danger', 'aria-label': `Disconnect ${p.title} ${c.account_label}`, onclick: () => disconnect(p.title, c) }, 'Disconnect')]
              : el('span', { class: 'small muted', 'data-shared-by-other': '', text: 'Shared with you: its owner or an admin manages it.' })));
        })))));
      return conns;
    }
    // The rate limit a connection's calls are held to: its own (a tenant admin sets it
    // with PATCH /api/connections/{id}) or its provider's.
    function rateLine(c) {
      const rl = c.rate_limit;
      if (!rl) return null;
      return el('div', { class: 'small muted', 'data-rate-limit': rl.source },
        `${rl.per_second} calls/s, burst ${rl.burst}${rl.source === 'connection' ? ' (this connection\'s own limit)' : ''}`);
    }
    async function disconnect(title, c) {
      if (!(await ask({ title: `Disconnect ${title} ${c.account_label}?`, body: 'Its tools disappear from your MCP URLs, and agents bound to it stop working until they run on another account.', ok: 'Disconnect', danger: true }))) return;
      try {
        await api('DELETE', `/api/connections/${encodeURIComponent(c.id)}`);
        flash(`Disconnected ${c.account_label}.`);
        await loadConnections();
        // The row is gone: focus goes to the list's heading, not to the page body.
        const h = $(c.remote ? '#remote-title' : '#connections-title');
        h.tabIndex = -1;
        h.focus();
      } catch (err) { alertPage(err); }
    }

    // The cards come from the provider list alone; a provider's tools are fetched when
    // its list is opened, and every provider's once the person searches, so a first
    // visit does not download every catalog.
    const toolItems = (ops) => ops.map((o) => el('li', {}, el('a', { href: `/tools/${encodeURIComponent(o.tool)}` }, o.title || o.tool), ' ', kindBadge(o.annotations)));
    async function openTools(ev, p) {
      const d = ev.currentTarget;
      if (!d.open || p.ops) return;
      const ul = d.querySelector('ul');
      ul.setAttribute('aria-busy', 'true');
      try {
        await opsOf(p);
        fill(ul, toolItems(p.ops));
      } catch (err) { fill(ul, el('li', { class: 'error', text: describe(err) })); }
    }
    function renderCatalog(filter) {
      const q = (filter || '').toLowerCase();
      // Remote MCP servers are connections already: they are listed, with their tools, under their own heading.
      const cards = providers.filter((p) => !p.remote).map((p) => {
        const named = !q || p.name.includes(q) || (p.title || '').toLowerCase().includes(q);
        const ops = p.ops ? p.ops.filter((o) => named || o.tool.includes(q) || (o.description || '').toLowerCase().includes(q) || (o.title || '').toLowerCase().includes(q)) : null;
        if (ops ? !ops.length : !named) return null;
        const kinds = (p.auth_kinds || []).map((k) => el('span', { class: 'badge', text: k === 'oauth2' ? 'OAuth' : 'token' }));
        const mine = conns.filter((c) => c.provider === p.name);
        const connected = mine.length ? el('span', { class: 'status active', 'data-connected': String(mine.length) }, mine.length === 1 ? `Connected: ${mine[0].account_label}` : `Connected: ${mine.length} accounts`) : null;
        return el('article', { class: 'card', 'data-provider': p.name },
          el('h3', {}, logo(p), ' ', p.title),
          connected,
          el('p', { text: p.description }),
          el('p', {}, kinds, ' ', el('span', { class: 'muted', text: `${p.operations ?? (p.ops || []).length} tools` })),
          el('details', { open: q ? true : undefined, ontoggle: (ev) => openTools(ev, p) }, el('summary', { text: `Tools (${ops ? ops.length : p.operations})` }),
            el('ul', { class: 'tools' }, ops ? toolItems(ops) : [])),
          el('button', { type: 'button', class: mine.length ? 'secondary' : undefined, 'data-connect': p.name, onclick: (ev) => openConnect(p, null, ev.currentTarget) }, mine.length ? `Connect another ${p.title} account` : `Connect ${p.title}`));
      }).filter(Boolean);
      fill($('#catalog'), cards.length ? cards : el('p', { class: 'muted', text: 'No provider or tool matches.' }));
    }
    let allTools = null;
    $('#catalog-search').addEventListener('input', async (ev) => {
      if (!ev.target.value.trim()) { renderCatalog(''); return; }
      try {
        await (allTools ||= catalog());
      } catch (err) {
        allTools = null;
        fill($('#catalog'), el('p', { class: 'error', text: describe(err) }));
        return;
      }
      renderCatalog($('#catalog-search').value); // what is typed by then
    });

    // Remote MCP servers: listed with where they are, how they authenticate and the
    // tools the hub found on them; added with the dialog.
    function renderRemote() {
      const remote = conns.filter((c) => c.remote);
      const list = $('#remote-list');
      if (!remote.length) { fill(list, el('p', { class: 'muted', text: 'No remote MCP server yet.' })); return; }
      fill(list, scrollBox('Remote MCP servers', el('table', { id: 'remote-table' },
        el('thead', {}, el('tr', {}, ['Name', 'URL', 'Transport', 'Auth', 'Status', 'Tools', 'Actions'].map((h) => el('th', { scope: 'col', text: h })))),
        el('tbody', {}, remote.map((c) => {
          const names = tools.filter((t) => (t.connections || []).some((x) => x.id === c.id)).map((t) => t.tool);
          return el('tr', { 'data-connection': c.id },
            el('th', { scope: 'row' }, c.account_label, ownerLine(c)),
            el('td', {}, el('code', { text: c.remote.url })),
            el('td', { text: c.remote.transport }),
            el('td', { text: c.remote.auth }),
            el('td', {}, el('span', { class: `status ${c.status}`, text: c.status === 'needs_reconnect' ? 'needs reconnect' : c.status })),
            el('td', { 'data-tools': names.join(' ') }, names.length ? names.map((n, i) => [i ? ', ' : '', el('a', { href: `/tools/${encodeURIComponent(n)}` }, n)]) : el('span', { class: 'muted', text: 'none found' })),
            el('td', { class: 'actions' }, mayManageConnection(c)
              ? el('button', { type: 'button', class: 'danger', 'aria-label': `Remove the remote MCP server ${c.account_label}`, onclick: () => disconnect('remote MCP server', c) }, 'Remove')
              : el('span', { class: 'small muted', 'data-shared-by-other': '', text: 'Shared with you: its owner or an admin manages it.' })));
        })))));
    }
    const rdlg = $('#remote-dialog');
    const rform = $('#remote-form');
    const showAuth = () => {
      const auth = $('#remote-auth').value;
      for (const n of rform.querySelectorAll('[data-auth]')) n.hidden = !n.dataset.auth.split(' ').includes(auth);
    };
    $('#remote-auth').addEventListener('change', showAuth);
    $('#remote-add').addEventListener('click', (ev) => {
      opener = ev.currentTarget;
      rform.reset();
      showAuth();
      hideError('#remote-error');
      rdlg.showModal();
      $('#remote-name').focus();
    });
    $('#remote-cancel').addEventListener('click', () => rdlg.close());
    rdlg.addEventListener('close', () => {
      for (const id of ['#remote-token', '#remote-client-secret']) $(id).value = '';
      if (opener && opener.isConnected) opener.focus();
    });
    rform.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      hideError('#remote-error');
      for (const n of rform.querySelectorAll('[aria-invalid]')) n.removeAttribute('aria-invalid');
      const v = (id) => $(id).value.trim();
      const body = { name: v('#remote-name'), url: v('#remote-url'), transport: v('#remote-transport'), auth: v('#remote-auth'), shared: $('#remote-shared').checked };
      if (body.auth === 'bearer') body.token = v('#remote-token');
      if (body.auth === 'oauth' || body.auth === 'client_credentials') {
        if (v('#remote-client-id')) body.client_id = v('#remote-client-id');
        if ($('#remote-client-secret').value) body.client_secret = $('#remote-client-secret').value;
        if (v('#remote-scopes')) body.scopes = v('#remote-scopes').split(/\s+/);
      }
      if (body.auth === 'client_credentials') body.token_url = v('#remote-token-url');
      $('#remote-submit').disabled = true;
      try {
        const res = await api('POST', '/api/remote-mcp', body);
        if (res.authorization_url) { location.assign(res.authorization_url); return; }
        await loadConnections();
        opener = document.querySelector(`#remote-table tr[data-connection="${CSS.escape(res.connection.id)}"] button`) || opener;
        rdlg.close();
        flash(`Added the remote MCP server ${res.connection.account_label}: ${(res.tools || []).length} tools found.`);
      } catch (err) {
        showError('#remote-error', err);
        const f = err.field && document.getElementById(`remote-${err.field.replace(/_/g, '-')}`);
        if (f) { f.setAttribute('aria-invalid', 'true'); f.focus(); }
      } finally {
        $('#remote-submit').disabled = false;
      }
    });

    try {
      // The hub's own tools (workflows) are picked for agents, never connected.
      providers = (await providerList()).filter((p) => !p.connectionless);
      renderCatalog('');
    } catch (err) {
      fill($('#catalog'), el('p', { class: 'error', text: describe(err) }));
    }
    const all = await loadConnections();
    // Back from a provider's sign-in: say what it connected, once (a reload does not
    // say it again).
    const back = new URLSearchParams(location.search);
    const made = back.get('connected') && (all || []).find((c) => c.id === back.get('connected'));
    if (made) {
      const p = providers.find((x) => x.name === made.provider);
      const title = p ? p.title : made.provider;
      flash(back.get('renewed') ? `Your ${title} account was already connected, as ${made.account_label}: that connection was renewed with this sign-in, keeping its name and its agents.`
        : `Connected your ${title} account ${made.account_label}. Its tools are ready for your agents.`);
      history.replaceState(null, '', '/#connections');
    }
    if (back.get('added')) {
      const n = Number(back.get('tools')) || 0;
      flash(`Added ${back.get('added')}: ${n} tool${n === 1 ? '' : 's'}. Connect it from the catalog.`);
      history.replaceState(null, '', '/');
    }
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
      fill(list, scrollBox('Agents', el('table', { id: 'agents-table' },
        el('thead', {}, el('tr', {}, ['Name', 'Tools', 'Keys', 'Last used', 'MCP URL', 'Actions'].map((h) => el('th', { scope: 'col', text: h })))),
        el('tbody', {}, agents.map((a, i) => el('tr', { 'data-agent': a.id },
          el('th', { scope: 'row' }, el('a', { href: `/agents/${encodeURIComponent(a.id)}` }, a.name), a.description ? el('div', { class: 'small muted', text: a.description }) : null),
          toolsCell(a),
          el('td', { class: 'num', 'data-keys': String(a.active_keys || 0), text: String(a.active_keys || 0) }),
          el('td', { text: a.last_used_at ? fmtTime(a.last_used_at) : 'never' }),
          el('td', {}, el('code', { id: `agent-url-${i}`, text: agentURL(a) })),
          el('td', { class: 'actions' },
            el('button', { type: 'button', class: 'secondary small', 'data-copy': `agent-url-${i}`, 'aria-label': `Copy the MCP URL of ${a.name}` }, 'Copy URL'),
            mayManageAgent(a) ? el('button', { type: 'button', class: 'danger small', 'aria-label': `Delete the agent ${a.name}`, onclick: () => deleteAgent(a) }, 'Delete') : null)))))));
    } catch (err) {
      fill(list, el('p', { class: 'error', text: agentsMissing(err) ? 'This server has no agents API yet; agents cannot be listed.' : describe(err) }));
    }
  }
  async function deleteAgent(a) {
    if (!(await ask({ title: `Delete the agent ${a.name}?`, body: 'Its keys are revoked and its URL stops answering.', ok: 'Delete', danger: true }))) return;
    try {
      await api('DELETE', `/api/agents/${encodeURIComponent(a.id)}`);
      flash(`Deleted the agent ${a.name}.`);
      await agentsPage();
      $('#new-agent').focus(); // the row and its button are gone: focus stays on the page
    } catch (err) { alertPage(err); }
  }

  // paramsLine names a tool's parameters in one line, required ones marked.
  function paramsLine(schema) {
    const props = Object.keys((schema && schema.properties) || {});
    const req = new Set((schema && schema.required) || []);
    if (!props.length) return 'No parameters.';
    return 'Parameters: ' + props.map((n) => (req.has(n) ? `${n}*` : n)).join(', ') + (req.size ? ' (* required)' : '');
  }

  async function agentPage(id) {
    let providers = [];
    let callable = [];
    let agent = null;
    let workspace = null;
    try {
      // The workspace's MCP settings are what "Workspace default" stands for; a page
      // that cannot read them still builds (the default is then "not offered").
      [providers, callable, agent, workspace] = await Promise.all([catalog(), callableTools(), id ? api('GET', `/api/agents/${encodeURIComponent(id)}`) : null,
        api('GET', '/api/mcp-settings').catch(() => null)]);
    } catch (err) {
      if (id && err.status === 404 && !agentsMissing(err)) {
        notFoundView('Agent not found', `There is no agent ${id} in this workspace: it may have been deleted.`, '/agents', 'See the agents of the workspace');
        return;
      }
      fill($('#tool-picker'), el('p', { class: 'error', text: describe(err) }));
      return;
    }
    const conns = Object.fromEntries(callable.map((t) => [t.tool, t.connections]));
    const bound = Object.fromEntries(((agent && agent.tools) || []).map((t) => [t.tool, t.connection_id]));
    const gone = new Set(((agent && agent.tools) || []).filter((t) => t.connection_missing).map((t) => t.tool));
    if (agent) {
      const missing = missingTools(agent);
      if (missing.length) {
        fill($('#agent-missing'), el('p', {}, el('strong', { text: `${missing.length} tool${missing.length === 1 ? ' is' : 's are'} not served: ` }),
          `the account ${missing.length === 1 ? 'it was' : 'they were'} bound to was disconnected (${missing.map((t) => t.tool).join(', ')}). `,
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
      $('#agent-catalog').value = agent.catalog || '';
    }
    // The hub's own tools an agent may be given (saved workflows, each a tool of its
    // own whose steps name their connections, and the workflows' management) bind no
    // connection. An empty group is left out.
    providers = providers.filter((p) => !p.ambient && (!p.connectionless || p.ops.length));
    for (const p of providers) if (p.connectionless) p.workflow = true;
    // A tool the agent has that no group shows now (its remote server does not answer,
    // its connection is one you cannot see) stays selected, on its connection, in a
    // group of its own: saving never drops it unless it is unticked.
    const shown = new Set(providers.flatMap((p) => p.ops.map((op) => op.tool)));
    const unlisted = ((agent && agent.tools) || []).filter((t) => !shown.has(t.tool));
    if (unlisted.length) {
      providers = [...providers, { name: 'unlisted', title: 'Not in the catalog now', kept: true, ops: unlisted.map((t) => ({ tool: t.tool, title: t.title || t.tool, annotations: { readOnlyHint: t.read_only, destructiveHint: t.destructive },
        description: 'The agent has this tool, but its server or connection does not list it to you now. It stays on its connection unless you untick it.' })) }];
    }
    // keptOn is the connection an unlisted tool is bound to (none for a workflow's).
    // offersAll: the agent lists tools of accounts not connected: its own setting, or,
    // left at "Workspace default", the workspace's (a new agent's too), which the
    // default option names.
    const inherited = (workspace && workspace.catalog) || (agent && !agent.catalog && agent.effective_catalog) || 'connected';
    $('#agent-catalog').options[0].textContent = `Workspace default (${inherited === 'all' ? 'offered' : 'not offered'})`;
    const offersAll = () => $('#agent-catalog').value === 'all' || ($('#agent-catalog').value === '' && inherited === 'all');
    const keptOn = (tool) => (bound[tool] && !gone.has(tool) ? [(conns[tool] || []).find((c) => c.id === bound[tool]) || { id: bound[tool], label: bound[tool] }] : []);
    const rows = [];
    // Groups start folded, each saying how many of its tools are picked, so the page
    // stays short and Save stays near; the selection is summed up above the search.
    const groups = providers.map((p) => {
      const items = p.ops.map((op) => {
        const cs = p.workflow ? [] : p.kept ? keptOn(op.tool) : conns[op.tool] || [];
        // A tool of a provider connected with OAuth and not connected yet may be picked
        // while the agent offers tools of accounts not connected: a call then asks the
        // person to connect, and the tool is bound to that account.
        const later = !p.workflow && !p.kept && !cs.length && (p.auth_kinds || []).includes('oauth2');
        const safe = op.tool.replace(/[^a-zA-Z0-9_-]/g, '');
        const box = el('input', { type: 'checkbox', id: `pick-${safe}`, value: op.tool, disabled: cs.length || p.workflow || p.kept || (later && offersAll()) ? undefined : true, 'aria-describedby': `desc-${safe}` });
        // A tool whose connection is gone stays ticked only if another account can run it.
        box.checked = op.tool in bound && (!gone.has(op.tool) || cs.length > 0);
        // One account: it is named; several: the person picks one.
        const sel = cs.length > 1 ? el('select', { id: `bind-${safe}`, 'aria-label': `Connection for ${op.tool}` }, cs.map((c) => el('option', { value: c.id, text: connLabel(c) }))) : null;
        if (sel && bound[op.tool]) sel.value = bound[op.tool];
        const bind = cs.length ? el('div', { class: 'bind', hidden: !box.checked }, el('span', { class: 'small muted', text: 'Runs on' }), sel || el('span', { class: 'small', text: connLabel(cs[0]) })) : null;
        const row = el('div', { class: 'pick', 'data-tool': op.tool },
          el('div', { class: 'pickhead' }, box, el('label', { for: `pick-${safe}` }, el('strong', { text: op.title || op.tool }), ' ', el('code', { text: op.tool })), p.workflow ? '' : kindBadge(op.annotations),
            p.name === 'workflows' ? el('a', { href: `/workflows/${encodeURIComponent(op.name)}`, class: 'small', target: '_blank', rel: 'noopener' }, 'Open', el('span', { class: 'sr', text: ` workflow ${op.name} (opens in a new tab)` }))
              : el('a', { href: `/tools/${encodeURIComponent(op.tool)}`, class: 'small', target: '_blank', rel: 'noopener' }, 'Try it', el('span', { class: 'sr', text: ` ${op.tool} (opens in a new tab)` }))),
          el('p', { id: `desc-${safe}`, class: 'small desc', text: op.description }),
          el('p', { class: 'small muted params', text: p.name === 'workflows' ? 'Its steps run on the connections they name.' : p.kept ? '' : paramsLine(op.input_schema) }),
          gone.has(op.tool) ? el('p', { class: 'small error', 'data-missing': op.tool, text: 'Its account was disconnected: it is not served until it runs on another account.' }) : '',
          bind || (p.workflow || p.kept ? '' : later
            ? el('p', { class: 'small muted' }, `No ${p.title} account is connected: with "Tools of accounts not connected" offered, a call asks the person to connect one. Or connect it first: `, el('a', { href: '/#connections' }, 'Integrations'), '.')
            : el('p', { class: 'small muted' }, `Connect a ${p.title} account first: `, el('a', { href: '/#connections' }, 'Integrations'), '.')));
        rows.push({ op, box, bind, later, conn: () => (sel ? sel.value : cs.length ? cs[0].id : ''), label: () => (sel ? sel.selectedOptions[0].textContent : cs.length ? connLabel(cs[0]) : ''), row, text: `${op.tool} ${op.title} ${op.description}`.toLowerCase() });
        return row;
      });
      const count = el('span', { class: 'muted small' });
      // Select all: every tool of the group that can be picked (51 clicks for GitHub
      // otherwise); it shows some-but-not-all as mixed.
      const all = el('input', { type: 'checkbox', id: `all-${p.name.replace(/[^a-zA-Z0-9_-]/g, '')}`, class: 'selectall' });
      const g = el('details', { class: 'group', 'data-provider': p.name },
        el('summary', {}, logo(p), ' ', el('strong', { text: p.title }), ' ', count),
        el('label', { class: 'check selectall' }, all, `Select all ${p.title} tools`),
        el('div', { class: 'picklist' }, items));
      all.addEventListener('change', () => {
        for (const b of g.querySelectorAll('.pick input[type=checkbox]:not(:disabled)')) b.checked = all.checked;
      });
      g.all = all;
      g.count = count;
      g.provider = p;
      return g;
    });
    fill($('#tool-picker'), groups);

    const chosen = () => rows.filter((r) => r.box.checked);
    const draft = () => ({
      name: $('#agent-name').value.trim(),
      description: $('#agent-description').value.trim(),
      instructions: $('#agent-instructions').value,
      confirm: $('#agent-confirm').value,
      approval: $('#agent-approval').value,
      tool_mode: $('#agent-toolmode').value,
      run_tools: $('#agent-runtools').value,
      catalog: $('#agent-catalog').value,
      tools: chosen().map((r) => ({ tool: r.op.tool, connection_id: r.conn() })),
    });
    // Unsaved changes: the draft differs from what was loaded or saved last. Leaving
    // the page then asks first.
    let saved = JSON.stringify(draft());
    const dirty = () => JSON.stringify(draft()) !== saved;
    window.addEventListener('beforeunload', (ev) => {
      if (!dirty()) return;
      ev.preventDefault();
      ev.returnValue = '';
    });

    // The estimate counts what the URL will serve (the server's own tool list for this
    // selection and mode, management tools included), not only the picked tools.
    let previewSeq = 0;
    let previewTimer = 0;
    async function preview() {
      const seq = ++previewSeq;
      const d = draft();
      try {
        const res = await api('POST', '/api/agents/preview', { tool_mode: d.tool_mode, confirm: d.confirm, run_tools: d.run_tools, tools: d.tools });
        if (seq !== previewSeq) return; // a later change asked again
        const picked = new Set(d.tools.map((t) => t.tool));
        const extra = (res.tools || []).filter((t) => !picked.has(t.name)).map((t) => t.name);
        const n = d.tools.length;
        // One short line in a box of fixed height: the page must not shift under the pointer.
        fill($('#token-estimate'), `${n} selected · its URL serves ${res.tools.length} tool${res.tools.length === 1 ? '' : 's'} · about ${res.tokens.toLocaleString()} tokens per request`,
          extra.length ? el('span', { class: 'muted' }, ` (${extra.length} from Switchboard`, res.tool_mode === 'search' ? '; tool search mode' : '', ')') : '',
          el('span', { class: 'sr', text: extra.length ? `. Besides the picked tools it serves ${extra.join(', ')}.` : '' }));
        $('#token-estimate').dataset.served = String(res.tools.length);
        $('#token-estimate').dataset.tokens = String(res.tokens);
      } catch (err) {
        if (seq === previewSeq) $('#token-estimate').textContent = `${d.tools.length} tools selected (the estimate failed: ${describe(err)})`;
      }
    }
    function update() {
      for (const r of rows) if (r.later) r.box.disabled = !offersAll();
      for (const g of groups) {
        const n = g.querySelectorAll('.pick input[type=checkbox]:checked').length;
        const pickable = g.querySelectorAll('.pick input[type=checkbox]:not(:disabled)');
        const on = [...pickable].filter((b) => b.checked).length;
        g.all.disabled = pickable.length === 0;
        g.all.checked = pickable.length > 0 && on === pickable.length;
        g.all.indeterminate = on > 0 && on < pickable.length;
        g.count.textContent = `${n} of ${g.provider.ops.length} selected${g.provider.workflow || g.provider.kept || (conns[g.provider.ops[0] && g.provider.ops[0].tool] || []).length ? '' : ' · not connected'}`;
      }
      for (const r of rows) if (r.bind) r.bind.hidden = !r.box.checked;
      const list = chosen();
      fill($('#selection'), list.length
        ? el('p', { class: 'small' }, el('strong', { text: `Selected (${list.length}): ` }), list.map((r, i) => [i ? ', ' : '', el('code', { text: r.op.tool }), r.label() ? ` on ${r.label()}` : '']))
        : el('p', { class: 'small muted', text: 'No tools selected yet: open a provider below, or search.' }));
      $('#agent-dirty').hidden = !dirty();
      if (dirty()) $('#agent-saved').hidden = true;
      clearTimeout(previewTimer);
      previewTimer = setTimeout(preview, 150);
    }
    $('#agent-form').addEventListener('change', update);
    $('#agent-form').addEventListener('input', () => { $('#agent-dirty').hidden = !dirty(); if (dirty()) $('#agent-saved').hidden = true; });
    update();
    $('#tool-search').addEventListener('input', (ev) => {
      const q = ev.target.value.toLowerCase().trim();
      for (const r of rows) r.row.hidden = !!q && !r.text.includes(q);
      // A search opens the groups it finds tools in; clearing it folds those again,
      // leaving open only the groups opened by hand.
      for (const g of groups) {
        g.hidden = ![...g.querySelectorAll('.pick')].some((n) => !n.hidden);
        if (q && !g.hidden && !g.open) { g.open = true; g.openedBySearch = true; }
        if (!q && g.openedBySearch) { g.open = false; g.openedBySearch = false; }
      }
    });
    // Enter in the search field searches; it does not submit the agent.
    $('#tool-search').addEventListener('keydown', (ev) => { if (ev.key === 'Enter') ev.preventDefault(); });

    if (agent) showConnect(agent, () => { saved = JSON.stringify(draft()); });
    if (agent && mayManageAgent(agent)) {
      // Its calls per day, drawn by the server (Overview has every figure): its creator
      // and the admins see an agent's usage.
      $('#agent-usage-link').href = `/overview?range=7d&agent=${encodeURIComponent(agent.id)}`;
      $('#agent-usage-chart').src = `/api/usage/chart.svg?range=7d&agent_id=${encodeURIComponent(agent.id)}`;
      $('#agent-usage').hidden = false;
    }
    if (agent && !mayManageAgent(agent)) {
      // Someone else's agent: shown as it is, without the controls only its creator or
      // an admin may use.
      for (const c of $('#agent-form').elements) if (c.id !== 'tool-search') c.disabled = true;
      for (const id of ['#agent-save', '#agent-manage', '#agent-new-key', '#agent-keys-box']) $(id).hidden = true;
      fill($('#agent-readonly'), el('p', {}, 'Only the agent\'s creator or an admin of the workspace changes it: you see it as it is, and may copy its URL.'));
      $('#agent-readonly').hidden = false;
    }
    $('#agent-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      hideError('#agent-error');
      const body = draft();
      if (agent) body.version = agent.version;
      if (!body.name) {
        showError('#agent-error', new APIError(400, { error: { code: 'invalid', field: 'name', message: 'is required: name the agent' } }));
        $('#agent-name').setAttribute('aria-invalid', 'true');
        $('#agent-name').focus();
        return;
      }
      $('#agent-save').disabled = true;
      $('#agent-saved').hidden = true;
      const created = !agent;
      try {
        agent = agent ? await api('PUT', `/api/agents/${encodeURIComponent(agent.id)}`, body) : await api('POST', '/api/agents', body);
        for (const n of document.querySelectorAll('#agent-form [aria-invalid]')) n.removeAttribute('aria-invalid');
        saved = JSON.stringify(draft());
        $('#agent-dirty').hidden = true;
        history.replaceState(null, '', `/agents/${encodeURIComponent(agent.id)}`);
        $('#agent-title').textContent = `Agent: ${agent.name}`;
        flash(`Saved agent ${agent.name}.`);
        $('#agent-saved').textContent = `Saved at ${new Date().toLocaleTimeString()}.`;
        $('#agent-saved').hidden = false;
        showConnect(agent, () => { saved = JSON.stringify(draft()); });
        if (created) {
          // A new agent's next step is its URL: the page goes there and focuses it,
          // with the client configurations and install links under it.
          $('#agent-connect').scrollIntoView({ block: 'start' });
          $('#agent-mcp-url').focus({ preventScroll: true });
        }
      } catch (err) {
        showError('#agent-error', agentsMissing(err) ? new APIError(404, { error: { code: 'not_found', message: 'This server has no agents API yet; the agent cannot be saved.' } }) : err);
        const f = err.field && document.getElementById(`agent-${err.field}`);
        if (f) { f.setAttribute('aria-invalid', 'true'); f.focus(); }
      } finally {
        $('#agent-save').disabled = false;
        // Focus stays on Save (it was disabled while saving), never on the page body.
        if (document.activeElement === document.body) $('#agent-save').focus();
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
        !mayManageAgent(agent) ? null : el('button', { type: 'button', class: 'danger small', 'aria-label': `Revoke agent key ${k.name}`, onclick: async () => {
          if (!(await ask({ title: `Revoke the key ${k.name}?`, body: 'Clients using it are refused at once.', ok: 'Revoke', danger: true }))) return;
          try { await api('DELETE', `/api/keys/${encodeURIComponent(k.id)}`); flash(`Revoked key ${k.name}.`); await loadAgentKeys(agent); $('#agent-new-key').focus(); } catch (err) { alertPage(err); }
        } }, 'Revoke'))))
        : el('p', { class: 'muted', text: 'No active key: create one above.' }));
    } catch (err) { fill(box, el('p', { class: 'error', text: describe(err) })); }
  }

  function showConnect(agent, leaving) {
    $('#agent-connect').hidden = false;
    $('#agent-mcp-url').value = agentURL(agent);
    renderSnippets($('#snippets'), agent.name, agentURL(agent), '');
    // Its keys are listed and made by its creator or an admin only.
    $('#agent-keys-box').hidden = !mayManageAgent(agent);
    if (mayManageAgent(agent)) loadAgentKeys(agent);
    if (mayManageAgent(agent)) agentConsole(agent); // its creator or an admin only
    $('#agent-delete').onclick = async () => {
      if (!(await ask({ title: `Delete the agent ${agent.name}?`, body: 'Its keys are revoked and its URL stops answering.', ok: 'Delete', danger: true }))) return;
      try {
        await api('DELETE', `/api/agents/${encodeURIComponent(agent.id)}`);
        leaving(); // nothing left to save
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
        renderSnippets($('#snippets'), agent.name, agentURL(agent), key, (agent.tools || [])[0] && agent.tools[0].tool);
        flash('API key created: copy it now, it is shown only once.');
        loadAgentKeys(agent);
      } catch (err) { alertPage(err); }
    };
  }

  // renderSnippets fills box with the client configurations for an MCP URL: Claude
  // Desktop (through mcp-remote), Claude Code, Cursor, VS Code (which prompts for the
  // key instead of keeping it in .vscode/mcp.json) and curl (lists the tools, calls one).
  function renderSnippets(box, title, url, key, sampleTool) {
    const k = key || 'YOUR_API_KEY';
    const name = (title || 'switchboard').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'switchboard';
    const json = (v) => JSON.stringify(v, null, 2);
    const q = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;
    const rpc = (body) => `curl -sS -X POST "$URL" -H "Authorization: Bearer $KEY" -H "Mcp-Session-Id: $SESSION" \\\n  -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\\n  -d ${q(JSON.stringify(body))}`;
    const curl = [
      `URL=${q(url)}`,
      `KEY=${q(k)}`,
      '# Start a session: the answer\'s Mcp-Session-Id header names it.',
      `SESSION=$(curl -sS -D - -o /dev/null -X POST "$URL" -H "Authorization: Bearer $KEY" \\\n  -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\\n  -d ${q(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1.0' } } }))} \\\n  | tr -d '\\r' | awk -F': ' 'tolower($1)=="mcp-session-id" {print $2}')`,
      rpc({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      '# List the tools.',
      rpc({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      `# Call one (put its arguments, as tools/list describes them, in "arguments").`,
      rpc({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: sampleTool || 'TOOL_NAME', arguments: {} } }),
    ].join('\n');
    const snippets = [
      ['claude', 'Claude Desktop (claude_desktop_config.json)', json({ mcpServers: { [name]: { command: 'npx', args: ['-y', 'mcp-remote', url, '--header', 'Authorization:${SWITCHBOARD_AUTH}'], env: { SWITCHBOARD_AUTH: `Bearer ${k}` } } } })],
      ['claudecode', 'Claude Code', `claude mcp add --transport http ${name} ${q(url)} \\\n  --header ${q(`Authorization: Bearer ${k}`)}`],
      ['cursor', 'Cursor (~/.cursor/mcp.json)', json({ mcpServers: { [name]: { url, headers: { Authorization: `Bearer ${k}` } } } })],
      ['vscode', 'VS Code (.vscode/mcp.json: it asks for the key, which stays out of the file)', json({
        inputs: [{ type: 'promptString', id: `${name}-key`, description: `Switchboard API key for ${title || name}`, password: true }],
        servers: { [name]: { type: 'http', url, headers: { Authorization: `Bearer \${input:${name}-key}` } } } })],
      ['curl', 'curl (lists the tools, then calls one)', curl],
    ];
    // One-click installs, by the schemes the clients document: Cursor's deeplink takes
    // the server's mcp.json entry in base64; VS Code's takes it as URL-encoded JSON with
    // a name, and asks for the key (an input) rather than carrying it in the link.
    const b64 = (s) => btoa(String.fromCharCode(...new TextEncoder().encode(s)));
    const cursorLink = `cursor://anysphere.cursor-deeplink/mcp/install?name=${encodeURIComponent(name)}&config=${encodeURIComponent(b64(JSON.stringify({ url, headers: { Authorization: `Bearer ${k}` } })))}`;
    const vscodeLink = `vscode:mcp/install?${encodeURIComponent(JSON.stringify({ name, type: 'http', url, headers: { Authorization: `Bearer \${input:${name}-key}` },
      inputs: [{ type: 'promptString', id: `${name}-key`, description: `Switchboard API key for ${title || name}`, password: true }] }))}`;
    const prefix = box.id;
    // One client at a time: each configuration folds under its client's name, the one
    // opened last stays open (the first, until another is).
    const open = box.dataset.open || 'claude';
    fill(box, el('h3', { text: 'Client configuration' }),
      el('p', { class: 'installs' }, el('a', { class: 'button', id: `${box.id}-install-cursor`, href: cursorLink }, 'Add to Cursor'),
        el('a', { class: 'button', id: `${box.id}-install-vscode`, href: vscodeLink }, 'Add to VS Code')),
      key ? null : el('p', { class: 'muted', text: 'Create an API key to have it filled in; until then the snippets and the Cursor link say YOUR_API_KEY.' }),
      snippets.map(([id, head, text]) => el('details', { class: 'snippet', open: id === open, ontoggle: (ev) => { if (ev.currentTarget.open) box.dataset.open = id; } },
        el('summary', { id: `${prefix}-${id}-title`, text: head }),
        el('div', { class: 'snippethead' }, el('button', { type: 'button', 'data-copy': `${prefix}-${id}`, 'aria-label': `Copy the ${head} configuration` }, 'Copy')),
        el('pre', { tabindex: '0', role: 'region', 'aria-labelledby': `${prefix}-${id}-title` }, el('code', { id: `${prefix}-${id}`, text })))));
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
        // Removing an item moves focus to the next item's Remove, or else to Add: never
        // to the page body.
        const rm = el('button', { type: 'button', class: 'secondary small', 'aria-label': `Remove ${name} item`, onclick: () => {
          const at = items.indexOf(entry);
          items.splice(at, 1);
          entry.node.remove();
          const next = items[Math.min(at, items.length - 1)];
          (next ? next.node.querySelector(':scope > button') : fs.querySelector(':scope > button')).focus();
        } }, 'Remove');
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
      [providers, callable] = await Promise.all([catalog((p) => name.startsWith(`${p.name}_`)), callableTools()]);
      // The hub's own tools (saved workflows, run tools) are not named after a provider.
      if (!findTool(providers, name)) providers = await catalog((p) => p.connectionless);
    } catch (err) {
      fill($('#tool-info'), el('p', { class: 'error', text: describe(err) }));
      return;
    }
    const found = findTool(providers, name);
    if (!found) {
      notFoundView('Tool not found', `There is no tool named ${name}: it may be mistyped, or its provider or remote MCP server was removed.`, '/', 'Pick one from the catalog under Integrations');
      return;
    }
    const { provider: p, op } = found;
    document.title = `${op.title || op.tool} · Switchboard`;
    $('#tool-title').textContent = op.title || op.tool;
    fill($('#tool-info'),
      el('p', {}, logo(p), ' ', p.title, ' · ', el('code', { text: op.tool }), ' ', kindBadge(op.annotations)),
      el('p', { text: op.description }),
      op.scopes && op.scopes.length ? el('p', { class: 'small muted', text: `Scopes: ${op.scopes.join(', ')}` }) : null,
      /^https?:\/\//i.test(op.docs_url || '') ? el('p', { class: 'small' }, el('a', { href: op.docs_url, rel: 'noreferrer' }, 'Upstream API documentation')) : null,
      el('p', { class: 'small muted', text: `About ${tokens(op).toLocaleString()} tokens in a model's context.` }));
    const binding = callable.find((t) => t.tool === name);
    const cs = (binding && binding.connections) || [];
    if (p.connectionless) {
      fill($('#try-connection'), el('p', { class: 'small muted', text: 'It runs as you, on no connection of its own.' }));
    } else if (!cs.length) {
      fill($('#try-connection'), el('p', { class: 'error' }, `Connect a ${p.title} account first, under `, el('a', { href: '/#connections' }, 'Integrations'), ', then come back.'));
    } else {
      fill($('#try-connection'), el('label', { for: 'try-conn', text: 'Connection' }),
        el('select', { id: 'try-conn' }, cs.map((c) => el('option', { value: c.id, text: connLabel(c) }))));
    }
    const form = objectFields(op.input_schema || {}, '');
    fill($('#try-fields'), form.nodes.length ? form.nodes : el('p', { class: 'muted', text: 'This tool takes no arguments.' }));
    // Raw JSON beside the form: switching carries what was typed across.
    const jsonMode = () => $('#try-mode-json').checked;
    $('#try-mode-json').addEventListener('change', () => {
      let args = {};
      try { args = form.read(); } catch (err) { args = {}; }
      $('#try-json').value = JSON.stringify(args, null, 2);
      $('#try-fields').hidden = true;
      $('#try-json-box').hidden = false;
      $('#try-json').focus();
    });
    $('#try-mode-form').addEventListener('change', () => { $('#try-fields').hidden = false; $('#try-json-box').hidden = true; });
    const kind = kindOf(op.annotations);
    let aborter = null;
    let runID = '';
    $('#try-cancel').addEventListener('click', async () => {
      if (aborter) aborter.abort();
      if (runID) { try { await api('POST', `/api/runs/${encodeURIComponent(runID)}/cancel`); } catch (err) { /* it may have ended */ } }
    });
    const busy = (on) => {
      $('#try-run').disabled = on;
      $('#try-cancel').hidden = !on;
      $('#try-busy').textContent = on ? `Running ${name}…` : '';
      $('#try-form').setAttribute('aria-busy', on ? 'true' : 'false');
      if (on) $('#try-cancel').focus();
      else if (document.activeElement === document.body || document.activeElement === $('#try-cancel')) $('#try-run').focus();
    };
    $('#try-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      hideError('#try-error');
      for (const n of document.querySelectorAll('[aria-invalid]')) n.removeAttribute('aria-invalid');
      let args;
      if (jsonMode()) {
        try {
          args = JSON.parse($('#try-json').value || '{}');
          if (!args || typeof args !== 'object' || Array.isArray(args)) throw new Error('not an object');
        } catch (err) {
          showError('#try-error', new APIError(400, { error: { code: 'invalid', message: `The arguments are not a JSON object (${err.message}).` } }));
          $('#try-json').setAttribute('aria-invalid', 'true');
          $('#try-json').focus();
          return;
        }
      } else {
        try {
          args = form.read();
        } catch (err) {
          markField(err.field, `${err.field}: ${err.message}`);
          return;
        }
        // A required argument left out is named before anything is asked or sent.
        const left = ((op.input_schema && op.input_schema.required) || []).find((n) => args[n] === undefined);
        if (left) {
          markField(left, `${left}: is required; fill it in`);
          return;
        }
      }
      const body = { arguments: args };
      if ($('#try-conn')) body.connection_id = $('#try-conn').value;
      // A call that would be refused (an argument the tool takes only with another,
      // nothing to change) is named before anyone is asked to confirm it; the check
      // also says whether the confirm policy wants a person's confirmation.
      let checked;
      try {
        checked = await api('POST', `/api/tools/${encodeURIComponent(name)}/call`, { ...body, check: true });
      } catch (err) {
        if (err.field && err.field !== 'arguments') markField(err.field, describe(err));
        else showError('#try-error', err);
        return;
      }
      // A tool that changes something asks once, saying what and on which account; the
      // answer is the person's confirmation, so a call the policy holds runs on it
      // without a second step.
      if (kind !== 'reads' || checked.needs_confirmation) {
        const account = checked.account || ($('#try-conn') ? $('#try-conn').selectedOptions[0].textContent : 'your account');
        const yes = await ask({ title: `Run ${name}?`, ok: `Run ${name}`, danger: kind === 'destroys',
          body: `${kind === 'destroys' ? 'This tool deletes or overwrites' : kind === 'reads' ? 'This tool reads' : 'This tool changes'} data on ${account}, with these arguments.`,
          details: { label: 'Arguments', text: JSON.stringify(args, null, 2) } });
        if (!yes) return;
      }
      $('#try-result').hidden = true;
      busy(true);
      aborter = new AbortController();
      const started = performance.now();
      try {
        if ($('#try-async').checked || checked.needs_confirmation) {
          await runAsync(name, body, (id) => { runID = id; }, checked.needs_confirmation);
          return;
        }
        const res = await api('POST', `/api/tools/${encodeURIComponent(name)}/call`, body, aborter.signal);
        showResult(res.result, performance.now() - started);
        flash('The tool ran. Its call is in Activity.');
      } catch (err) {
        if (err.code === 'aborted') {
          showError('#try-error', new APIError(0, { error: { code: 'canceled', message: 'Canceled: the page stopped waiting. If the call reached the provider it may still have taken effect; Activity shows how it ended.' } }));
        } else if (err.field && err.field !== 'arguments') markField(err.field, describe(err));
        else showError('#try-error', err);
      } finally {
        aborter = null;
        runID = '';
        busy(false);
      }
    });
  }
  // showResult shows a result with how long it took and its links made clickable.
  function showResult(result, ms) {
    const text = JSON.stringify(result, null, 2);
    $('#try-output').textContent = text;
    $('#try-duration').textContent = ms === undefined ? '' : `Took ${Math.round(ms).toLocaleString()} ms.`;
    const links = [...new Set(text.match(/https:\/\/[^\s"'<>\\]+/g) || [])].slice(0, 20);
    fill($('#try-links'), links.length ? [el('h4', { text: 'Links in the result' }), el('ul', {}, links.map((u) => el('li', {}, el('a', { href: u, target: '_blank', rel: 'noopener noreferrer' }, u))))] : []);
    $('#try-result').hidden = false;
  }
  // runAsync starts the call as an async run and follows its state until it ends;
  // started learns the run's id, so Cancel can cancel it.
  // confirmed says the person confirmed the call in this page: a run that waits for
  // that confirmation is answered on its approval page at once.
  async function runAsync(name, body, started, confirmed) {
    const t0 = performance.now();
    let run = await api('POST', '/api/runs', { tool: name, ...body });
    const id = run.run_id || run.id;
    started(id);
    if (confirmed && run.state === 'input_required') {
      const form = new URLSearchParams({ csrf: CSRF, action: 'accept' });
      const res = await fetch(`/approvals/${encodeURIComponent(id)}`, { method: 'POST', credentials: 'same-origin', body: form });
      if (!res.ok) throw new APIError(res.status, { error: { code: 'approval', message: `the confirmation could not be given (the approval page answered ${res.status}); answer it on /approvals/${id}` } });
      run = await api('GET', `/api/runs/${encodeURIComponent(id)}`);
    }
    const show = () => {
      const shown = { run_id: id, state: run.state };
      if (run.output !== undefined) shown.output = run.output;
      if (run.error) shown.error = run.error;
      if (run.approval_url) shown.approval_url = run.approval_url;
      showResult(shown, ['completed', 'failed', 'canceled'].includes(run.state) ? performance.now() - t0 : undefined);
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

  // markField shows text in the error line (Try it's unless given) and marks and
  // focuses the field at path, looked up under root (the whole page unless given).
  function markField(path, text, errLine, root) {
    const e = errLine || $('#try-error');
    const within = root || document;
    e.textContent = text;
    e.hidden = false;
    const top = String(path || '').split(/[.[]/)[0];
    const wrap = within.querySelector(`.field[data-path="${CSS.escape(path)}"]`) || within.querySelector(`.field[data-path="${CSS.escape(top)}"]`);
    const input = wrap && wrap.querySelector('input,select,textarea,button');
    if (input) { input.setAttribute('aria-invalid', 'true'); input.focus(); }
  }

  // ---- Agent console ------------------------------------------------------------------
  // The console speaks MCP's stateless version to the agent's URL through
  // POST /api/agents/{id}/mcp (the person's session stands in for the agent's key):
  // tools/list as the URL lists it, and tools/call answered as a client that shows
  // forms answers it. A confirmation comes back as the form the hub sends (its
  // inputRequests), shown in the page; the call is sent again with the person's answer.
  const MCP_VERSION = '2026-07-28';
  const CONSOLE_META = {
    'io.modelcontextprotocol/protocolVersion': MCP_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'switchboard-console', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
  };
  let mcpSeq = 0;
  async function mcpRequest(agent, method, params) {
    const id = ++mcpSeq;
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'X-CSRF-Token': CSRF,
      'Mcp-Protocol-Version': MCP_VERSION, 'Mcp-Method': method };
    if (params && params.name) headers['Mcp-Name'] = params.name;
    let res;
    try {
      res = await fetch(`/api/agents/${encodeURIComponent(agent.id)}/mcp`, { method: 'POST', credentials: 'same-origin', headers,
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: CONSOLE_META } }) });
    } catch (err) {
      throw new APIError(0, { error: { code: 'network', message: 'the server did not answer; check that it is running and your network, then try again' } });
    }
    if (res.status === 401) location.assign('/signin?next=' + encodeURIComponent(location.pathname + location.search));
    const text = await res.text();
    // The answer is JSON, or an event stream whose data lines are messages: the one
    // with the request's id is the answer (progress and log messages come before it).
    const msgs = [];
    for (const chunk of [text, ...text.split('\n')]) {
      const line = chunk.trim().replace(/^data:\s*/, '');
      if (!line.startsWith('{')) continue;
      try { msgs.push(JSON.parse(line)); } catch (err) { /* not a whole message */ }
    }
    const answer = msgs.find((m) => m && m.id === id && (m.result || m.error));
    if (answer && answer.error) throw new APIError(res.status, { error: { code: 'mcp', message: `the agent's URL refused ${method}: ${answer.error.message} (JSON-RPC error ${answer.error.code})` } });
    if (answer) return answer.result;
    throw new APIError(res.status, msgs.find((m) => m && m.error && m.error.code && typeof m.error.code === 'string') || null);
  }

  async function agentConsole(agent) {
    const box = $('#console-tools');
    $('#agent-console').hidden = false;
    const load = async () => {
      hideError('#console-error');
      box.setAttribute('aria-busy', 'true');
      $('#console-count').textContent = 'Loading the tool list…';
      const tools = [];
      try {
        let cursor;
        do {
          const page = await mcpRequest(agent, 'tools/list', cursor ? { cursor } : {});
          tools.push(...(page.tools || []));
          cursor = page.nextCursor;
        } while (cursor);
      } catch (err) {
        $('#console-count').textContent = '';
        box.removeAttribute('aria-busy');
        showError('#console-error', err);
        return;
      }
      $('#console-count').textContent = `The agent's URL lists ${tools.length} tool${tools.length === 1 ? '' : 's'}.`;
      fill(box, tools.length ? el('ul', { class: 'console-list' }, tools.map((t) => el('li', {}, consoleTool(agent, t))))
        : el('p', { class: 'muted', text: 'Its URL lists no tool: pick tools above and save.' }));
    };
    $('#console-reload').onclick = load;
    await load();
  }

  // consoleTool is one listed tool: its definition as listed, a form from its input
  // schema, and the answers of its calls.
  function consoleTool(agent, tool) {
    const slug = tool.name.replace(/[^a-zA-Z0-9_-]/g, '-');
    const ann = tool.annotations || {};
    const form = objectFields(tool.inputSchema || {}, '');
    const err = el('p', { class: 'error', role: 'alert', hidden: true });
    const out = el('div', { class: 'console-out', 'aria-live': 'polite' });
    const run = el('button', { type: 'submit', id: `console-call-${slug}` }, `Call ${tool.name}`);
    const f = el('form', { class: 'stack wide', novalidate: true, 'data-tool': tool.name },
      form.nodes.length ? form.nodes : el('p', { class: 'muted', text: 'This tool takes no arguments.' }), err, el('div', { class: 'row' }, run));
    const send = async (args, answer) => {
      const params = { name: tool.name, arguments: args };
      if (answer) { params.inputResponses = answer.responses; params.requestState = answer.state; }
      run.disabled = true;
      f.setAttribute('aria-busy', 'true');
      try {
        const started = performance.now();
        const res = await mcpRequest(agent, 'tools/call', params);
        if (res.resultType === 'input_required') { askInPage(res, args); return; }
        showCall(res, performance.now() - started);
      } catch (e) {
        showError(err, e);
      } finally {
        run.disabled = false;
        f.setAttribute('aria-busy', 'false');
      }
    };
    // askInPage shows the hub's form (each input request's message and schema) with
    // Accept, Decline and Cancel, and sends the call again with the answers.
    const askInPage = (res, args) => {
      const reqs = Object.entries(res.inputRequests || {}).filter(([, r]) => r && (r.elicitation || r.params));
      const panels = reqs.map(([key, r]) => {
        const p = r.elicitation || r.params || {};
        const schema = p.requestedSchema || {};
        const req = new Set(schema.required || []);
        const fields = Object.entries(schema.properties || {}).map(([n, s]) => {
          if (typeOf(s) === 'boolean') {
            const id = `console-${slug}-${key}-${n}`.replace(/[^a-zA-Z0-9_-]/g, '-');
            const box = el('input', { type: 'checkbox', id, name: n, checked: s.default !== false });
            return [n, { node: el('div', { class: 'field' }, el('label', { class: 'check', for: id }, box, ` ${s.title || n}`), s.description ? el('p', { class: 'small muted', text: s.description }) : null), read: () => box.checked }];
          }
          return [n, field(s, s.title || n, req.has(n), `${key}.${n}`)];
        });
        return { key, message: p.message || '', fields };
      });
      const reply = (action) => {
        const responses = {};
        for (const p of panels) {
          const a = { action };
          if (action === 'accept') {
            a.content = {};
            for (const [n, fl] of p.fields) { const v = fl.read(); if (v !== undefined) a.content[n] = v; }
          }
          responses[p.key] = a;
        }
        panel.remove();
        send(args, { responses, state: res.requestState });
      };
      const titleId = `console-ask-${slug}-${++fieldSeq}`;
      const panel = el('div', { class: 'console-ask', role: 'group', 'aria-labelledby': titleId },
        el('h4', { id: titleId, text: `The hub asks before running ${tool.name}` }),
        panels.map((p) => [el('p', { class: 'console-message', text: p.message }), p.fields.map(([, fl]) => fl.node)]),
        el('div', { class: 'row' },
          el('button', { type: 'button', class: ann.destructiveHint ? 'danger' : '', 'data-action': 'accept', onclick: () => reply('accept') }, 'Accept'),
          el('button', { type: 'button', class: 'secondary', 'data-action': 'decline', onclick: () => reply('decline') }, 'Decline'),
          el('button', { type: 'button', class: 'secondary', 'data-action': 'cancel', onclick: () => reply('cancel') }, 'Dismiss')));
      fill(out, panel);
      const first = panel.querySelector('input,select,textarea,button');
      if (first) first.focus();
    };
    // showCall shows a tools/call result as a client gets it: isError, each content
    // item, structuredContent.
    const showCall = (res, ms) => {
      const approval = res._meta && res._meta['switchboard/approval_url'];
      const items = (res.content || []).map((c) => (c.type === 'text' ? el('pre', { tabindex: '0', 'aria-label': 'Text content' }, el('code', { text: c.text }))
        : el('pre', { tabindex: '0', 'aria-label': `${c.type} content` }, el('code', { text: JSON.stringify(c, null, 2) }))));
      fill(out, el('div', { class: 'console-result', 'data-is-error': res.isError ? 'true' : 'false' },
        el('p', {}, res.isError ? el('span', { class: 'outcome bad', text: 'isError: true' }) : el('span', { class: 'outcome ok', text: 'isError: false' }),
          ms === undefined ? '' : ` Took ${Math.round(ms).toLocaleString()} ms.`),
        el('h4', { text: 'content' }), items.length ? items : el('p', { class: 'muted', text: 'none' }),
        res.structuredContent !== undefined ? [el('h4', { text: 'structuredContent' }), el('pre', { tabindex: '0', 'aria-label': 'structuredContent' }, el('code', { text: JSON.stringify(res.structuredContent, null, 2) }))] : null,
        // A call only a person may approve waits as a run: its approval page answers it.
        approval ? el('p', {}, el('a', { href: approval.replace(/^https?:\/\/[^/]+/, '') }, 'Approve or decline it on its approval page')) : null));
    };
    f.addEventListener('submit', (ev) => {
      ev.preventDefault();
      err.hidden = true;
      for (const n of f.querySelectorAll('[aria-invalid]')) n.removeAttribute('aria-invalid');
      let args;
      try { args = form.read(); } catch (e) { markField(e.field, `${e.field}: ${e.message}`, err, f); return; }
      const left = ((tool.inputSchema && tool.inputSchema.required) || []).find((n) => args[n] === undefined);
      if (left) { markField(left, `${left}: is required; fill it in`, err, f); return; }
      send(args);
    });
    return el('details', { class: 'console-tool', 'data-tool': tool.name },
      el('summary', {}, el('code', { text: tool.name }), ' ', kindBadge(ann), tool.title || (ann && ann.title) ? ` ${tool.title || ann.title}` : ''),
      el('p', { class: 'small', text: tool.description || '' }),
      el('details', { class: 'small' }, el('summary', { text: 'Definition as listed' }), el('pre', { tabindex: '0', 'aria-label': `${tool.name} as listed` }, el('code', { text: JSON.stringify(tool, null, 2) }))),
      f, out);
  }

  // ---- Activity ---------------------------------------------------------------------
  async function activityPage() {
    let agents = [];
    let conns = [];
    const [a, c, t, k, u] = await Promise.allSettled([api('GET', '/api/agents'), api('GET', '/api/connections'), callableTools(), api('GET', '/api/keys'), api('GET', '/api/users')]);
    if (a.status === 'fulfilled') agents = a.value.agents || [];
    if (c.status === 'fulfilled') conns = c.value.connections || [];
    // Names for every id an event carries: agents, connections, keys and people.
    const agentName = Object.fromEntries(agents.map((x) => [`agent:${x.id}`, x.name]));
    const connName = Object.fromEntries(conns.map((x) => [x.id, `${x.provider}: ${x.account_label}`]));
    const keyName = k.status === 'fulfilled' ? Object.fromEntries((k.value.keys || []).map((x) => [x.id, `${x.name} (sbk_${x.prefix}_…)`])) : {};
    const userName = u.status === 'fulfilled' ? Object.fromEntries((u.value.users || []).map((x) => [`user:${x.id}`, x.id === USER_ID ? 'you' : x.email])) : {};
    $('#f-agent').append(...agents.map((x) => el('option', { value: `agent:${x.id}`, text: x.name })));
    if (!agents.length) $('#f-agent').disabled = true;
    $('#f-connection').append(...conns.map((x) => el('option', { value: x.id, text: connName[x.id] })));
    if (t.status === 'fulfilled') $('#tool-names').append(...t.value.map((x) => el('option', { value: x.tool })));

    const who = (p) => agentName[p] ? `agent ${agentName[p]}` : userName[p] || (p && p.startsWith('agent:') ? 'a deleted agent' : p);
    let cursor = '';
    let query = '';
    const rows = $('#audit-rows');
    stack($('#audit-table'));
    // credential names what authenticated an event: an API key by its name, else what
    // its id's prefix says it is (a signed-in browser, an MCP client allowed by OAuth).
    const credential = (id) => keyName[id] || (!id ? '' : id.startsWith('ses_') ? 'a signed-in browser session'
      : id.startsWith('grt_') ? 'an MCP client allowed by OAuth' : id.startsWith('key_') ? 'a deleted key' : id);
    function detail(e) {
      const dl = $('#audit-detail-list');
      // A canceled call did not fail: the caller gave it up.
      const failed = e.outcome && e.outcome !== 'ok' && e.outcome !== 'canceled';
      const entries = [['Time', fmtTime(e.at)], ['Event', e.kind.replace(/_/g, ' ')], ['Who', who(e.principal)], ['Credential', credential(e.key_id)], ['Tool', e.tool],
        ['Connection', connName[e.connection_id] || (e.connection_id ? 'a disconnected account' : '')], ['Outcome', e.outcome], [failed ? 'Why it failed' : 'Detail', e.detail || (failed ? 'no reason was recorded' : e.outcome === 'canceled' ? 'The caller canceled the call before it finished.' : '')],
        ['Upstream status', e.upstream_status], ['Latency', e.latency_us ? `${(e.latency_us / 1000).toFixed(1)} ms` : ''], ['Arguments (keyed hash)', e.args_sha256], ['Event ID', e.id]];
      fill(dl, entries.filter(([, v]) => v !== undefined && v !== '' && v !== 0).map(([key, v]) => [el('dt', { text: key }), el('dd', { class: key === 'Why it failed' ? 'error' : undefined, text: String(v) })]));
      $('#audit-detail').showModal();
    }
    async function load(more) {
      try {
        const res = await api('GET', `/api/audit?limit=50${query}${more && cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        const trs = (res.events || []).map((e) => el('tr', { 'data-event': e.id },
          el('td', { text: fmtTime(e.at) }), el('td', { text: e.kind.replace(/_/g, ' ') }), el('td', { text: who(e.principal) }),
          el('td', {}, e.tool ? el('a', { href: `/tools/${encodeURIComponent(e.tool)}` }, e.tool) : ''),
          el('td', { text: connName[e.connection_id] || (e.connection_id ? 'a disconnected account' : '') }),
          el('td', {}, el('span', { class: `outcome ${e.outcome === 'ok' ? 'ok' : e.outcome === 'canceled' ? '' : 'bad'}`, text: e.outcome })),
          el('td', { class: 'num', text: e.latency_us ? `${(e.latency_us / 1000).toFixed(1)} ms` : '' }),
          el('td', {}, el('button', { type: 'button', class: 'secondary small', 'aria-label': `Details of the ${e.kind.replace(/_/g, ' ')} at ${fmtTime(e.at)}`, onclick: () => detail(e) }, 'Details'))));
        labelRows($('#audit-table'), trs);
        if (more) rows.append(...trs);
        else fill(rows, trs.length ? trs : el('tr', { role: 'row' }, el('td', { role: 'cell', colspan: '8', class: 'muted', text: 'No events match. Widen the filters, or run a tool.' })));
        cursor = res.next_cursor || '';
        $('#audit-more').hidden = !cursor;
      } catch (err) {
        fill(rows, el('tr', {}, el('td', { colspan: '8', class: 'error', text: describe(err) })));
      }
    }
    // The filters live in the page's URL, so a filtered view can be reloaded, shared
    // and come back to.
    const form = $('#audit-filters');
    function apply(fromURL) {
      const q = new URLSearchParams();
      const shown = new URLSearchParams();
      for (const [name, v] of new FormData(form).entries()) {
        if (!v) continue;
        shown.set(name, v);
        if (name === 'agent') q.set('principal', v);
        else if (name === 'since' || name === 'until') q.set(name, new Date(v).toISOString());
        else q.set(name, v.trim());
      }
      query = q.toString() ? `&${q}` : '';
      if (!fromURL) history.replaceState(null, '', shown.toString() ? `/activity?${shown}` : '/activity');
      return load(false);
    }
    for (const [name, v] of new URLSearchParams(location.search)) {
      const f = form.elements.namedItem(name);
      if (f) f.value = v;
    }
    form.addEventListener('submit', (ev) => { ev.preventDefault(); apply(false); });
    $('#audit-more').addEventListener('click', () => load(true));
    await apply(true);

    // Runs, with their output (or error) and, while they have not ended, a Cancel.
    const runsBox = $('#runs');
    async function loadRuns() {
      try {
        const res = await api('GET', '/api/runs');
        const list = res.runs || [];
        fill(runsBox, list.length ? scrollBox('Runs', el('table', { id: 'runs-table' },
          el('thead', {}, el('tr', {}, ['Run', 'Tool', 'State', 'Started', 'Updated', 'Output', 'Actions'].map((h) => el('th', { scope: 'col', text: h })))),
          el('tbody', {}, list.map((r) => {
            const id = r.run_id || r.id;
            const ended = ['completed', 'failed', 'canceled'].includes(r.state);
            return el('tr', { 'data-run': id }, el('td', {}, el('code', { text: id })), el('td', { text: r.tool || '' }),
              el('td', {}, el('span', { class: `status ${r.state}`, text: (r.state || '').replace(/_/g, ' ') })), el('td', { text: fmtTime(r.created_at) }), el('td', { text: fmtTime(r.updated_at) }),
              el('td', {}, ended ? el('button', { type: 'button', class: 'secondary small', 'aria-label': `Output of run ${id}`, onclick: () => runOutput(id) }, r.state === 'completed' ? 'Output' : 'Why') : ''),
              el('td', {}, ended ? '' : el('button', { type: 'button', class: 'danger small', 'aria-label': `Cancel run ${id}`, onclick: () => cancelRun(id) }, 'Cancel')));
          }))))
          : el('p', { class: 'muted', text: 'No async runs yet. Clients start one by calling a tool as a task.' }));
      } catch (err) {
        fill(runsBox, el('p', { class: err.status === 404 ? 'muted' : 'error', text: err.status === 404 ? 'This server does not run async tool calls yet.' : describe(err) }));
      }
    }
    async function runOutput(id) {
      try {
        const r = await api('GET', `/api/runs/${encodeURIComponent(id)}`);
        fill($('#audit-detail-list'), el('dt', { text: 'Run' }), el('dd', { text: id }), el('dt', { text: 'State' }), el('dd', { text: r.state }),
          r.error ? [el('dt', { text: 'Why it failed' }), el('dd', { class: 'error', text: `${r.error.code}: ${r.error.message}` })] : null,
          r.output !== undefined ? [el('dt', { text: 'Output' }), el('dd', {}, el('pre', { tabindex: '0', role: 'region', 'aria-label': 'Run output' }, el('code', { id: 'run-output', text: JSON.stringify(r.output, null, 2) })))] : null);
        $('#audit-detail').showModal();
      } catch (err) { alertPage(err); }
    }
    async function cancelRun(id) {
      if (!(await ask({ title: `Cancel run ${id}?`, body: 'If its call already reached the provider, that may have taken effect.', ok: 'Cancel the run', cancel: 'Keep it running', danger: true }))) return;
      try {
        await api('POST', `/api/runs/${encodeURIComponent(id)}/cancel`);
        flash(`Canceled run ${id}.`);
        await loadRuns();
        $('#runs-title').tabIndex = -1;
        $('#runs-title').focus();
      } catch (err) { alertPage(err); }
    }
    await loadRuns();
  }

  // ---- Settings -------------------------------------------------------------------
  async function settingsPage() {
    // Each form's failure shows next to it, and its next success clears it.
    const formError = (id, err) => showError(`#${id}-error`, err);
    const formOK = (id) => hideError(`#${id}-error`);
    // Names for the ids the key table would otherwise show raw.
    const names = {};
    // The members table is drawn from the same answer the first time: one request.
    let usersOnce = api('GET', '/api/users');
    // Nothing is awaited before the forms' handlers are in place: a form sent early
    // would otherwise go as a plain GET and reload the page with what was typed lost.
    const namesReady = Promise.allSettled([api('GET', '/api/agents'), usersOnce]).then(([ag, us]) => {
      if (ag.status === 'fulfilled') for (const a of ag.value.agents || []) names[a.id] = `agent ${a.name}`;
      if (us.status === 'fulfilled') for (const u of us.value.users || []) names[u.id] = u.id === USER_ID ? 'you' : u.email;
    });
    renderSnippets($('#tenant-snippets'), TENANT, $('#tenant-mcp-url').value, '');
    async function loadKeys() {
      const box = $('#key-list');
      try {
        await namesReady;
        const res = await api('GET', '/api/keys');
        const keys = res.keys || [];
        fill(box, keys.length ? scrollBox('API keys', el('table', { id: 'keys-table' },
          el('thead', {}, el('tr', {}, ['Name', 'Key', 'For', 'Created', 'Last used', 'Expires', 'Status', 'Actions'].map((h) => el('th', { scope: 'col', text: h })))),
          el('tbody', {}, keys.map((k) => {
            const state = k.revoked_at ? 'revoked' : k.expired ? 'expired' : 'active';
            return el('tr', { 'data-key': k.id },
            el('th', { scope: 'row', text: k.name }), el('td', {}, el('code', { text: `sbk_${k.prefix}_…` })),
            el('td', { text: k.agent_id ? names[k.agent_id] || 'a deleted agent' : names[k.user_id] || (k.user_id === USER_ID ? 'you' : 'a former member') }),
            el('td', { text: fmtTime(k.created_at) }), el('td', { text: k.last_used_at ? fmtTime(k.last_used_at) : 'never' }),
            el('td', { 'data-expires': k.expires_at || '', text: k.expires_at ? fmtTime(k.expires_at) : 'never' }),
            el('td', {}, el('span', { class: `status ${state === 'active' ? 'active' : 'revoked'}`, text: state })),
            el('td', {}, k.revoked_at ? '' : el('button', { type: 'button', class: 'danger', 'aria-label': `Revoke key ${k.name} (sbk_${k.prefix})`, onclick: () => revoke(k) }, 'Revoke')));
          }))))
          : el('p', { class: 'muted', text: 'No API keys.' }));
      } catch (err) { fill(box, el('p', { class: 'error', text: describe(err) })); }
    }
    async function revoke(k) {
      if (!(await ask({ title: `Revoke the key ${k.name} (sbk_${k.prefix}_…)?`, body: 'Clients using it are refused at once.', ok: 'Revoke', danger: true }))) return;
      try {
        await api('DELETE', `/api/keys/${encodeURIComponent(k.id)}`);
        formOK('key');
        flash(`Revoked key ${k.name}.`);
        await loadKeys();
        $('#keys-title').tabIndex = -1;
        $('#keys-title').focus(); // the row's button is gone: focus stays in the section
      } catch (err) { formError('key', err); }
    }
    $('#key-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const name = $('#key-name').value.trim();
      if (!name) { formError('key', new APIError(400, { error: { code: 'invalid', field: 'name', message: 'is required: name the key after where it is used' } })); $('#key-name').focus(); return; }
      const body = { name };
      if ($('#key-expiry').value) body.expires_in_days = Number($('#key-expiry').value);
      try {
        const res = await api('POST', '/api/keys', body);
        formOK('key');
        $('#new-key').value = res.key;
        $('#new-key-box').hidden = false;
        $('#key-name').value = '';
        $('#new-key').focus();
        flash('API key created: copy it now, it is shown only once.');
        renderSnippets($('#tenant-snippets'), TENANT, $('#tenant-mcp-url').value, res.key);
        await loadKeys();
      } catch (err) { formError('key', err); }
    });

    async function loadApps() {
      const box = $('#app-list');
      try {
        await namesReady;
        const res = await api('GET', '/api/connected-apps');
        const apps = res.connected_apps || [];
        fill(box, apps.length ? scrollBox('Connected apps', el('table', { id: 'apps-table' },
          el('thead', {}, el('tr', {}, ['App', 'MCP URL', 'Acts as', 'Allowed', 'Last used', 'Actions'].map((h) => el('th', { scope: 'col', text: h })))),
          el('tbody', {}, apps.map((g) => el('tr', { 'data-grant': g.id },
            el('th', { scope: 'row', text: g.client_name }), el('td', {}, el('code', { text: g.resource })),
            el('td', { text: g.agent_id ? names[g.agent_id] || 'a deleted agent' : names[g.user_id] || 'a former member' }),
            el('td', { text: `${fmtTime(g.created_at)}${g.consented_by === USER_ID ? '' : ` by ${names[g.consented_by] || 'a former member'}`}` }),
            el('td', { text: g.last_used_at ? fmtTime(g.last_used_at) : 'never' }),
            el('td', {}, el('button', { type: 'button', class: 'danger', 'aria-label': `Revoke ${g.client_name}'s access`, onclick: () => revokeApp(g) }, 'Revoke')))))))
          : el('p', { class: 'muted', text: 'No connected apps. An MCP client that supports sign-in connects with only the MCP URL.' }));
      } catch (err) { fill(box, el('p', { class: 'error', text: describe(err) })); }
    }
    async function revokeApp(g) {
      if (!(await ask({ title: `Revoke ${g.client_name}'s access?`, body: 'It is refused at once and must be allowed again to connect.', ok: 'Revoke', danger: true }))) return;
      try {
        await api('DELETE', `/api/connected-apps/${encodeURIComponent(g.id)}`);
        formOK('apps');
        flash(`Revoked ${g.client_name}'s access.`);
        await loadApps();
        $('#apps-title').tabIndex = -1;
        $('#apps-title').focus();
      } catch (err) { formError('apps', err); }
    }

    async function loadMembers() {
      try {
        const res = await (usersOnce || api('GET', '/api/users'));
        usersOnce = null;
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
        fill($('#invitation-list'), inv.length ? [el('h3', { id: 'invitations-title', tabindex: '-1', text: 'Pending invitations' }), scrollBox('Pending invitations', el('table', { id: 'invitations-table' },
          el('thead', {}, el('tr', {}, ['Email', 'Role', 'Link valid until', 'Actions'].map((h) => el('th', { scope: 'col', text: h })))),
          el('tbody', {}, inv.map((i) => el('tr', { 'data-invitation': i.id }, el('th', { scope: 'row', text: i.email }), el('td', { text: i.role }), el('td', { text: fmtTime(i.expires_at) }),
            el('td', { class: 'actions' },
              el('button', { type: 'button', class: 'secondary small', 'aria-label': `Resend the invitation of ${i.email}`, onclick: async () => {
                if (!(await ask({ title: `Make a new link for ${i.email}?`, body: 'The link sent before stops working.', ok: 'Make a new link' }))) return;
                try {
                  const res = await api('POST', `/api/invitations/${encodeURIComponent(i.id)}/resend`);
                  formOK('invite');
                  $('#invite-link').value = res.url;
                  $('#invite-link-box').hidden = false;
                  flash(`New invitation link for ${i.email}: copy it and send it; the old one no longer works.`);
                  await loadMembers();
                  $('#invite-link').focus();
                } catch (err) { formError('invite', err); }
              } }, 'Resend'),
              el('button', { type: 'button', class: 'danger small', 'aria-label': `Revoke the invitation of ${i.email}`, onclick: async () => {
                if (!(await ask({ title: `Revoke the invitation of ${i.email}?`, body: 'Its link stops working at once.', ok: 'Revoke', danger: true }))) return;
                try { await api('DELETE', `/api/invitations/${encodeURIComponent(i.id)}`); formOK('invite'); flash(`Revoked the invitation of ${i.email}.`); await loadMembers(); $('#invite-email').focus(); } catch (err) { formError('invite', err); }
              } }, 'Revoke')))))))] : []);
      } catch (err) { fill($('#invitation-list'), el('p', { class: 'error', text: describe(err) })); }
    }
    // roleSelect changes a member's role; only an owner grants or takes away owner.
    function roleSelect(u) {
      const roles = ['member', 'admin'].concat(ROLE === 'owner' || u.role === 'owner' ? ['owner'] : []);
      const sel = el('select', { 'aria-label': `Role of ${u.email}`, 'data-role-of': u.id, disabled: u.role === 'owner' && ROLE !== 'owner',
        onchange: async () => {
          const role = sel.value;
          // Every role change is confirmed, saying what it does; declining keeps the role.
          const what = u.id === USER_ID ? `Change your own role from ${u.role} to ${role}? You may lose the right to manage the workspace.`
            : `Change ${u.email} from ${u.role} to ${role}? ${role === 'member' ? 'They can no longer manage the workspace, its members or its keys.' : role === 'owner' ? 'They can then manage everything, owners included.' : 'They can then manage members, keys and connections.'}`;
          if (!(await ask({ title: `Make ${u.id === USER_ID ? 'yourself' : u.email} ${role}?`, body: what, ok: `Make ${role}`, danger: role === 'member' || u.id === USER_ID, opener: sel }))) {
            sel.value = u.role;
            return;
          }
          try {
            // from is the role confirmed: the server changes nothing if it changed since.
            await api('PATCH', `/api/users/${encodeURIComponent(u.id)}`, { role, from: u.role });
            // The select may be changed again before the members are shown anew:
            // that change starts from the role just made.
            u.role = role;
            formOK('member');
            flash(`${u.email} is now ${role}.`);
            if (u.id === USER_ID) { location.reload(); return; }
            await loadMembers();
          } catch (err) {
            sel.value = u.role;
            formError('member', err.field === 'from' && err.code === 'conflict'
              ? new APIError(err.status, { error: { code: err.code, message: `Nothing changed: ${u.email}'s role changed after this page showed it. The members are shown again as they are now; confirm again if you still mean it.` } }) : err);
            if (err.field === 'from') {
              await loadMembers();
              const again = document.querySelector(`select[data-role-of="${CSS.escape(u.id)}"]`);
              if (again) again.focus();
            }
          }
        } }, roles.map((r) => el('option', { value: r, text: r })));
      sel.value = u.role;
      return sel;
    }
    // memberActions removes a member, after a confirmation; nobody removes themselves.
    function memberActions(u) {
      if (u.id === USER_ID || (u.role === 'owner' && ROLE !== 'owner')) return '';
      return el('button', { type: 'button', class: 'danger small', 'aria-label': `Remove ${u.email}`, onclick: async () => {
        if (!(await ask({ title: `Remove ${u.email} from the workspace?`, body: 'Their API keys are revoked, their sessions end and the agents they created are deleted.', ok: 'Remove', danger: true }))) return;
        try {
          await api('DELETE', `/api/users/${encodeURIComponent(u.id)}`);
          formOK('member');
          flash(`Removed ${u.email}.`);
          await Promise.all([loadMembers(), loadKeys()]);
          $('#members-title').tabIndex = -1;
          $('#members-title').focus();
        } catch (err) { formError('member', err); }
      } }, 'Remove');
    }
    const inviteForm = $('#invite-form');
    if (inviteForm) {
      inviteForm.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        try {
          const res = await api('POST', '/api/invitations', { email: $('#invite-email').value.trim(), role: $('#invite-role').value });
          formOK('invite');
          $('#invite-email').removeAttribute('aria-invalid');
          $('#invite-link').value = res.url;
          $('#invite-link-box').hidden = false;
          $('#invite-email').value = '';
          flash(`Invitation made for ${res.email}: copy the link and send it.`);
          await loadMembers();
        } catch (err) {
          formError('invite', err);
          if (err.field === 'email') { $('#invite-email').setAttribute('aria-invalid', 'true'); $('#invite-email').focus(); }
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
        $('#default-catalog').value = st.catalog || 'connected';
        // Only now may an admin change them: before, the saved values would overwrite the choice.
        const form = $('#defaults-form');
        form.removeAttribute('aria-busy');
        if (IS_ADMIN) { for (const c of form.elements) c.disabled = false; return; }
        // A member may not change them: the values as text, no controls they cannot use.
        form.replaceWith(el('dl', { id: 'defaults-view', class: 'defaults' }, [...form.querySelectorAll('select')].map((sel) => [
          el('dt', { text: form.querySelector(`label[for="${sel.id}"]`).textContent }), el('dd', { text: sel.selectedOptions[0] ? sel.selectedOptions[0].textContent : sel.value })])),
        el('p', { class: 'small muted', text: 'Only an admin of the workspace changes these.' }));
      } catch (err) {
        $('#defaults-form').replaceChildren(el('p', { class: err.status === 404 ? 'muted' : 'error', text: err.status === 404 ? 'This server has no MCP settings.' : describe(err) }));
      }
    }
    $('#defaults-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      try {
        await api('PUT', '/api/mcp-settings', { confirm: $('#default-confirm').value, approval: $('#default-approval').value, tool_mode: $('#default-toolmode').value, run_tools: $('#default-runtools').value, catalog: $('#default-catalog').value });
        formOK('defaults');
        flash('Saved the defaults. Live MCP sessions pick them up.');
      } catch (err) { formError('defaults', err); }
    });
    async function loadOAuthApps() {
      if (!$('#oauth-form')) return;
      try {
        const [res, providers] = await Promise.all([api('GET', '/api/oauth-apps'), providerList()]);
        $('#oauth-redirect').value = res.redirect_uri || '';
        const oauth = providers.filter((p) => (p.auth_kinds || []).includes('oauth2'));
        const sel = $('#oauth-provider');
        if (!sel.options.length) sel.append(...oauth.map((p) => el('option', { value: p.name, text: p.title })));
        const apps = res.oauth_apps || [];
        const title = Object.fromEntries(providers.map((p) => [p.name, p.title]));
        fill($('#oauth-apps'), apps.length ? el('ul', {}, apps.map((a) => el('li', {}, `${title[a.provider] || a.provider}: client `, el('code', { text: a.client_id }), ` (since ${fmtTime(a.created_at)}) `,
          el('button', { type: 'button', class: 'danger small', 'aria-label': `Remove the ${a.provider} OAuth app`, onclick: async () => {
            if (!(await ask({ title: `Remove the workspace's ${title[a.provider] || a.provider} OAuth app?`, body: 'Connecting falls back to the deployment\'s app, if there is one.', ok: 'Remove', danger: true }))) return;
            try {
              await api('DELETE', `/api/oauth-apps/${encodeURIComponent(a.provider)}`);
              formOK('oauth');
              flash('Removed the OAuth app.');
              await loadOAuthApps();
              $('#oauth-provider').focus();
            } catch (err) { formError('oauth', err); }
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
          formOK('oauth');
          flash('Saved the OAuth app. "Continue with OAuth" uses it now.');
          await loadOAuthApps();
        } catch (err) {
          formError('oauth', err);
          const f = err.field && document.getElementById(`oauth-${err.field.replace('_', '-')}`);
          if (f) { f.setAttribute('aria-invalid', 'true'); f.focus(); }
        }
      });
    }
    // The deployment's OAuth apps: the operator's section, present only for them.
    async function loadDeploymentOAuthApps() {
      const box = $('#deployment-oauth-apps');
      if (!box) return;
      try {
        const res = await api('GET', '/api/deployment/oauth-apps');
        $('#deployment-oauth-redirect').value = res.redirect_uri || '';
        const apps = res.oauth_apps || [];
        const sel = $('#deployment-oauth-provider');
        const chosen = sel.value;
        sel.replaceChildren(...apps.filter((a) => a.source !== 'environment').map((a) => el('option', { value: a.provider, text: a.title })));
        if (chosen) sel.value = chosen;
        // The variable's name is code, which wraps anywhere: a narrow window keeps the row in reach.
        const where = (a) => a.source === 'environment' ? ['the environment, ', el('code', { text: a.variable })]
          : a.source === 'operator' ? `set here${a.updated_at ? ` ${fmtTime(a.updated_at)}` : ''}` : ['none: workspaces need their own, or set ', el('code', { text: a.variable })];
        box.removeAttribute('aria-busy');
        fill(box, scrollBox('Deployment OAuth apps', el('table', {}, [
          el('thead', {}, el('tr', {}, ['Provider', 'Client ID', 'Where from', 'Actions'].map((h) => el('th', { scope: 'col', text: h })))),
          el('tbody', {}, apps.map((a) => el('tr', { 'data-provider': a.provider }, [
            el('th', { scope: 'row', text: a.title + (a.catalog ? ' (catalog)' : '') }),
            el('td', {}, a.client_id ? el('code', { text: a.client_id }) : '—'),
            el('td', {}, where(a)),
            el('td', {}, a.source !== 'operator' ? '' : el('button', { type: 'button', class: 'danger small', 'aria-label': `Remove the deployment's ${a.title} OAuth app`, onclick: async () => {
              if (!(await ask({ title: `Remove the deployment's ${a.title} OAuth app?`, body: 'Workspaces without their own app can no longer connect it with OAuth; connections it made must reconnect when their token needs a refresh.', ok: 'Remove', danger: true }))) return;
              try {
                await api('DELETE', `/api/deployment/oauth-apps/${encodeURIComponent(a.provider)}`);
                formOK('deployment-oauth');
                flash(`Removed the deployment's ${a.title} OAuth app.`);
                await loadDeploymentOAuthApps();
                sel.focus();
              } catch (err) { formError('deployment-oauth', err); }
            } }, 'Remove')),
          ])))])));
      } catch (err) {
        box.removeAttribute('aria-busy');
        fill(box, el('p', { class: 'error', text: describe(err) }));
      }
    }
    const deploymentForm = $('#deployment-oauth-form');
    if (deploymentForm) {
      deploymentForm.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        const secret = $('#deployment-oauth-client-secret').value;
        $('#deployment-oauth-client-secret').value = ''; // the secret never stays in the page
        try {
          await api('PUT', `/api/deployment/oauth-apps/${encodeURIComponent($('#deployment-oauth-provider').value)}`, { client_id: $('#deployment-oauth-client-id').value.trim(), client_secret: secret });
          $('#deployment-oauth-client-id').value = '';
          formOK('deployment-oauth');
          flash('Saved the deployment\'s OAuth app. Every workspace without its own connects with it now.');
          await loadDeploymentOAuthApps();
        } catch (err) {
          formError('deployment-oauth', err);
          const f = err.field && document.getElementById(`deployment-oauth-${err.field.replace('_', '-')}`);
          if (f) { f.setAttribute('aria-invalid', 'true'); f.focus(); }
        }
      });
    }
    await Promise.all([loadKeys(), loadApps(), loadMembers(), loadDefaults(), loadOAuthApps(), loadDeploymentOAuthApps()]);
  }

  // Pages with a script of their own (workflows.js) use these, loaded after this file.
  window.Switchboard = Object.freeze({ IS_ADMIN, $, el, fill, api, APIError, describe, showError, hideError, alertPage, flash, fmtTime, scrollBox, kindBadge, ask });

  const pages = {
    integrations: integrationsPage,
    agents: agentsPage,
    agent: () => agentPage(document.body.dataset.param),
    tool: () => toolPage(document.body.dataset.param),
    activity: activityPage,
    settings: settingsPage,
  };
  // ssoNotice shows an owner, on every page, the changes of single sign-on they have
  // not acknowledged (who changed what, and when), until they acknowledge them: each
  // owner for themselves.
  async function ssoNotice() {
    const box = $('#sso-notice');
    if (!box || ROLE !== 'owner') return;
    let data;
    try { data = await api('GET', '/api/sso/changes'); } catch (err) { return; }
    const changes = (data && data.changes) || [];
    if (!changes.length) { box.hidden = true; return; }
    const ack = el('button', { type: 'button', text: 'Acknowledge' });
    ack.addEventListener('click', async () => {
      ack.disabled = true;
      try {
        for (const c of changes) await api('POST', `/api/sso/changes/${encodeURIComponent(c.id)}/acknowledge`);
        box.hidden = true;
        flash('Acknowledged the changes of single sign-on.');
      } catch (err) { ack.disabled = false; alertPage(err); }
    });
    fill(box,
      el('h2', { text: 'Single sign-on was changed' }),
      el('ul', {}, changes.map((c) => el('li', {}, `${fmtTime(c.created_at)}, ${c.email || c.changed_by}: ${c.detail}`))),
      el('p', { class: 'muted', text: 'Single sign-on decides who signs in as whom. If you do not recognise a change, check Settings, Single sign-on, and Activity.' }),
      ack);
    box.hidden = false;
  }
  ssoNotice();

  const run = pages[document.body.dataset.page];
  if (run) run().catch(alertPage);
})();
