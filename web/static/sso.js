// sso.js fills Settings' Single sign-on section (tenant admins): the tenant's OpenID
// provider, its client, the email domains whose people join on their first sign-in,
// and whether passwords are off. The client secret is sent, never shown.
(() => {
  'use strict';
  const $ = (s) => document.querySelector(s);
  const form = $('#sso-form');
  const SB = window.Switchboard; // app.js, loaded before: its confirmation dialog
  if (!form || !SB) return;
  const CSRF = document.querySelector('meta[name="csrf-token"]').content;
  const status = $('#sso-status');
  const error = $('#sso-error');

  async function call(method, body) {
    const opts = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
    if (method !== 'GET') opts.headers['X-CSRF-Token'] = CSRF;
    if (body !== undefined) { opts.headers['Content-Type'] = 'application/json'; opts.body = JSON.stringify(body); }
    const res = await fetch('/api/sso', opts);
    if (res.status === 204) return null;
    const data = await res.json().catch(() => null);
    if (!res.ok) {
      const e = (data && data.error) || {};
      const err = new Error(e.message || `the server answered ${res.status}`);
      err.field = e.field;
      throw err;
    }
    return data;
  }

  function show(s) {
    $('#sso-redirect').value = s.redirect_uri || '';
    $('#sso-signin-url').value = s.sign_in_url || '';
    $('#sso-issuer').value = s.issuer || '';
    $('#sso-client-id').value = s.client_id || '';
    $('#sso-client-secret').value = '';
    $('#sso-client-secret').placeholder = s.client_secret_set ? 'Set (leave empty to keep it)' : '';
    $('#sso-domains').value = (s.allowed_domains || []).join(' ');
    $('#sso-passwords-off').checked = !!s.local_passwords_off;
    $('#sso-remove').hidden = !s.configured;
    status.textContent = s.configured
      ? `Single sign-on is on${s.local_passwords_off ? '; passwords are off' : ''}.`
      : 'Single sign-on is off: people sign in with passwords.';
  }

  function fail(err) {
    error.textContent = err.message;
    error.hidden = false;
    const f = err.field && document.getElementById('sso-' + err.field.replace(/\[\d+\]$/, '').replaceAll('_', '-').replace('allowed-domains', 'domains'));
    if (f) { f.setAttribute('aria-invalid', 'true'); f.focus(); }
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    error.hidden = true;
    for (const f of form.querySelectorAll('[aria-invalid]')) f.removeAttribute('aria-invalid');
    const secret = $('#sso-client-secret').value;
    $('#sso-client-secret').value = ''; // the secret never stays in the page
    try {
      show(await call('PUT', {
        issuer: $('#sso-issuer').value.trim(), client_id: $('#sso-client-id').value.trim(), client_secret: secret,
        allowed_domains: $('#sso-domains').value.split(/[\s,]+/).filter(Boolean), local_passwords_off: $('#sso-passwords-off').checked,
      }));
    } catch (err) { fail(err); }
  });
  $('#sso-remove').addEventListener('click', async () => {
    if (!(await SB.ask({ title: 'Remove single sign-on?', body: 'People sign in with passwords again.', ok: 'Remove', danger: true }))) return;
    error.hidden = true;
    try { await call('DELETE'); show(await call('GET')); } catch (err) { fail(err); }
  });
  call('GET').then(show, fail);
})();
