// person.mjs is a person's browser for the e2e scripts, driven over HTTP: it keeps
// cookies, sets the admin's password with the link serve printed (which signs them
// in), and answers Switchboard's OAuth consent page.

const jar = new Map();
const keep = (res) => {
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(";");
    const eq = pair.indexOf("=");
    jar.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
};
const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");

// page loads a page (posting form when given) without following redirects.
export async function page(url, form) {
  const init = { redirect: "manual", headers: { Cookie: cookieHeader() } };
  if (form) {
    init.method = "POST";
    init.headers["Content-Type"] = "application/x-www-form-urlencoded";
    init.body = new URLSearchParams(form).toString();
  }
  const res = await fetch(url, init);
  keep(res);
  return { status: res.status, location: res.headers.get("location"), html: await res.text() };
}

// hidden returns a page's hidden form fields.
export const hidden = (html) => Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)]
  .map((m) => [m[1], m[2].replaceAll("&amp;", "&").replaceAll("&#43;", "+").replaceAll("&#34;", '"').replaceAll("&#39;", "'")]));

// signInWithLink sets the admin's password with the one-time link, which signs them in;
// it reports whether a session cookie came back.
export async function signInWithLink(link, password) {
  const invite = await page(link);
  const set = await page(link, { csrf: hidden(invite.html).csrf, password, confirm: password });
  return set.status === 303 && jar.has("switchboard_session");
}

// consent shows the consent page at an authorization URL and allows it; it returns the
// page and the answer (a 303 back to the client).
export async function consent(authorizationURL) {
  const shown = await page(authorizationURL);
  const origin = new URL(authorizationURL).origin;
  const answer = await page(origin + "/oauth/authorize", { ...hidden(shown.html), decision: "allow" });
  return { shown, answer };
}
