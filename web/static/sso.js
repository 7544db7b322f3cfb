// sso.js fills Settings' Single sign-on section (tenant owners): the tenant's OpenID
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

  async function call(method, body, path = '/api/sso') {
    const opts = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
    if (method !== 'GET') opts.headers['X-CSRF-Token'] = CSRF;
    if (body !== undefined) { opts.headers['Content-Type'] = 'application/json'; opts.body = JSON.stringify(body); }
    const res = await fetch(path, opts);
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
      await loadLinks(); // a new issuer removed the links
    } catch (err) { fail(err); }
  });
  $('#sso-remove').addEventListener('click', async () => {
    if (!(await SB.ask({ title: 'Remove single sign-on?', body: 'People sign in with passwords again.', ok: 'Remove', danger: true }))) return;
    error.hidden = true;
    try { await call('DELETE'); show(await call('GET')); await loadLinks(); } catch (err) { fail(err); }
  });
  // The links of people to the identity provider: an owner's or an admin's account
  // opens through single sign-on only once linked. Pending ones are refused sign-ins,
  // which an owner may approve here.
  const linksBox = $('#sso-links');
  async function loadLinks() {
    if (!linksBox) return;
    const data = await call('GET', undefined, '/api/sso/links');
    const links = (data && data.links) || [];
    linksBox.replaceChildren();
    if (!links.length) {
      const p = document.createElement('p');
      p.className = 'muted';
      p.textContent = 'No owner or admin has linked their account yet: each links theirs under Your single sign-on.';
      linksBox.append(p);
      return;
    }
    const ul = document.createElement('ul');
    for (const l of links) {
      const li = document.createElement('li');
      li.textContent = `${l.email} (subject ${l.subject}): ${l.pending ? 'a refused sign-in, waiting for approval' : `linked by ${l.linked_by}`} `;
      if (l.pending) {
        const b = document.createElement('button');
        b.type = 'button';
        b.textContent = 'Approve';
        b.addEventListener('click', async () => {
          if (!(await SB.ask({ title: `Link ${l.email}?`, body: `Single sign-on will open ${l.email}'s account for the identity provider's subject ${l.subject}. Approve only if you know this sign-in was theirs.`, ok: 'Approve' }))) return;
          error.hidden = true;
          try { await call('POST', undefined, `/api/sso/links/${encodeURIComponent(l.id)}/approve`); await loadLinks(); } catch (err) { fail(err); }
        });
        li.append(b);
      }
      ul.append(li);
    }
    linksBox.append(ul);
  }
  call('GET').then(show, fail);
  loadLinks().catch(fail);
})();
