package web_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStaticAssetsCompressedAndCached checks that the stylesheet and script are served
// gzip-encoded to clients that accept it (and plain to others), linked by content
// hash so the current version is cached as immutable, and revalidated with an ETag
// that answers 304 Not Modified.
func TestStaticAssetsCompressedAndCached(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, "https://hub.example.com")
	_, page := do(t, client(nil), http.MethodGet, srv.URL+"/signin", nil)
	m := regexp.MustCompile(`href="(/static/style\.css\?v=([0-9a-f]{16}))"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the sign-in page links no hashed stylesheet:\n%s", page)
	}
	hashed, hash := m[1], m[2]
	raw := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func(t *testing.T, path string, header map[string]string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := raw.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, b
	}
	_, plainCSS := get(t, "/static/style.css", nil)
	if !bytes.Contains(plainCSS, []byte("--accent")) {
		t.Fatalf("the plain stylesheet is %q", plainCSS)
	}

	type answer struct {
		Status                                                int
		Encoding, ETag, CacheControl, Vary, ContentType, Body string
	}
	tests := []struct {
		name   string
		path   string
		header map[string]string
		want   answer
	}{
		{name: "gzip, current version", path: hashed, header: map[string]string{"Accept-Encoding": "gzip, deflate, br"},
			want: answer{Status: 200, Encoding: "gzip", ETag: `"` + hash + `-gz"`, CacheControl: "public, max-age=31536000, immutable", Vary: "Accept-Encoding", ContentType: "text/css; charset=utf-8", Body: "plain"}},
		{name: "no gzip asked", path: hashed,
			want: answer{Status: 200, ETag: `"` + hash + `"`, CacheControl: "public, max-age=31536000, immutable", Vary: "Accept-Encoding", ContentType: "text/css; charset=utf-8", Body: "plain"}},
		{name: "gzip refused with q=0", path: hashed, header: map[string]string{"Accept-Encoding": "gzip;q=0, identity"},
			want: answer{Status: 200, ETag: `"` + hash + `"`, CacheControl: "public, max-age=31536000, immutable", Vary: "Accept-Encoding", ContentType: "text/css; charset=utf-8", Body: "plain"}},
		{name: "unversioned URL is revalidated", path: "/static/style.css", header: map[string]string{"Accept-Encoding": "gzip"},
			want: answer{Status: 200, Encoding: "gzip", ETag: `"` + hash + `-gz"`, CacheControl: "no-cache", Vary: "Accept-Encoding", ContentType: "text/css; charset=utf-8", Body: "plain"}},
		{name: "an old version is revalidated", path: "/static/style.css?v=0000000000000000",
			want: answer{Status: 200, ETag: `"` + hash + `"`, CacheControl: "no-cache", Vary: "Accept-Encoding", ContentType: "text/css; charset=utf-8", Body: "plain"}},
		{name: "matching ETag", path: "/static/style.css", header: map[string]string{"Accept-Encoding": "gzip", "If-None-Match": `"` + hash + `-gz"`},
			want: answer{Status: 304, Encoding: "gzip", ETag: `"` + hash + `-gz"`, CacheControl: "no-cache", Vary: "Accept-Encoding"}},
		{name: "matching ETag of the other encoding", path: "/static/style.css", header: map[string]string{"If-None-Match": `W/"` + hash + `-gz"`},
			want: answer{Status: 304, ETag: `"` + hash + `"`, CacheControl: "no-cache", Vary: "Accept-Encoding"}},
		{name: "stale ETag", path: "/static/style.css", header: map[string]string{"If-None-Match": `"0000000000000000"`},
			want: answer{Status: 200, ETag: `"` + hash + `"`, CacheControl: "no-cache", Vary: "Accept-Encoding", ContentType: "text/css; charset=utf-8", Body: "plain"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, b := get(t, tt.path, tt.header)
			got := answer{Status: res.StatusCode, Encoding: res.Header.Get("Content-Encoding"), ETag: res.Header.Get("ETag"),
				CacheControl: res.Header.Get("Cache-Control"), Vary: res.Header.Get("Vary"), ContentType: res.Header.Get("Content-Type")}
			body := b
			if got.Encoding == "gzip" && len(b) > 0 {
				if len(b) >= len(plainCSS) {
					t.Errorf("the gzip body is %d bytes, the plain one %d", len(b), len(plainCSS))
				}
				zr, err := gzip.NewReader(bytes.NewReader(b))
				if err != nil {
					t.Fatalf("the gzip body does not decode: %v", err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			switch {
			case len(body) == 0:
			case bytes.Equal(body, plainCSS):
				got.Body = "plain"
			default:
				got.Body = strings.TrimSpace(string(body[:min(len(body), 80)]))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("GET %s (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}
