package web

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/api"
)

// formCookie holds the anti-forgery token of the forms shown before there is a
// session (sign-in, invitation): the form carries the same value, which another site
// can neither read nor set.
const formCookie = "switchboard_form"

// maxFormBytes bounds a posted form.
const maxFormBytes = 16 << 10

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

func urlPathEscape(s string) string { return url.PathEscape(s) }

// sentence makes an error message a sentence for a page: capitalized, with a full stop.
func sentence(msg string) string {
	if msg == "" {
		return msg
	}
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

// session returns the request's session token and principal, if it carries a valid one.
func (h *handler) session(r *http.Request) (string, switchboard.Principal, bool) {
	c, err := r.Cookie(api.SessionCookie)
	if err != nil || c.Value == "" {
		return "", switchboard.Principal{}, false
	}
	p, err := h.Accounts.Session(r.Context(), c.Value)
	if err != nil {
		if switchboard.CodeOf(err) == switchboard.CodeInternal {
			h.log.ErrorContext(r.Context(), "read session", "err", err)
		}
		return "", switchboard.Principal{}, false
	}
	return c.Value, p, true
}

// setSession gives the browser its session cookie: HTTP-only, same-site, Secure on https.
func (h *handler) setSession(w http.ResponseWriter, token string) {
	http.SetCookie(w, &http.Cookie{
		Name: api.SessionCookie, Value: token, Path: "/", HttpOnly: true, Secure: h.secure,
		SameSite: http.SameSiteLaxMode, MaxAge: int(h.SessionLifetime.Seconds()),
	})
}

func (h *handler) clearSession(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: api.SessionCookie, Value: "", Path: "/", HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode, MaxAge: -1})
}

// formToken returns the request's form token, setting a new one when it has none.
func (h *handler) formToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(formCookie); err == nil && len(c.Value) == 32 {
		return c.Value
	}
	v := switchboard.RandomToken(20)
	http.SetCookie(w, &http.Cookie{Name: formCookie, Value: v, Path: "/", HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteStrictMode})
	return v
}

// formTokenOK checks a posted form's anti-forgery field against its cookie.
func formTokenOK(r *http.Request) bool {
	c, err := r.Cookie(formCookie)
	if err != nil || c.Value == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue("csrf"))) == 1
}

// safeNext keeps a post-sign-in destination on this site: a path that starts with one
// slash. Browsers drop tabs and newlines from a Location and read a backslash as a
// slash, so "/\t/evil.example" or "/\\evil.example" would leave the site: any control
// character or backslash sends the browser home instead.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return "/"
	}
	for _, r := range next {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return "/"
		}
	}
	return next
}

// signInPage shows the sign-in form for the workspace the query names (workspace;
// the deployment's first one otherwise): with its single sign-on button when it has
// one, and without the password form when it turned passwords off. A company links
// its people to /signin?workspace=SLUG.
func (h *handler) signInPage(w http.ResponseWriter, r *http.Request) {
	if _, _, ok := h.session(r); ok {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	d := pageData{
		Title: "Sign in", Page: "signin", CSRF: h.formToken(w, r), Next: safeNext(r.URL.Query().Get("next")),
		Tenant: h.DefaultTenant, DefaultTenant: h.DefaultTenant,
	}
	if ws := strings.TrimSpace(r.URL.Query().Get("workspace")); ws != "" && len(ws) <= 64 {
		d.Tenant = ws
	}
	h.signInMethods(r, &d)
	h.render(w, r, http.StatusOK, d)
}

// signInMethods fills the page's single sign-on fields for d.Tenant.
func (h *handler) signInMethods(r *http.Request, d *pageData) {
	if h.SSO == nil {
		return
	}
	d.SSOFinder = true
	if d.Tenant == "" {
		return
	}
	sso, passwords, err := h.SSO.SignInMethods(r.Context(), d.Tenant)
	if err != nil {
		h.log.ErrorContext(r.Context(), "read sign-in methods", "err", err)
		return
	}
	if sso {
		d.SSOURL = "/signin/sso?" + url.Values{"workspace": {d.Tenant}, "next": {d.Next}}.Encode()
		d.PasswordsOff = !passwords
	}
}

func (h *handler) signIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	d := pageData{Title: "Sign in", Page: "signin", Next: safeNext(r.PostFormValue("next")),
		Tenant: strings.TrimSpace(r.PostFormValue("tenant")), Email: strings.TrimSpace(r.PostFormValue("email")), DefaultTenant: h.DefaultTenant}
	if !formTokenOK(r) {
		d.CSRF = h.formToken(w, r)
		d.Error = "The form expired or came from another site. Sign in again from this page."
		h.render(w, r, http.StatusForbidden, d)
		return
	}
	d.CSRF = h.formToken(w, r)
	for _, f := range []struct{ name, value, label string }{{"tenant", d.Tenant, "Workspace"}, {"email", d.Email, "Email"}, {"password", r.PostFormValue("password"), "Password"}} {
		if f.value == "" {
			d.Error, d.ErrorField = f.label+" is required.", f.name
			h.render(w, r, http.StatusBadRequest, d)
			return
		}
	}
	token, err := h.Accounts.SignIn(r.Context(), d.Tenant, d.Email, r.PostFormValue("password"))
	if err != nil {
		e := switchboard.AsError(err)
		status := e.Code.HTTPStatus()
		switch e.Code {
		case switchboard.CodeInternal:
			h.log.ErrorContext(r.Context(), "sign in", "err", err)
			d.Error = "Signing in failed on the server. Try again in a moment, and tell the operator if it persists."
		case switchboard.CodeRateLimited, switchboard.CodeUnavailable:
			// Throttled: the message says when to try again, and so does Retry-After.
			d.Error = sentence(e.Message)
			if e.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int((e.RetryAfter+time.Second-1)/time.Second)))
			}
		case switchboard.CodeForbidden:
			// The workspace signs in with single sign-on only: the page shows its button.
			d.Error = sentence(e.Message)
			h.signInMethods(r, &d)
		default:
			d.Error = "The workspace, email or password is wrong. Check them and try again, or ask an admin for a new invitation link."
		}
		h.render(w, r, status, d)
		return
	}
	h.setSession(w, token)
	http.Redirect(w, r, d.Next, http.StatusSeeOther)
}

func (h *handler) signOut(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	token, _, ok := h.session(r)
	if !ok {
		h.clearSession(w)
		http.Redirect(w, r, "/signin", http.StatusSeeOther)
		return
	}
	if subtle.ConstantTimeCompare([]byte(h.Accounts.CSRFToken(token)), []byte(r.PostFormValue("csrf"))) != 1 {
		http.Error(w, "This sign-out request did not come from a Switchboard page. Use the Sign out button.", http.StatusForbidden)
		return
	}
	if err := h.Accounts.SignOut(r.Context(), token); err != nil {
		h.log.ErrorContext(r.Context(), "sign out", "err", err)
		http.Error(w, "Signing out failed on the server. Try again.", http.StatusInternalServerError)
		return
	}
	h.clearSession(w)
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

func (h *handler) invitePage(w http.ResponseWriter, r *http.Request) {
	d := pageData{Title: "Set your password", Page: "invite", CSRF: h.formToken(w, r), MinPassword: h.MinPasswordLength}
	link, err := h.Accounts.Link(r.Context(), r.PathValue("token"))
	if err != nil {
		h.linkError(w, r, d, err)
		return
	}
	d.Link = link
	h.render(w, r, http.StatusOK, d)
}

// linkError renders the invitation page with the reason a link cannot be used.
func (h *handler) linkError(w http.ResponseWriter, r *http.Request, d pageData, err error) {
	e := switchboard.AsError(err)
	d.Error = e.Message
	if e.Code == switchboard.CodeInternal {
		h.log.ErrorContext(r.Context(), "read link", "err", err)
		d.Error = "The link could not be checked. Try again in a moment, and tell the operator if it persists."
	}
	d.Link = Link{}
	h.render(w, r, e.Code.HTTPStatus(), d)
}

func (h *handler) acceptInvite(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	token := r.PathValue("token")
	d := pageData{Title: "Set your password", Page: "invite", MinPassword: h.MinPasswordLength}
	ok := formTokenOK(r)
	d.CSRF = h.formToken(w, r)
	link, err := h.Accounts.Link(r.Context(), token)
	if err != nil {
		h.linkError(w, r, d, err)
		return
	}
	d.Link = link
	if !ok {
		d.Error = "The form expired or came from another site. Enter your password again."
		h.render(w, r, http.StatusForbidden, d)
		return
	}
	pw := r.PostFormValue("password")
	if pw != r.PostFormValue("confirm") {
		d.Error, d.ErrorField = "The two passwords differ. Type the same password in both fields.", "confirm"
		h.render(w, r, http.StatusBadRequest, d)
		return
	}
	session, err := h.Accounts.UseLink(r.Context(), token, pw)
	if err != nil {
		e := switchboard.AsError(err)
		if e.Code == switchboard.CodeInvalid {
			d.Error, d.ErrorField = "The password "+e.Message+".", e.Field
			h.render(w, r, http.StatusBadRequest, d)
			return
		}
		h.linkError(w, r, d, err)
		return
	}
	h.setSession(w, session)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
