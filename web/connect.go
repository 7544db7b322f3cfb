package web

import (
	"context"
	"html/template"
	"net/http"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
)

// ConnectLinks starts the OAuth flow of a connect link a tool call gave its person
// (connections.Service.StartConnectLink): only for the person it was made for, once.
type ConnectLinks interface {
	StartConnectLink(ctx context.Context, p switchboard.Principal, secret string) (connections.Authorization, error)
}

// connectLink sends the signed-in person on to the provider to connect the account a
// tool call asked for; a person not signed in signs in first and comes back.
func (h *handler) connectLink(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer") // the URL holds the link's secret
	_, p, ok := h.session(r)
	if !ok {
		http.Redirect(w, r, "/signin?next="+urlQueryEscape(r.URL.Path), http.StatusSeeOther)
		return
	}
	a, err := h.Connect.StartConnectLink(r.Context(), p, r.PathValue("secret"))
	if err != nil {
		e := switchboard.AsError(err)
		msg := e.Message
		switch e.Code {
		case switchboard.CodeInternal:
			h.log.ErrorContext(r.Context(), "connect link", "err", err)
			msg = "The link could not be read. Try again in a moment, and tell the operator if it persists."
		case switchboard.CodeNotFound:
			msg = "There is no such connect link: ask the agent to call the tool again for a new one."
		case switchboard.CodeInvalid:
			if e.Field != "" {
				msg = e.Field + " " + msg
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", connectCSP)
		w.WriteHeader(e.Code.HTTPStatus())
		if err := connectFailedPage.Execute(w, map[string]string{"Message": msg, "Back": h.PublicURL + "/#connections"}); err != nil {
			h.log.ErrorContext(r.Context(), "render connect page", "err", err)
		}
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: a.CookieName, Value: a.CookieValue, Path: a.CookiePath, Expires: a.ExpiresAt,
		MaxAge: int(time.Until(a.ExpiresAt).Seconds()), HttpOnly: true, Secure: a.CookieSecure, SameSite: http.SameSiteLaxMode,
	})
	http.Redirect(w, r, a.URL, http.StatusSeeOther)
}

// connectCSP lets the page load the UI's stylesheet, and nothing else.
const connectCSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// connectFailedPage says why a connect link cannot be used.
var connectFailedPage = template.Must(template.New("connect").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Not connected · Switchboard</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/static/style.css"></head>
<body>
<header class="top"><a class="brand" href="{{.Back}}">Switchboard</a></header>
<main id="main" class="narrow">
<h1>Not connected</h1>
<p class="error" id="connect-error">{{.Message}} Nothing was connected.</p>
<p><a href="{{.Back}}" class="button">Back to Switchboard</a></p>
</main>
</body></html>
`))
