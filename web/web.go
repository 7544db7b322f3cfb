// Package web serves Switchboard's builder UI, embedded in the binary: pages rendered
// by html/template, each a shell that a small plain-JavaScript file fills from the REST
// API with the browser's session cookie. The package itself handles only what happens
// before and around a session: signing in and out, and one-time invitation links.
//
// Start from [Handler], built from [Options].
package web

import (
	"context"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/httpx"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Accounts is what the pages need of the user store: passwords, sessions and links.
type Accounts interface {
	// SignIn checks the email and password in the tenant the slug names and returns a
	// new session token.
	SignIn(ctx context.Context, tenantSlug, email, password string) (string, error)
	// SignOut ends the session.
	SignOut(ctx context.Context, sessionToken string) error
	// Session returns who a session token stands for.
	Session(ctx context.Context, sessionToken string) (switchboard.Principal, error)
	// CSRFToken is the anti-forgery token of a session.
	CSRFToken(sessionToken string) string
	// Email is the signed-in person's email, which the pages' header shows.
	Email(ctx context.Context, p switchboard.Principal) (string, error)
	// Link returns what a one-time invitation or password link is for.
	Link(ctx context.Context, linkToken string) (Link, error)
	// UseLink sets the password the link is for and returns a new session token.
	UseLink(ctx context.Context, linkToken, password string) (string, error)
}

// SignInMethods says how a workspace signs in: with single sign-on (its identity
// provider, started at /signin/sso), with a password, or both.
type SignInMethods interface {
	SignInMethods(ctx context.Context, tenantSlug string) (sso, passwords bool, err error)
}

// Link is what a one-time link is for.
type Link struct {
	TenantSlug string
	TenantName string
	Email      string
	NewUser    bool // an invitation to join, rather than a new password
}

// Options describe the deployment the pages talk about and the store they sign in with.
type Options struct {
	// PublicURL is where people reach this deployment, without a trailing slash.
	PublicURL string
	// DefaultTenant is the slug of the tenant created on first start; the sign-in form
	// suggests it.
	DefaultTenant string
	// Version is the running build's version.
	Version  string
	Accounts Accounts
	// SessionLifetime is how long a session cookie lasts (the store's session lifetime).
	SessionLifetime time.Duration
	// MinPasswordLength is the store's shortest password, for the form's hint.
	MinPasswordLength int
	// SSO says which workspaces sign in with single sign-on, for the sign-in page's
	// button (identity.Server); nil: passwords only.
	SSO SignInMethods
	// Approvals serves the approval pages of runs that wait for a person's
	// confirmation, and the list of them in Activity; nil leaves both out.
	Approvals Approvals
	// Connect serves the connect links tool calls give their people; nil leaves
	// them out.
	Connect ConnectLinks
	Logger  *slog.Logger
}

// appPageSpec is a page behind sign-in: path pattern, template and title.
type appPageSpec struct {
	pattern, name, title string
}

// allPages are the pages behind sign-in, the workflow pages (workflows.go) included.
func allPages() []appPageSpec {
	return append(append([]appPageSpec(nil), appPages...), workflowPages...)
}

// The pages behind sign-in: path pattern, template and title.
var appPages = []appPageSpec{
	{"GET /{$}", "integrations", "Integrations"},
	{"GET /overview", "overview", "Overview"},
	{"GET /agents", "agents", "Agents"},
	{"GET /agents/new", "agent", "New agent"},
	{"GET /agents/{id}", "agent", "Agent"},
	{"GET /tools/{tool}", "tool", "Try a tool"},
	{"GET /activity", "activity", "Activity"},
	{"GET /settings", "settings", "Settings"},
}

type handler struct {
	Options
	log    *slog.Logger
	pages  map[string]*template.Template
	secure bool // cookies are Secure: the public URL is https
	assets assets
}

// Handler serves the UI: the static files, the sign-in, sign-out and invitation
// pages, and the application pages, which need a session.
func Handler(o Options) (http.Handler, error) {
	if o.Accounts == nil {
		return nil, fmt.Errorf("web: no accounts store")
	}
	h := &handler{Options: o, log: o.Logger, pages: map[string]*template.Template{}}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.SessionLifetime <= 0 {
		h.SessionLifetime = 12 * time.Hour
	}
	if h.MinPasswordLength <= 0 {
		h.MinPasswordLength = 10
	}
	h.PublicURL = strings.TrimRight(o.PublicURL, "/")
	h.secure = strings.HasPrefix(h.PublicURL, "https://")
	names := []string{"signin", "invite", "approval", "notfound"}
	for _, p := range allPages() {
		names = append(names, p.name)
	}
	for _, name := range names {
		if _, ok := h.pages[name]; ok {
			continue
		}
		files := []string{"templates/layout.html", "templates/" + name + ".html"}
		if name == "settings" {
			files = append(files, "templates/sso.html") // its single sign-on section
		}
		t, err := template.New("layout.html").ParseFS(templateFS, files...)
		if err != nil {
			return nil, fmt.Errorf("parse web template %s: %w", name, err)
		}
		h.pages[name] = t
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, fmt.Errorf("static files: %w", err)
	}
	if h.assets, err = loadAssets(static); err != nil {
		return nil, fmt.Errorf("static files: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.StripPrefix("/static", h.assets))
	mux.HandleFunc("GET /signin", h.signInPage)
	mux.HandleFunc("POST /signin", h.signIn)
	mux.HandleFunc("POST /signout", h.signOut)
	mux.HandleFunc("GET /invite/{token}", h.invitePage)
	mux.HandleFunc("POST /invite/{token}", h.acceptInvite)
	if h.Approvals != nil {
		mux.HandleFunc("GET /approvals/{id}", h.approvalPage)
		mux.HandleFunc("POST /approvals/{id}", h.answerApproval)
	}
	for _, p := range allPages() {
		mux.HandleFunc(p.pattern, h.appPage(p.name, p.title))
	}
	if h.Connect != nil {
		mux.HandleFunc("GET /connect/{secret}", h.connectLink)
	}
	mux.HandleFunc("GET /", h.notFound)
	return mux, nil
}

// pageData is what every template renders from.
type pageData struct {
	Title     string
	Page      string
	PublicURL string
	Version   string
	CSRF      string
	Principal switchboard.Principal
	SignedIn  bool
	// Param is the page's path parameter: the agent ID or the tool name.
	Param string
	// Approval is the confirmation an approval page shows.
	Approval *Approval
	// Pending are the confirmations waiting for the signed-in person (Activity).
	Pending []Approval
	// StyleURL and ScriptURL link the stylesheet and the script by content hash;
	// PageScriptURL a script of the page's own, loaded after app.js, when it has one;
	// SSOScriptURL the script of Settings' single sign-on section.
	StyleURL, ScriptURL, PageScriptURL, SSOScriptURL string
	// IconURL links the favicon by content hash.
	IconURL string
	// TenantMCPURL is the signed-in tenant's MCP URL.
	TenantMCPURL string
	// UserEmail is the signed-in person's email, shown in the header.
	UserEmail string
	// Form pages.
	Error         string
	ErrorField    string
	Next          string
	Tenant        string
	Email         string
	Link          Link
	MinPassword   int
	DefaultTenant string
	// Single sign-on on the sign-in page: SSOURL starts it for Tenant (empty when
	// Tenant has none), PasswordsOff hides the password form, SSOFinder offers to look
	// a workspace's single sign-on up.
	SSOURL       string
	PasswordsOff bool
	SSOFinder    bool
	// SSOLink offers Settings' form that links the signed-in person's account to the
	// workspace's identity provider.
	SSOLink bool
}

// render writes a page with the headers every page carries.
func (h *handler) render(w http.ResponseWriter, r *http.Request, status int, d pageData) {
	d.PublicURL = h.PublicURL
	d.Version = h.Version
	d.StyleURL, d.ScriptURL, d.SSOScriptURL, d.IconURL = h.assets.URL("style.css"), h.assets.URL("app.js"), h.assets.URL("sso.js"), h.assets.URL("favicon.svg")
	if js, ok := pageScripts[d.Page]; ok && d.SignedIn {
		d.PageScriptURL = h.assets.URL(js)
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	var buf strings.Builder
	if err := h.pages[d.Page].Execute(&buf, d); err != nil {
		h.log.ErrorContext(r.Context(), "render page", "page", d.Page, "err", err)
		http.Error(w, "the page could not be rendered; reload it, and tell the operator if it persists", http.StatusInternalServerError)
		return
	}
	body := []byte(buf.String())
	hdr.Add("Vary", "Accept-Encoding")
	if len(body) >= pageGzipMin && httpx.AcceptsGzip(r.Header.Get("Accept-Encoding")) {
		if gz, err := gzipPage(body, d.CSRF); err == nil {
			body = gz
			hdr.Set("Content-Encoding", "gzip")
		} else {
			h.log.ErrorContext(r.Context(), "gzip page", "page", d.Page, "err", err)
		}
	}
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// email is the signed-in person's email for the header; a failure to read it leaves
// the header without it rather than failing the page.
func (h *handler) email(r *http.Request, p switchboard.Principal) string {
	e, err := h.Accounts.Email(r.Context(), p)
	if err != nil {
		h.log.WarnContext(r.Context(), "read the signed-in person's email", "err", err)
	}
	return e
}

// notFound is the page for an address the UI does not have: a 404 in the layout, with
// the way back (the navigation when signed in, sign-in otherwise).
func (h *handler) notFound(w http.ResponseWriter, r *http.Request) {
	d := pageData{Title: "Page not found", Page: "notfound", Param: r.URL.Path}
	if token, p, ok := h.session(r); ok {
		d.CSRF, d.Principal, d.SignedIn, d.UserEmail = h.Accounts.CSRFToken(token), p, true, h.email(r, p)
	}
	h.render(w, r, http.StatusNotFound, d)
}

// linkable says whether the signed-in person may link their account to the
// workspace's identity provider: the workspace has single sign-on and passwords (the
// link starts with the person's password).
func (h *handler) linkable(r *http.Request, p switchboard.Principal) bool {
	if h.SSO == nil {
		return false
	}
	sso, passwords, err := h.SSO.SignInMethods(r.Context(), p.TenantSlug)
	if err != nil {
		h.log.ErrorContext(r.Context(), "read sign-in methods", "tenant", p.TenantID, "err", err)
		return false
	}
	return sso && passwords
}

// appPage serves a page behind sign-in; without a session it sends the browser to the
// sign-in page, which brings it back here, query included (Activity's filters, say).
func (h *handler) appPage(name, title string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token, p, ok := h.session(r)
		if !ok {
			http.Redirect(w, r, "/signin?next="+urlQueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		d := pageData{
			Title: title, Page: name, CSRF: h.Accounts.CSRFToken(token), Principal: p, SignedIn: true,
			TenantMCPURL: h.PublicURL + "/mcp/" + p.TenantSlug, UserEmail: h.email(r, p),
		}
		switch name {
		case "workflow", "workflow_run":
			d.Param = workflowParam(name, r)
		case "agent":
			d.Param = r.PathValue("id")
		case "tool":
			d.Param = r.PathValue("tool")
		case "settings":
			d.SSOLink = h.linkable(r, p)
		case "activity":
			if h.Approvals != nil {
				pending, err := h.Approvals.Pending(r.Context(), p)
				if err != nil {
					h.log.ErrorContext(r.Context(), "list pending approvals", "err", err)
				}
				d.Pending = pending
			}
		}
		h.render(w, r, http.StatusOK, d)
	}
}
