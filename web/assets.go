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
// costs neither.
func loadAssets(fsys fs.FS) (assets, error) {
	out := assets{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		sum := sha256.Sum256(body)
		a := &asset{body: body, hash: hex.EncodeToString(sum[:])[:16], contentType: mime.TypeByExtension(path.Ext(name))}
		if a.contentType == "" {
			a.contentType = http.DetectContentType(body)
		}
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err != nil {
			return fmt.Errorf("gzip %s: %w", name, err)
		}
		if _, err := zw.Write(body); err != nil {
			return fmt.Errorf("gzip %s: %w", name, err)
		}
		if err := zw.Close(); err != nil {
			return fmt.Errorf("gzip %s: %w", name, err)
		}
		if buf.Len() < len(body) {
			a.gz = buf.Bytes()
		}
		out[name] = a
		return nil
	})
	return out, err
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
