package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"regexp"
	"strings"

	"github.com/switchboard-hub/switchboard/internal/httpx"
)

// asset is one static file as served: its bytes, its gzip encoding when that is
// smaller, and its content hash, computed once when the handler is built.
type asset struct {
	body        []byte
	gz          []byte // nil when gzip does not make it smaller
	hash        string // the first 16 hex digits of the body's SHA-256
	contentType string
}

// assets are the embedded static files by name ("app.js").
type assets map[string]*asset

// loadAssets reads every file of fsys, hashes it and compresses it once, so a request
// costs neither. A stylesheet's url(...) references to other files of fsys are
// rewritten to their content-hashed URLs first (logos/github.svg becomes
// logos/github.svg?v=hash), so they too are cached as immutable and a warm page load
// revalidates none of them.
func loadAssets(fsys fs.FS) (assets, error) {
	out := assets{}
	var sheets []string
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if path.Ext(name) == ".css" {
			sheets = append(sheets, name) // once every file it may name is hashed
			return nil
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		out[name], err = newAsset(name, body)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, name := range sheets {
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		if out[name], err = newAsset(name, out.versionURLs(name, body)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cssURL is a quoted url("...") reference of a stylesheet.
var cssURL = regexp.MustCompile(`url\("([^"?#:]+)"\)`)

// versionURLs rewrites the relative url("...") references of the stylesheet sheet that
// name a file of as to carry its hash.
func (as assets) versionURLs(sheet string, body []byte) []byte {
	return cssURL.ReplaceAllFunc(body, func(ref []byte) []byte {
		rel := string(cssURL.FindSubmatch(ref)[1])
		if a, ok := as[path.Join(path.Dir(sheet), rel)]; ok {
			return []byte(`url("` + rel + `?v=` + a.hash + `")`)
		}
		return ref
	})
}

// newAsset hashes body and compresses it when that makes it smaller.
func newAsset(name string, body []byte) (*asset, error) {
	sum := sha256.Sum256(body)
	a := &asset{body: body, hash: hex.EncodeToString(sum[:])[:16], contentType: mime.TypeByExtension(path.Ext(name))}
	if a.contentType == "" {
		a.contentType = http.DetectContentType(body)
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("gzip %s: %w", name, err)
	}
	if _, err := zw.Write(body); err != nil {
		return nil, fmt.Errorf("gzip %s: %w", name, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("gzip %s: %w", name, err)
	}
	if buf.Len() < len(body) {
		a.gz = buf.Bytes()
	}
	return a, nil
}

// URL is the address pages link name by: /static/name?v=hash, which changes whenever
// the file does, so the browser may keep it for good.
func (as assets) URL(name string) string {
	if a, ok := as[name]; ok {
		return "/static/" + name + "?v=" + a.hash
	}
	return "/static/" + name
}

// ServeHTTP serves a static file (the request's path is its name). A request for the
// current version (?v=hash, as URL links it) may be cached for a year as immutable;
// any other must be revalidated, and is answered 304 when its ETag still matches.
// Clients that accept gzip get the precomputed gzip encoding.
func (as assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a, ok := as[strings.TrimPrefix(r.URL.Path, "/")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Vary", "Accept-Encoding")
	if r.URL.Query().Get("v") == a.hash {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	body, etag := a.body, `"`+a.hash+`"`
	if a.gz != nil && httpx.AcceptsGzip(r.Header.Get("Accept-Encoding")) {
		body, etag = a.gz, `"`+a.hash+`-gz"`
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", etag)
	if etagMatches(r.Header.Get("If-None-Match"), a.hash) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", a.contentType)
	h.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// etagMatches reports whether If-None-Match names either encoding of the file with
// hash (weak comparison, as RFC 9110 asks for If-None-Match), or is "*".
func etagMatches(header, hash string) bool {
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == "*" || tag == `"`+hash+`"` || tag == `"`+hash+`-gz"` {
			return true
		}
	}
	return false
}
