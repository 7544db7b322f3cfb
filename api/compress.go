package api

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard/internal/httpx"
)

// gzipMin is the smallest answer worth compressing.
const gzipMin = 1024

// bufferedWriter holds a GET answer until its handler is done, so compressJSON can
// decide on its encoding (and its ETag) with the whole body in hand.
type bufferedWriter struct {
	gin.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *bufferedWriter) WriteHeader(code int)               { w.status = code }
func (w *bufferedWriter) WriteHeaderNow()                    {}
func (w *bufferedWriter) Write(b []byte) (int, error)        { return w.body.Write(b) }
func (w *bufferedWriter) WriteString(s string) (int, error)  { return w.body.WriteString(s) }
func (w *bufferedWriter) Status() int                        { return w.status }
func (w *bufferedWriter) Written() bool                      { return w.body.Len() > 0 }
func (w *bufferedWriter) Size() int                          { return w.body.Len() }
func (w *bufferedWriter) Flush()                             {}
func (w *bufferedWriter) WriteHeaderStatus(code int) (n int) { w.status = code; return 0 }

// compressJSON finishes the JSON answers of GET requests: each carries an ETag of its
// body, so a browser's repeat request (fetch revalidates, Cache-Control no-cache) is
// answered 304 with no body when nothing changed; and a body of 1 KB or more goes
// gzip-compressed to clients that accept it. The catalogs the pages load (about 325 KB
// of JSON) are what this is for.
func compressJSON(c *gin.Context) {
	if c.Request.Method != http.MethodGet {
		c.Next()
		return
	}
	orig := c.Writer
	w := &bufferedWriter{ResponseWriter: orig, status: http.StatusOK}
	c.Writer = w
	c.Next()
	c.Writer = orig
	h := orig.Header()
	body := w.body.Bytes()
	if w.status == http.StatusOK && strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		sum := sha256.Sum256(body)
		etag := `"` + hex.EncodeToString(sum[:16]) + `"`
		h.Set("ETag", etag)
		if h.Get("Cache-Control") == "" {
			h.Set("Cache-Control", "private, no-cache")
		}
		h.Add("Vary", "Accept-Encoding")
		if inm := c.GetHeader("If-None-Match"); inm != "" && strings.Contains(inm, etag) {
			h.Del("Content-Type")
			orig.WriteHeader(http.StatusNotModified)
			orig.WriteHeaderNow()
			return
		}
		if len(body) >= gzipMin && httpx.AcceptsGzip(c.GetHeader("Accept-Encoding")) {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			if _, err := zw.Write(body); err == nil && zw.Close() == nil {
				body = buf.Bytes()
				h.Set("Content-Encoding", "gzip")
			}
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	orig.WriteHeader(w.status)
	_, _ = orig.Write(body)
}
