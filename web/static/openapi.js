// Switchboard's Integrations page, its APIs added by their OpenAPI description: the
// workspace's list (Delete for admins) and, for admins, the form that adds one (POST
// /api/openapi-providers). Once added, an API is in the catalog and connects like any
// provider. Loaded after app.js, whose helpers it uses; plain JavaScript, no build step.
'use strict';
(() => {
  const SB = window.Switchboard;
  const anchor = document.querySelector('#remote');
  if (!SB || !anchor) return;
  const { IS_ADMIN, el, fill, api, describe, alertPage, flash, ask } = SB;
  const list = el('div', { id: 'openapi-list', 'aria-busy': 'true' }, el('p', { class: 'muted', text: 'Loading APIs…' }));
  const add = el('button', { type: 'button', id: 'openapi-add', text: 'Add an API by its OpenAPI description' });
  anchor.after(el('section', { id: 'openapi', 'aria-labelledby': 'openapi-title' },
    el('h2', { id: 'openapi-title', text: 'APIs by their OpenAPI description' }),
    el('p', { class: 'muted', text: 'Any API with an OpenAPI 3 or Swagger 2 description: its operations become tools named after it (name_operation), for this workspace only. Connect it from the catalog like any provider.' }),
    // Adding and deleting APIs is for the workspace's admins: a member sees the list.
    list, IS_ADMIN ? el('p', {}, add) : el('p', { class: 'muted small', text: 'An admin of the workspace adds and deletes APIs.' })));

  const field = (id, label, attrs, hint) => [
    el('label', { for: id }, label, hint ? el('span', { class: 'muted', text: ` (${hint})` }) : null),
    el(attrs.rows ? 'textarea' : 'input', { id, autocomplete: 'off', spellcheck: 'false', ...attrs }),
  ];
  const error = el('p', { id: 'openapi-error', class: 'error', role: 'alert', hidden: '' });
  const form = el('form', { id: 'openapi-form', class: 'stack', novalidate: '' },
    el('h2', { id: 'openapi-dialog-title', text: 'Add an API by its OpenAPI description' }),
    field('openapi-name', 'Name', { name: 'name', required: '', maxlength: '32', placeholder: 'inventory' }, 'snake_case; prefixes its tools'),
    field('openapi-url', 'Description URL', { name: 'url', type: 'url', placeholder: 'https://api.example.com/openapi.json' }, 'or paste it below'),
    field('openapi-description', 'Description', { name: 'description', rows: '6' }, 'JSON or YAML'),
    field('openapi-base-url', 'Base URL', { name: 'base_url', type: 'url' }, 'optional; the description\'s first server by default'),
    field('openapi-auth', 'Security scheme', { name: 'auth' }, 'optional; the one it asks for first by default'),
    field('openapi-tags', 'Tags', { name: 'tags' }, 'optional, comma-separated; all operations by default'),
    field('openapi-operations', 'Operation ids', { name: 'operations' }, 'optional, comma-separated'),
    field('openapi-client-id', 'OAuth client ID', { name: 'client_id' }, 'for an OAuth 2.0 scheme'),
    field('openapi-client-secret', 'OAuth client secret', { name: 'client_secret', type: 'password' }, 'kept sealed'),
    error,
    el('div', { class: 'row' }, el('button', { type: 'submit', text: 'Add' }), el('button', { type: 'button', class: 'secondary', id: 'openapi-cancel', text: 'Cancel' })));
  const dialog = el('dialog', { id: 'openapi-dialog', 'aria-labelledby': 'openapi-dialog-title' }, form);
  document.body.append(dialog);

  async function load() {
    try {
      const apis = (await api('GET', '/api/openapi-providers')).providers || [];
      if (!apis.length) { fill(list, el('p', { class: 'muted', text: 'No API added yet.' })); return; }
      fill(list, el('ul', { class: 'tools' }, apis.map((a) => el('li', { 'data-api': a.name },
        el('strong', { text: a.title }), ' ', el('code', { text: `${a.name}_…` }), ` ${a.tools.length} tools, ${a.base_url} `,
        IS_ADMIN ? el('button', { type: 'button', class: 'secondary', 'data-delete': a.name, 'aria-label': `Delete ${a.title}`, text: 'Delete' }) : null))));
    } catch (err) { fill(list); alertPage(err); }
  }

  list.addEventListener('click', async (ev) => {
    const name = ev.target.dataset && ev.target.dataset.delete;
    if (!name || !(await ask({ title: `Delete the API ${name}?`, body: 'Its connections are disconnected and its tools go.', ok: 'Delete', danger: true }))) return;
    try { await api('DELETE', `/api/openapi-providers/${encodeURIComponent(name)}`); flash(`Deleted ${name}.`); load(); } catch (err) { alertPage(err); }
  });
  add.addEventListener('click', () => { error.hidden = true; dialog.showModal(); });
  form.querySelector('#openapi-cancel').addEventListener('click', () => dialog.close());
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const v = (n) => form.elements[n].value.trim();
    const csv = (n) => v(n).split(',').map((s) => s.trim()).filter(Boolean);
    const body = { name: v('name') };
    for (const n of ['url', 'base_url', 'auth', 'client_id']) if (v(n)) body[n] = v(n);
    if (form.elements.client_secret.value) body.client_secret = form.elements.client_secret.value;
    if (v('description')) body.description = v('description');
    if (csv('tags').length) body.tags = csv('tags');
    if (csv('operations').length) body.operations = csv('operations');
    try {
      const added = await api('POST', '/api/openapi-providers', body);
      dialog.close();
      // The page loads again to list the new API in the catalog; it says what was
      // added once it has.
      location.assign(`/?${new URLSearchParams({ added: added.title, tools: String(added.tools.length) })}`);
    } catch (err) {
      error.textContent = describe(err);
      error.hidden = false;
      const input = err.field && form.elements[err.field];
      if (input && input.focus) input.focus();
    }
  });
  load();
})();
