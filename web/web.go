// Package web serves Switchboard's browser pages, embedded in the binary: for now one
// page that says what this server is, where its MCP and REST endpoints are, and how to
// connect a first account.
package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options describe the deployment the pages talk about. None of it is secret.
type Options struct {
	// PublicURL is where people reach this deployment, without a trailing slash.
	PublicURL string
	// DefaultTenant is the slug of the tenant created on first start.
	DefaultTenant string
	// Version is the running build's version.
	Version string
}

// page is what the index template renders.
type page struct {
	PublicURL        string
	MCPURLPattern    string
	DefaultTenantURL string
	DefaultTenant    string
	APIURL           string
	Version          string
}

// Handler serves GET / and the static files under /static/.
func Handler(o Options) (http.Handler, error) {
	tmpl, err := template.ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("parse web templates: %w", err)
	}
	base := strings.TrimRight(o.PublicURL, "/")
	p := page{
		PublicURL:     base,
		MCPURLPattern: base + "/mcp/{tenant}",
		DefaultTenant: o.DefaultTenant,
		APIURL:        base + "/api",
		Version:       o.Version,
	}
	if o.DefaultTenant != "" {
		p.DefaultTenantURL = base + "/mcp/" + o.DefaultTenant
	}
	// The page holds nothing per request or per user, so it is rendered once.
	var index bytes.Buffer
	if err := tmpl.ExecuteTemplate(&index, "index.html", p); err != nil {
		return nil, fmt.Errorf("render index page: %w", err)
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, fmt.Errorf("static files: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	body := index.Bytes()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
	return mux, nil
}
